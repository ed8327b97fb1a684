"""The ``devlint`` command: ``check`` lints files, ``rules`` lists what it checks.

Exit status: 0 when nothing is reported, 1 when anything is (notices about
files that could not be analysed included), 2 on usage errors (and on an
internal error that is not tied to one file), 130 on Ctrl-C.
No input, however broken, produces a traceback: each file's failure becomes
a notice naming that file and the run goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from devlint import __version__
from devlint.codes import empty_selection, unknown_code
from devlint.config import ConfigError, Settings, load_settings, load_settings_file
from devlint.diagnostic import Diagnostic
from devlint.frontends.github_output import print_github
from devlint.frontends.options import add_jobs_option
from devlint.frontends.terminal import printable
from devlint.frontends.text_output import COLOR_CHOICES, print_text, rules_table
from devlint.harness.commands import add_commands as add_harness_commands
from devlint.inputs.decoding import decode_source
from devlint.inputs.result_cache import Linted, ResultCache, UnsafeCacheError, default_cache_dir
from devlint.inputs.tree_cache import TreeCache
from devlint.notebooks.reading import is_notebook
from devlint.notices import INTERNAL_ERROR, NOTICE_SUMMARIES, UNREADABLE, notice
from devlint.project.exclusions import DEFAULT_EXCLUDE, Exclusions, anchor_patterns
from devlint.project.files import Entry, MissingPathError, iter_source_files
from devlint.running import gc_thresholds
from devlint.running.fix_count import NO_FIXES, FixCount, fixable, wanted, write_refusal
from devlint.running.safe_write import OUTSIDE_ROOTS_FLAG, WritePolicy
from devlint.running.workers import guarded, lint_files, map_files
from devlint.selection import is_enabled

if TYPE_CHECKING:
    from devlint.running.fix import FixResult

STDIN = "-"


class UsageError(Exception):
    """A problem with how devlint was invoked (exit status 2)."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, but an unknown argument is quoted with its control characters escaped."""

    def error(self, message: str) -> NoReturn:
        super().error(printable(message))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``devlint`` command; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2)
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        status = args.command(args)
        sys.stdout.flush()  # inside the try: a closed pipe is reported here, not at exit
        return status
    except UsageError as error:
        print(f"devlint: error: {printable(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `devlint check . | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:  # a bug outside any one file: say so in one line
        problem = printable(f"{type(error).__name__}: {error}")
        print(f"devlint: internal error: {problem}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="devlint", description="Find PyTorch device-placement bugs by reading code."
    )
    parser.add_argument("--version", action="version", version=f"devlint {__version__}")
    commands = parser.add_subparsers(metavar="COMMAND", required=True)

    check = commands.add_parser("check", help="lint files and directories")
    check.set_defaults(command=_check)
    check.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="files or directories to lint (default: .); - reads standard input",
    )
    check.add_argument(
        "--format",
        choices=sorted(_FORMATS),
        default="text",
        help="text (default), json, sarif, or github (GitHub Actions annotations)",
    )
    check.add_argument(
        "--select",
        type=_codes,
        metavar="CODES",
        help="comma-separated codes or prefixes to report (replaces the config's)",
    )
    check.add_argument(
        "--extend-select",
        type=_codes,
        default=(),
        metavar="CODES",
        help="codes to report in addition, e.g. rules that are off by default",
    )
    check.add_argument(
        "--ignore",
        type=_codes,
        metavar="CODES",
        help="codes or prefixes not to report (replaces the config's)",
    )
    check.add_argument(
        "--extend-ignore",
        type=_codes,
        default=(),
        metavar="CODES",
        help="codes or prefixes not to report, in addition to those ignored already",
    )
    check.add_argument(
        "--exclude",
        type=_patterns,
        metavar="PATTERNS",
        help="comma-separated globs of files and directories to skip (replaces the default list)",
    )
    check.add_argument(
        "--extend-exclude",
        type=_patterns,
        default=(),
        metavar="PATTERNS",
        help="globs to skip in addition to the default list and the config's",
    )
    check.add_argument(
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        help="skip what .gitignore files ignore (default: yes)",
    )
    check.add_argument(
        "--force-exclude",
        action=argparse.BooleanOptionalAction,
        help="apply the exclusions to paths named on the command line too (pre-commit does)",
    )
    add_jobs_option(check, "worker processes")
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="lint every file, neither reading nor writing the result cache",
    )
    check.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="directory to keep the .devlint_cache folder in (default: the project root)",
    )
    check.add_argument(
        "--config",
        type=Path,
        metavar="PYPROJECT",
        help="pyproject.toml to read [tool.devlint] from, or a directory holding one"
        " (default: the nearest one that has the table)",
    )
    exit_status = check.add_mutually_exclusive_group()
    exit_status.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when problems are reported"
    )
    exit_status.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="with --fix, exit 1 when it changed a file, even if no problem is left",
    )
    check.add_argument(
        "--fix",
        action="store_true",
        help="apply safe fixes in place and report what is left (with -, print the fixed source)",
    )
    check.add_argument(
        "--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour"
    )
    check.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of applying them; exit 1 if there are any",
    )
    check.add_argument(
        "--add-noqa",
        action="store_true",
        help="add a `# noqa: CODE` comment to every line with a problem (not in notebooks)",
    )
    check.add_argument(
        OUTSIDE_ROOTS_FLAG,
        action="store_true",
        help="with --fix or --add-noqa, also write files whose real path is outside the paths"
        " given (reached through a symbolic link) and hard-linked files (edited in place, so"
        " every link changes)",
    )
    check.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="name to report for standard input (and to match per-file-ignores)",
    )
    check.add_argument(
        "--show-source",
        action="store_true",
        help="text format: show each finding's source lines with the span underlined",
    )
    check.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="text format: colour output (default: auto, on a terminal unless NO_COLOR is set)",
    )
    check.add_argument(
        "--statistics",
        action="store_true",
        help="text format: print the number of findings per code instead of the findings",
    )
    check.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the findings only: no summary line (and no count of fixes)",
    )

    rules = commands.add_parser("rules", help="list the rules")
    rules.set_defaults(command=_rules)
    rules.add_argument("--format", choices=("text", "json"), default="text")

    rule = commands.add_parser("rule", help="show a rule's documentation")
    rule.set_defaults(command=_rule)
    rule.add_argument("code", metavar="CODE", help="a rule's code, e.g. DVL101")

    lsp = commands.add_parser("lsp", help="run the language server on stdin/stdout")
    lsp.set_defaults(command=_lsp)

    add_harness_commands(commands)  # confirm, run
    return parser


