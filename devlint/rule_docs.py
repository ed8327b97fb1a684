"""Where a rule's documentation lives and what it says, for every front end.

The text comes from the rule itself (its docstring, the ruff-style sections
``## What it does`` …) and its example programs (``devlint.rule_examples``: a
checkout's ``rules/``, a wheel's ``devlint/_rules``), as
``scripts/generate_docs.py`` writes it to ``docs/rules/<CODE>.md`` with the
harness's evidence added; a checkout's generated page is shown as it is.
Links use one URL scheme, ``DEFAULT_DOCS_URL``, overridable by the
``DEVLINT_DOCS_URL`` environment variable (and, in the editor, by the LSP
initialization option ``docsUrl``): a template with
``{code}`` in it, or a base to which ``/<CODE>.md`` is appended.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

from devlint.notices import NOTICE_SUMMARIES
from devlint.rule import Rule
from devlint.rule_examples import example_dir
from devlint.rules import rule_by_code

DEFAULT_DOCS_URL = "https://github.com/devlint/devlint/blob/main/docs/rules/{code}.md"
DOCS_URL_ENV = "DEVLINT_DOCS_URL"
USAGE_URL = "https://github.com/devlint/devlint/blob/main/docs/usage.md"
NOTICES_URL = f"{USAGE_URL}#files-devlint-cannot-analyse"

_DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"
_SECTION = re.compile(r"^## +(?P<title>.+?)\s*$", re.M)


def docs_url(code: str, template: str | None = None) -> str:
    """The page documenting ``code``: a rule's page, or the notices' section of the usage docs."""
    if code in NOTICE_SUMMARIES:
        return NOTICES_URL
    template = template or os.environ.get(DOCS_URL_ENV) or DEFAULT_DOCS_URL
    if "{code}" in template:
        return template.replace("{code}", code)
    return f"{template.rstrip('/')}/{code}.md"


def rule_text(rule: type[Rule]) -> str:
    """The rule's docstring, dedented: its ``## What it does`` … sections."""
    return inspect.cleandoc(rule.__doc__ or "")


def rule_sections(rule: type[Rule]) -> dict[str, str]:
    """The docstring's sections by title (``"What it does"`` → its text)."""
    text = rule_text(rule)
    matches = list(_SECTION.finditer(text))
    sections = {}
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        end = following.start() if following else len(text)
        sections[match.group("title")] = " ".join(text[match.end() : end].split())
    return sections


def rule_page(code: str) -> str | None:
    """The Markdown documentation of ``code`` (a rule or a notice), or None if unknown.

    A checkout's generated ``docs/rules/<CODE>.md`` wins; an installed package
    builds the same page (its examples from the wheel's copy), less the harness's
    evidence, which lives in the repository: the page links to it.
    """
    code = code.upper()
    if code in NOTICE_SUMMARIES:
        return (
            f"# {code}\n\n{NOTICE_SUMMARIES[code][0].upper()}{NOTICE_SUMMARIES[code][1:]}.\n\n"
            "A notice, not a rule: why devlint could not analyse or fix the file."
            f" See {NOTICES_URL}\n"
        )
    rule = rule_by_code(code)
    if rule is None:
        return None
    generated = _DOCS_DIR / f"{code}.md"
    if generated.is_file():
        return generated.read_text(encoding="utf-8")
    more = f"More, with what the examples did when `devlint confirm` ran them: {docs_url(code)}"
    return "\n".join([*page_lines(rule), more, ""])


def page_lines(rule: type[Rule]) -> list[str]:
    """A rule's page but for its evidence: metadata, docstring sections, and its bad and
    good example programs (a section whose program is missing is left out)."""
    meta = rule.meta
    expectation = meta.runtime
    if expectation.exception:
        runtime = f"`{expectation.exception}` containing “{expectation.message}”"
    else:
        runtime = expectation.symptom or "not declared"
    lines = [*rule_header(rule), f"- On a GPU, `bad.py` shows: {runtime}", "", rule_text(rule), ""]
    folder = example_dir(rule)
    for title, name in (("Example", "bad.py"), ("Use instead", "good.py")):
        try:
            code = (folder / name).read_text(encoding="utf-8").rstrip()
        except OSError:  # an install without the examples: the page without them
            continue
        lines += [
            f"## {title}",
            "",
            f"`rules/{folder.name}/{name}`:",
            "",
            "```python",
            code,
            "```",
            "",
        ]
    return lines


def rule_header(rule: type[Rule]) -> list[str]:
    """The title and metadata lines every rule page starts with."""
    meta = rule.meta
    return [
        f"# {meta.code} {meta.name}",
        "",
        f"{meta.summary[0].upper()}{meta.summary[1:]}.",
        "",
        f"- Severity: {meta.severity.value}",
        f"- Automatic fix: {'yes' if meta.fixable else 'no'}",
        f"- Enabled by default: {'yes' if meta.default_enabled else 'no'}",
    ]
