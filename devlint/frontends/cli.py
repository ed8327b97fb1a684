"""The ``devlint`` command: ``check`` lints files, ``rules`` lists what it checks.

Exit status: 0 when nothing is reported, 1 when anything is (notices about
files that could not be analysed included), 2 on usage errors (and on an
internal error that is not tied to one file), 130 on Ctrl-C.
No input, however broken, produces a traceback: each file's failure becomes
a notice naming that file and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path

from devlint import __version__
from devlint.config import ConfigError, Settings, is_code, load_settings, load_settings_file
from devlint.diagnostic import Diagnostic
from devlint.engine import decode_source, lint_file, lint_source
from devlint.files import Entry, MissingPathError, iter_python_files
from devlint.notices import INTERNAL_ERROR, NOTICE_SUMMARIES, UNREADABLE, notice
from devlint.rules import all_rules
from devlint.selection import is_enabled

STDIN = "-"
IN_PROCESS_BELOW = 16
"""Fewer files than this are linted in-process: starting workers costs more."""
MAX_CHUNK = 64


class UsageError(Exception):
    """A problem with how devlint was invoked (exit status 2)."""


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
        print(f"devlint: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `devlint check . | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as error:  # a bug outside any one file: say so in one line
        print(f"devlint: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    check.add_argument("--format", choices=sorted(_FORMATS), default="text")
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
        "-j",
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes (default: number of CPUs)",
    )
    check.add_argument(
        "--config",
        type=Path,
        metavar="PYPROJECT",
        help="pyproject.toml to read [tool.devlint] from (default: the nearest one that has it)",
    )
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when problems are reported"
    )
    check.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="name to report for standard input (and to match per-file-ignores)",
    )

    rules = commands.add_parser("rules", help="list the rules")
    rules.set_defaults(command=_rules)
    rules.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def _codes(text: str) -> tuple[str, ...]:
    codes = tuple(code.strip() for code in text.split(",") if code.strip())
    bad = [code for code in codes if not is_code(code)]
    if bad:
        raise argparse.ArgumentTypeError(f"{bad[0]!r} is not a code or prefix such as DVL101")
    return codes


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


# check ----------------------------------------------------------------------


def _check(args: argparse.Namespace) -> int:
    settings = _settings(args)
    try:
        entries = list(iter_python_files(Path(path) for path in args.paths if path != STDIN))
    except MissingPathError as error:
        raise UsageError(f"{error}: no such file or directory") from None
    files = [entry.path for entry in entries if entry.skip_reason is None]
    diagnostics = [_skipped(entry) for entry in entries if entry.skip_reason is not None]
    diagnostics += _lint_files(files, settings, args.jobs)
    checked = len(files)
    if STDIN in args.paths:
        name = args.stdin_filename or "<stdin>"
        diagnostics += _guarded(name, partial(_lint_stdin, name, settings))
        checked += 1
    diagnostics = sorted(
        (d for d in diagnostics if _notice_enabled(d, settings)),
        key=lambda d: (d.path, d.line, d.column, d.code, d.message),
    )
    _FORMATS[args.format](diagnostics, checked)
    return 1 if diagnostics and not args.exit_zero else 0


def _settings(args: argparse.Namespace) -> Settings:
    """The pyproject's settings, with the command line's codes taking precedence."""
    try:
        if args.config is not None:
            settings = load_settings_file(args.config)
        else:
            settings = load_settings(_config_start(args))
    except ConfigError as error:
        raise UsageError(str(error)) from None
    if args.select is not None:
        settings = replace(settings, select=args.select)
    if args.ignore is not None:
        settings = replace(settings, ignore=args.ignore)
    return replace(settings, extend_select=settings.extend_select + args.extend_select)


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


def _lint_files(files: list[Path], settings: Settings, jobs: int) -> list[Diagnostic]:
    if jobs == 1 or len(files) < IN_PROCESS_BELOW:
        return _lint_chunk(files, settings)
    size = max(1, min(MAX_CHUNK, len(files) // (jobs * 4)))
    chunks = [files[start : start + size] for start in range(0, len(files), size)]
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_interrupts)
    try:
        futures = [(pool.submit(_lint_chunk, chunk, settings), chunk) for chunk in chunks]
        return [d for future, chunk in futures for d in _chunk_result(future, chunk)]
    finally:
        pool.shutdown(cancel_futures=True)


def _chunk_result(future: Future[list[Diagnostic]], chunk: list[Path]) -> list[Diagnostic]:
    try:
        return future.result()
    except Exception as error:  # a worker died (a crash in the parser)
        message = f"internal error: worker process failed: {type(error).__name__}: {error}"
        return [notice(str(path), INTERNAL_ERROR, message) for path in chunk]


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the main process, which stops them without tracebacks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _lint_chunk(files: list[Path], settings: Settings) -> list[Diagnostic]:
    return [d for path in files for d in _guarded(str(path), partial(lint_file, path, settings))]


def _lint_stdin(name: str, settings: Settings) -> list[Diagnostic]:
    source, problem = decode_source(sys.stdin.buffer.read())
    if source is None:
        return [notice(name, UNREADABLE, f"cannot decode standard input: {problem}")]
    return lint_source(source, name, settings)


def _guarded(name: str, lint: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """``lint()``, with any failure turned into a DVL003 notice naming the file."""
    try:
        return lint()
    except Exception as error:  # one bad file must not stop the run
        message = f"internal error: {type(error).__name__}: {error}"
        return [notice(name, INTERNAL_ERROR, message)]


# output ---------------------------------------------------------------------


def _print_text(diagnostics: list[Diagnostic], checked: int) -> None:
    for d in diagnostics:
        print(f"{d.path}:{d.line}:{d.column + 1}: {d.code} {d.message}")
    sys.stdout.flush()
    files = _plural(checked, "file")
    if diagnostics:
        print(f"Found {_plural(len(diagnostics), 'problem')} in {files}.", file=sys.stderr)
    else:
        print(f"No problems found in {files}.", file=sys.stderr)


def _print_json(diagnostics: list[Diagnostic], checked: int) -> None:
    json.dump([d.to_json() for d in diagnostics], sys.stdout, indent=2)
    print()


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


_FORMATS: dict[str, Callable[[list[Diagnostic], int], None]] = {
    "text": _print_text,
    "json": _print_json,
}


# rules ----------------------------------------------------------------------


def _rules(args: argparse.Namespace) -> int:
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
    table = [("CODE", "NAME", "SEVERITY", "SUMMARY")] + [
        (
            meta.code,
            meta.name,
            meta.severity.value,
            meta.summary + ("" if meta.default_enabled else " (off by default)"),
        )
        for meta in metas
    ]
    widths = [max(len(row[column]) for row in table) for column in range(3)]
    for *padded, summary in table:
        cells = [cell.ljust(width) for cell, width in zip(padded, widths, strict=True)]
        print("  ".join([*cells, summary]))
    return 0