def _codes(text: str) -> tuple[str, ...]:
    """Comma-separated codes; whether devlint knows them (and whether an empty list makes
    sense) is checked with the config's, so that both say the same."""
    return tuple(code.strip() for code in text.split(",") if code.strip())


def _patterns(text: str) -> tuple[str, ...]:
    """Comma-separated globs; those with a ``/`` are relative to the working directory."""
    patterns = [pattern.strip() for pattern in text.split(",") if pattern.strip()]
    return anchor_patterns(patterns, os.getcwd())


# check ----------------------------------------------------------------------


def _check(args: argparse.Namespace) -> int:
    if args.statistics and args.format != "text":
        raise UsageError("--statistics works with --format text only")
    if args.add_noqa and (args.fix or args.diff or STDIN in args.paths):
        raise UsageError("--add-noqa edits the files given: not with --fix, --diff or -")
    settings = _settings(args)
    gc_thresholds.for_whole_process()  # this process (and its forked workers) only lints
    try:
        paths = [Path(path) for path in args.paths if path != STDIN]
        entries = list(iter_source_files(paths, _exclusions(settings)))
    except MissingPathError as error:
        raise UsageError(f"{error}: no such file or directory") from None
    files = [entry.path for entry in entries if entry.skip_reason is None]
    diagnostics = [_skipped(entry) for entry in entries if entry.skip_reason is not None]
    if "devlint.project.index" in sys.modules:  # not imported here: a warm run needs no LibCST
        sys.modules["devlint.project.index"].refresh_all()  # this process linted before
    if args.fix or args.diff:
        return _fix(args, settings, files, diagnostics)
    if args.add_noqa:
        return _add_noqa(args, settings, files, diagnostics)
    results = _result_cache(args, settings)
    if results is None:
        lint = lint_file
    else:
        lint = partial(lint_file, trees=TreeCache.for_run(results, paths))
    diagnostics += lint_files(files, settings, args.jobs, results, lint)
    checked = len(entries)  # a path skipped with a notice (a folder, a FIFO) was checked too
    stdin: tuple[str, bytes] | None = None
    if STDIN in args.paths:
        stdin = (args.stdin_filename or "<stdin>", sys.stdin.buffer.read())
        diagnostics += guarded(stdin[0], partial(_lint_stdin, *stdin, settings))
        checked += 1
    diagnostics = sorted(
        (d for d in diagnostics if _notice_enabled(d, settings)),
        key=lambda d: (*d.place, d.code, d.message),
    )
    fixes = NO_FIXES
    if args.format == "text" and (args.statistics or not args.quiet):  # they show the count
        fixes = _fix_count(args, settings, files, diagnostics, stdin)
    _FORMATS[args.format](diagnostics, checked, args, fixes)
    return 1 if diagnostics and not args.exit_zero else 0


