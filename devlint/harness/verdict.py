"""Did an example behave as its rule says? The protocol, in one place.

- ``bad.py`` of a rule that declares an exception must exit non-zero with that
  exception type and a message containing the declared fragment.
- ``bad.py`` of a rule that declares a ``symptom`` must show it: the symptom
  text (case-insensitive) appears in the ``AssertionError`` that ends the
  program, in a line it prints starting with ``DEVLINT-SYMPTOM:``, or in a
  measurement the harness took (see ``observe.CREATED_THEN_MOVED``). A symptom
  starting with ``none`` declares a recommendation: ``bad.py`` must run cleanly.
- ``good.py`` and ``fixed.py`` must exit 0 without showing the symptom.

See docs/writing-a-rule.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from devlint.harness.runner import Result
from devlint.rule import RuntimeExpectation

SYMPTOM_LINE = "DEVLINT-SYMPTOM:"
_LAST_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)$", re.M)


class Outcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    SKIP = "skip"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    observed: str
    """What happened, in one line: ``RuntimeError: Expected all tensors …``, ``exit 0``."""


def expected(expectation: RuntimeExpectation, example: str) -> str:
    """What the protocol requires of ``example``, in one line."""
    if example != "bad.py":
        return "exit 0"
    if expectation.exception:
        return f"{expectation.exception}: …{expectation.message}…"
    if is_recommendation(expectation):
        return "exit 0 (a recommendation)"
    return f"symptom: {expectation.symptom}"


def is_recommendation(expectation: RuntimeExpectation) -> bool:
    return bool(expectation.symptom) and expectation.symptom.lower().startswith("none")


def judge(expectation: RuntimeExpectation, example: str, result: Result) -> Verdict:
    if result.timed_out:
        return Verdict(Outcome.TIMEOUT, f"killed after {result.seconds:.0f} s")
    kind, message = exception_of(result)
    observed = f"{kind}: {first_line(message)}" if kind else f"exit {result.exit_status}"
    shown = symptoms_shown(result)
    if example != "bad.py" or is_recommendation(expectation):
        clean = result.exit_status == 0 and not _shows(expectation, shown)
        return Verdict(Outcome.PASS if clean else Outcome.FAIL, observed)
    if expectation.exception:
        fragment = expectation.message or ""
        passed = (
            result.exit_status != 0
            and kind.rsplit(".", 1)[-1] == expectation.exception
            and fragment in message
        )
        if passed and fragment not in first_line(message):
            observed += " … " + first_line(next(x for x in message.splitlines() if fragment in x))
        return Verdict(Outcome.PASS if passed else Outcome.FAIL, observed)
    matching = [line for line in shown if _shows(expectation, [line])]
    if matching:
        return Verdict(Outcome.PASS, f"symptom: {first_line(matching[0])}")
    return Verdict(Outcome.FAIL, observed)


def exception_of(result: Result) -> tuple[str, str]:
    """The exception that ended the run (from its reports, else its stderr), or ``("", "")``."""
    exception = result.report.exception
    if exception:
        return str(exception["type"]), str(exception["message"])
    if result.exit_status in (0, None):
        return "", ""
    found = list(_LAST_EXCEPTION.finditer(result.stderr))
    if not found:
        return "", ""
    return found[-1]["type"], found[-1]["message"]


def symptoms_shown(result: Result) -> list[str]:
    """Everything that counts as showing a symptom."""
    shown = list(result.report.symptoms)
    kind, message = exception_of(result)
    if kind.endswith("AssertionError"):
        shown.append(message)
    for line in (result.stdout + "\n" + result.stderr).splitlines():
        if line.startswith(SYMPTOM_LINE):
            shown.append(line[len(SYMPTOM_LINE) :].strip())
    return shown


def _shows(expectation: RuntimeExpectation, shown: list[str]) -> bool:
    symptom = (expectation.symptom or "").lower()
    if not symptom or symptom.startswith("none"):
        return False
    return any(symptom in line.lower() for line in shown)


def first_line(text: str, limit: int = 240) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
