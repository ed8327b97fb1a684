"""Write the files of a new rule, as ruff's ``add_rule`` does: its module, its examples
folder and its fixtures folder, each a template to fill in (docs/writing-a-rule.md).

    python scripts/new_rule.py DVL108 pack-padded-lengths-on-device \\
        --summary "the lengths of pack_padded_sequence are on an accelerator" \\
        --severity error [--clash]

Nothing else changes: rules are discovered, their documentation generated
(``scripts/generate_docs.py``). ``--clash`` makes a ``ClashRule`` with a claim, for
a rule that reports two devices meeting; it then needs one line in
``devlint/clash_owners.py``, which the script prints.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = re.compile(r"DVL[1-4]\d\d")
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
SEVERITIES = ("error", "warning", "info")

RULE = '''"""{code}: {summary}."""

from __future__ import annotations

from collections.abc import Iterator

from devlint.core.events import Facts
from devlint.diagnostic import Severity
from devlint.rule import Finding, Rule, RuleMeta, RuntimeExpectation


class {cls}(Rule):
    """## What it does
    Finds ... (what the code looks like; when the rule stays silent).

    ## Why is this bad?
    ... (what fails, where, with which error; on which machines).

    ## Fix safety
    ... (what the fix writes and when it may change behaviour; or why none).

    ## References
    - [...](https://pytorch.org/docs/stable/...)
    """

    meta = RuleMeta(
        code="{code}",
        name="{name}",
        summary="{summary}",
        severity=Severity.{severity},
        runtime=RuntimeExpectation(exception="RuntimeError", message="..."),
    )

    def check(self, facts: Facts) -> Iterator[Finding]:
        """Judge the events of one kind (``facts.of(EventKind)``) and yield a finding for
        each that is a bug, naming where each side came from (``rulekit.describe``)."""
        raise NotImplementedError("{code}: judge the facts the rule needs")
'''

CLASH_RULE = '''"""{code}: {summary}."""

from __future__ import annotations

from devlint.core.events import Clash, Facts, ModuleCall, OperandsMeet
from devlint.diagnostic import Severity
from devlint.rule import ClashRule, RuleMeta, RuntimeExpectation

ADVICE = "..."  # what to do, after the provenance of both sides


def claims(facts: Facts, event: OperandsMeet | ModuleCall, clash: Clash) -> bool:
    """Whether a clash is this rule's to report (``devlint/clash_owners.py`` orders claims)."""
    raise NotImplementedError("{code}: decide which clashes are this rule's")


class {cls}(ClashRule):
    """## What it does
    Finds ... (what the code looks like; when the rule stays silent).

    ## Why is this bad?
    ... (what fails, where, with which error; on which machines).

    ## Fix safety
    ... (what the fix writes and when it may change behaviour; or why none).

    ## References
    - [...](https://pytorch.org/docs/stable/...)
    """

    meta = RuleMeta(
        code="{code}",
        name="{name}",
        summary="{summary}",
        severity=Severity.{severity},
        runtime=RuntimeExpectation(exception="RuntimeError", message="on the same device"),
    )
    owns = (claims,)
    advice = ADVICE
'''

EXAMPLE = '''"""{what}

{needs}
"""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
{body}
'''

FIXTURE = '''"""{what}"""

import torch

{body}
'''


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def files(code: str, name: str, summary: str, severity: str, clash: bool) -> dict[Path, str]:
    """Each file of the new rule, relative to the repository root, with its template."""
    module = ROOT / "devlint" / "rules" / f"{code.lower()}_{name.replace('-', '_')}.py"
    examples = ROOT / "rules" / f"{code}-{name}"
    fixtures = ROOT / "fixtures" / code
    template = CLASH_RULE if clash else RULE
    fields = {
        "code": code,
        "name": name,
        "summary": summary,
        "severity": severity.upper(),
        "cls": _class_name(name),
    }
    return {
        module: template.format(**fields),
        examples / "bad.py": EXAMPLE.format(
            what="A realistic program with the bug (what it does, in two lines).",
            needs="With CUDA: the error it fails with (the rule's runtime expectation).",
            body=f"# ... the buggy line, marked:  # expect: {code}",
        ),
        examples / "good.py": EXAMPLE.format(
            what="The same program written correctly from the start.",
            needs="Runs on a GPU and on the CPU.",
            body="# ...",
        ),
        examples / "fixed.py": EXAMPLE.format(
            what="bad.py after the fix the rule offers (or the one its docs describe).",
            needs="Runs on a GPU and on the CPU.",
            body="# ...",
        ),
        fixtures / "reported_case.py": FIXTURE.format(
            what="Reported: an edge case the rule must report.",
            body=f"# ...  # expect: {code}",
        ),
        fixtures / "silent_case.py": FIXTURE.format(
            what=(
                "Silent: the same code changed by the one thing that makes it correct (its"
                "\ntwin, reported_case.py, is reported)."
            ),
            body="# ...",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="DVLnnn, not taken yet")
    parser.add_argument("name", help="kebab-case name, e.g. pack-padded-lengths-on-device")
    parser.add_argument("--summary", required=True, help="one line: what is wrong")
    parser.add_argument("--severity", choices=SEVERITIES, default="warning")
    parser.add_argument("--clash", action="store_true", help="a rule that reports clashes")
    args = parser.parse_args(argv)
    if not CODE.fullmatch(args.code):
        parser.error(f"the code must look like DVL108, got {args.code!r}")
    if not NAME.fullmatch(args.name):
        parser.error(f"the name must be kebab-case words, got {args.name!r}")
    taken = [
        path
        for path in (*(ROOT / "rules").glob(f"{args.code}-*"), ROOT / "fixtures" / args.code)
        if path.exists()
    ]
    taken += list((ROOT / "devlint" / "rules").glob(f"{args.code.lower()}_*.py"))
    if taken:
        parser.error(f"{args.code} is taken: {', '.join(str(p.relative_to(ROOT)) for p in taken)}")
    written = files(args.code, args.name, args.summary, args.severity, args.clash)
    for path, text in written.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if args.clash:
        module = next(iter(written)).stem
        print(
            f"add `{module}.claims` to CLASH_PRECEDENCE in devlint/clash_owners.py, after any "
            "more specific claim and before the generic ones"
        )
    print("next: docs/writing-a-rule.md, from step 1", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