def _settings(args: argparse.Namespace) -> Settings:
    """The pyproject's settings, with the command line's codes taking precedence.

    A code that matches no rule, or a ``--select`` without codes, would turn rules off
    without a word: it is an error, as in the configuration."""
    try:
        if args.config is not None:
            settings = load_settings_file(args.config)
        else:
            settings = load_settings(_config_start(args))
    except ConfigError as error:
        raise UsageError(str(error)) from None
    for option in ("select", "extend_select", "ignore", "extend_ignore"):
        problem = unknown_code(getattr(args, option) or (), where=f"--{option.replace('_', '-')}")
        if problem is not None:
            raise UsageError(problem)
    if args.select == ():
        raise UsageError(f"--select: {empty_selection('the configured rules')}")
    if args.select is not None:
        settings = replace(settings, select=args.select)
    if args.ignore is not None:
        settings = replace(settings, ignore=args.ignore)
    if args.exclude is not None:
        settings = replace(settings, exclude=args.exclude)
    for name in ("respect_gitignore", "force_exclude"):
        if getattr(args, name) is not None:
            settings = replace(settings, **{name: getattr(args, name)})
    return replace(
        settings,
        extend_select=settings.extend_select + args.extend_select,
        extend_ignore=settings.extend_ignore + args.extend_ignore,
        extend_exclude=settings.extend_exclude + args.extend_exclude,
    )


def _exclusions(settings: Settings) -> Exclusions:
    exclude = DEFAULT_EXCLUDE if settings.exclude is None else settings.exclude
    return Exclusions(
        exclude + settings.extend_exclude,
        settings.respect_gitignore,
        settings.force_exclude,
        settings.root or os.getcwd(),
    )


def _config_start(args: argparse.Namespace) -> Path:
    """Where to look for pyproject.toml: the deepest directory holding every path."""
    places = [
        os.path.abspath((args.stdin_filename or ".") if path == STDIN else path)
        for path in args.paths
    ]
    return Path(os.path.commonpath(places))


def _skipped(entry: Entry) -> Diagnostic:
    return notice(str(entry.path), UNREADABLE, f"{entry.skip_reason} (skipped)")


def _notice_enabled(diagnostic: Diagnostic, settings: Settings) -> bool:
    """Notices are always on, unless ignored by their full code (globally or per file)."""
    if diagnostic.code not in NOTICE_SUMMARIES:
        return True
    return is_enabled(diagnostic.code, True, settings, diagnostic.path)


def _result_cache(args: argparse.Namespace, settings: Settings) -> ResultCache | None:
    if args.no_cache:
        return None
    try:
        return ResultCache.open(args.cache_dir or default_cache_dir(settings), settings)
    except UnsafeCacheError as error:
        print(printable(f"devlint: warning: not using the cache: {error}"), file=sys.stderr)
        return None


def _lint_stdin(name: str, data: bytes, settings: Settings) -> list[Diagnostic]:
    if is_notebook(name):  # --stdin-filename names a notebook
        from devlint.notebooks.linting import lint_notebook, read_or_notice

        notebook = read_or_notice(data, name)
        return (
            [notebook]
            if isinstance(notebook, Diagnostic)
            else lint_notebook(notebook, name, settings)
        )
    source, problem = decode_source(data)
    if source is None:
        return [notice(name, UNREADABLE, f"cannot decode standard input: {problem}")]
    from devlint.running.engine import lint_source

    return lint_source(source, name, settings)


def lint_file(path: Path, settings: Settings, trees: TreeCache | None = None) -> Linted:
    """``devlint.running.engine.lint_file_in_project``, imported when a file needs linting.

    Imports here are lazy for a reason: a run the cache answers whole (every
    pre-commit run on unchanged files) never needs LibCST, the analysis or
    the rules, which are most of devlint's start-up.
    """
    if is_notebook(path):
        from devlint.notebooks.linting import lint_notebook_file as lint
    else:
        from devlint.running.engine import lint_file_in_project as lint
    diagnostics, uses = lint(path, settings, trees=trees)
    return Linted(diagnostics, tuple((str(used), digest) for used, digest in uses))


def fix_file(
    path: Path,
    settings: Settings,
    *,
    unsafe: bool,
    reported: dict[str, list[Diagnostic]] | None = None,
) -> FixResult:
    """``devlint.running.fix.fix_file`` without writing, imported when a file needs fixing (see
    ``lint_file``). Workers compute fixes; the main process writes them (``write_fixed``).
    ``reported``: what the run's lint found in each file, which counting fixes starts from."""
    if is_notebook(path):
        from devlint.notebooks.fixing import fix_notebook_file

        return fix_notebook_file(path, settings, unsafe=unsafe)
    from devlint.running.fix import fix_file as fix

    linted = reported.get(str(path)) if reported is not None else None
    return fix(path, settings, unsafe=unsafe, write=False, linted=linted)


# fix ------------------------------------------------------------------------


def _fix_count(
    args: argparse.Namespace,
    settings: Settings,
    files: list[Path],
    reported: list[Diagnostic],
    stdin: tuple[str, bytes] | None,
) -> FixCount:
    """What ``--fix`` would apply to the findings reported (``devlint.running.fix_count``): the
    fixes of each file that has one it wants, computed as ``--fix`` computes them but not
    written, less the files it would not write. Most runs have none to compute."""
    if not any(d.fix is not None for d in reported):
        return NO_FIXES
    from devlint.running.fix import FixResult

    wanted_in = {d.path for d in reported if wanted(d.fix, args.unsafe_fixes)}
    to_fix = [path for path in files if str(path) in wanted_in]

    def lost(path: Path, died: Diagnostic) -> FixResult:  # counts nothing
        return FixResult(str(path), "", "", [died])

    found: dict[str, list[Diagnostic]] = {}
    for diagnostic in reported:
        if diagnostic.path in wanted_in:
            found.setdefault(diagnostic.path, []).append(diagnostic)
    fix = partial(fix_file, settings=settings, unsafe=args.unsafe_fixes, reported=found)
    results = map_files(fix, to_fix, args.jobs, lost, doing="fixing", done="fixed")
    fixed = {str(path): result for path, result in zip(to_fix, results, strict=True)}
    if stdin is not None and stdin[0] in wanted_in:
        fixed[stdin[0]] = _fix_stdin(*stdin, settings, unsafe=args.unsafe_fixes)
    policy = _write_policy(args)
    by_name = {str(path): path for path in files}

    def refusal(name: str) -> str | None:  # standard input is printed, never written
        return write_refusal(by_name[name], policy) if name in by_name else None

    return fixable(reported, fixed, refusal, unsafe=args.unsafe_fixes)


def _fix_stdin(name: str, data: bytes, settings: Settings, *, unsafe: bool) -> FixResult:
    if is_notebook(name):
        from devlint.notebooks.fixing import fix_notebook_bytes as fix_bytes
    else:
        from devlint.running.fix import fix_bytes
    return fix_bytes(data, name, settings, unsafe=unsafe)


def _write_policy(args: argparse.Namespace) -> WritePolicy:
    """Where ``--fix`` writes: below the paths given (``devlint.running.safe_write``)."""
    given = [Path(path) for path in args.paths if path != STDIN]
    return WritePolicy.for_paths(given, outside_roots=args.fix_outside_roots)


def _fix(
    args: argparse.Namespace, settings: Settings, files: list[Path], skipped: list[Diagnostic]
) -> int:
    """``--fix``: rewrite each file with its fixes, then report what is left; with ``-``
    the fixed source goes to stdout and the report to stderr. ``--diff``: print the
    fixes as a unified diff instead and exit 1 when there are any (or devlint failed on a
    file: then it cannot say there are none)."""
    from devlint.running.fix import FixResult, write_fixed

    fix = partial(fix_file, settings=settings, unsafe=args.unsafe_fixes)

    def lost(path: Path, died: Diagnostic) -> FixResult:  # left as it was; the notice is reported
        return FixResult(str(path), "", "", [died], problem=died.message)

    results = map_files(fix, files, args.jobs, lost, doing="fixing", done="fixed")
    policy = _write_policy(args)
    if args.diff:  # what --fix would write: not the files it would refuse
        results = [
            _unless_refused(path, result, policy)
            for path, result in zip(files, results, strict=True)
        ]
    else:
        written = zip(files, results, strict=True)
        results = [write_fixed(path, result, policy) for path, result in written]
    stdin = STDIN in args.paths
    if stdin:
        data = sys.stdin.buffer.read()
        name = args.stdin_filename or "<stdin>"
        results.append(_fix_stdin(name, data, settings, unsafe=args.unsafe_fixes))
    for result in results:
        if result.problem:
            print(printable(f"devlint: {result.path}: {result.problem}"), file=sys.stderr)
    count = FixCount.of(results)
    fixes = f"{count.applied} fix" if count.applied == 1 else f"{count.applied} fixes"
    if args.diff:
        hidden = count.unsafe_left
        hint = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
        diff = "".join(result.diff() for result in results)
        sys.stdout.write(printable(diff) if sys.stdout.isatty() else diff)  # raw for `patch`
        sys.stdout.flush()
        if not args.quiet:
            print(f"Would apply {fixes}{hint}.", file=sys.stderr)
        failed = any(d.code == INTERNAL_ERROR for r in results for d in r.diagnostics)
        return 1 if failed or any(result.changed for result in results) else 0
    if stdin:
        fixed = results[-1]
        output = fixed.fixed.encode(fixed.encoding) if fixed.changed else data
        sys.stdout.flush()
        sys.stdout.buffer.write(output)
        sys.stdout.flush()
    left = sorted(
        (
            d
            for d in [*skipped, *(d for r in results for d in r.diagnostics)]
            if _notice_enabled(d, settings)
        ),
        key=lambda d: (*d.place, d.code, d.message),
    )
    with contextlib.redirect_stdout(sys.stderr) if stdin else contextlib.nullcontext():
        # left after --fix: nothing another --fix would apply, but maybe with --unsafe-fixes
        _FORMATS[args.format](
            left, len(results) + len(skipped), args, FixCount(unsafe_left=count.unsafe_left)
        )
    if not args.quiet:
        print(f"Applied {fixes}.", file=sys.stderr)
    if args.exit_non_zero_on_fix and any(result.changed for result in results):
        return 1
    return 1 if left and not args.exit_zero else 0


def _unless_refused(path: Path, result: FixResult, policy: WritePolicy) -> FixResult:
    """``result`` as ``--diff`` shows it: unchanged, with the reason on stderr, when
    ``--fix`` would not write the file."""
    why = write_refusal(path, policy) if result.changed else None
    if why is None:
        return result
    return replace(
        result,
        fixed=result.source,
        fixed_codes=(),
        unsafe_left=0,
        problem=f"--fix would not rewrite it: {why}",
    )


# add-noqa -------------------------------------------------------------------


def _add_noqa(
    args: argparse.Namespace, settings: Settings, files: list[Path], skipped: list[Diagnostic]
) -> int:
    """``--add-noqa``: a ``# noqa`` comment on every line with a finding, written as
    ``--fix`` writes (``devlint.running.add_noqa``), then the report of what is left. Notebooks
    are left as they are: their findings are reported, and stderr says why."""
    from devlint.running.fix import FixResult, write_fixed

    notebooks = [path for path in files if is_notebook(path)]
    scripts = [path for path in files if not is_notebook(path)]

    def lost(path: Path, died: Diagnostic) -> FixResult:  # left as it was; the notice is reported
        return FixResult(str(path), "", "", [died], problem=died.message)

    add = partial(noqa_file, settings=settings)
    results = map_files(add, scripts, args.jobs, lost, doing="adding # noqa to", done="edited")
    policy = _write_policy(args)
    results = [
        write_fixed(path, result, policy) for path, result in zip(scripts, results, strict=True)
    ]
    for path in notebooks:
        print(
            printable(f"devlint: {path}: --add-noqa leaves notebooks as they are"), file=sys.stderr
        )
    for result in results:
        if result.problem:
            print(printable(f"devlint: {result.path}: {result.problem}"), file=sys.stderr)
    left = [*skipped, *(d for result in results for d in result.diagnostics)]
    left += lint_files(notebooks, settings, args.jobs, None, lint_file)
    left = sorted(
        (d for d in left if _notice_enabled(d, settings)),
        key=lambda d: (*d.place, d.code, d.message),
    )
    fixes = NO_FIXES
    if args.format == "text" and (args.statistics or not args.quiet):
        fixes = _fix_count(args, settings, files, left, None)
    _FORMATS[args.format](left, len(files) + len(skipped), args, fixes)
    if not args.quiet:
        silenced = sum(result.applied for result in results if result.changed)
        print(f"Added # noqa to silence {_problems(silenced)}.", file=sys.stderr)
    return 1 if left and not args.exit_zero else 0


def _problems(count: int) -> str:
    return f"{count} problem" if count == 1 else f"{count} problems"


def noqa_file(path: Path, settings: Settings) -> FixResult:
    """``devlint.running.add_noqa.add_noqa_file``, imported when a file needs it (see
    ``lint_file``)."""
    from devlint.running.add_noqa import add_noqa_file

    return add_noqa_file(path, settings)


# output ---------------------------------------------------------------------


def _print_text(
    diagnostics: list[Diagnostic], checked: int, args: argparse.Namespace, fixes: FixCount
) -> None:
    print_text(
        diagnostics,
        checked,
        sys.stdout,
        sys.stderr,
        show_source=args.show_source,
        color=args.color,
        statistics=args.statistics,
        quiet=args.quiet,
        fixes=fixes,
    )


def _print_json(
    diagnostics: list[Diagnostic], checked: int, args: argparse.Namespace, fixes: FixCount
) -> None:
    json.dump([d.to_json() for d in diagnostics], sys.stdout, indent=2)
    print()


def _print_sarif(
    diagnostics: list[Diagnostic], checked: int, args: argparse.Namespace, fixes: FixCount
) -> None:
    from devlint.frontends.sarif import print_sarif

    print_sarif(diagnostics)


def _print_github(
    diagnostics: list[Diagnostic], checked: int, args: argparse.Namespace, fixes: FixCount
) -> None:
    print_github(diagnostics, sys.stdout)


_FORMATS: dict[str, Callable[[list[Diagnostic], int, argparse.Namespace, FixCount], None]] = {
    "text": _print_text,
    "json": _print_json,
    "sarif": _print_sarif,
    "github": _print_github,
}


# rules ----------------------------------------------------------------------


def _rules(args: argparse.Namespace) -> int:
    from devlint.rules import all_rules

    metas = [rule.meta for rule in all_rules()]
    if args.format == "json":
        rows = [
            {
                "code": meta.code,
                "name": meta.name,
                "severity": meta.severity.value,
                "summary": meta.summary,
                "fixable": meta.fixable,
                "default_enabled": meta.default_enabled,
            }
            for meta in metas
        ]
        print(json.dumps(rows, indent=2))
        return 0
    print(rules_table(metas))
    return 0


def _rule(args: argparse.Namespace) -> int:
    from devlint.rule_docs import rule_page

    page = rule_page(args.code)
    if page is None:
        raise UsageError(f"no rule {args.code!r}; `devlint rules` lists them")
    print(page.rstrip())
    return 0


# lsp ------------------------------------------------------------------------


def _lsp(args: argparse.Namespace) -> int:
    try:
        from devlint.frontends.lsp import serve
    except ImportError as error:
        raise UsageError(f"devlint lsp needs pygls: pip install 'devlint[lsp]' ({error})") from None
    return serve()
