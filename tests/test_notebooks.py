"""Notebooks through the real CLI: findings by cell and line, notices for what cannot be read,
``--fix`` that edits only the cells' sources, SARIF and the cache.

``fixtures/notebooks/*.ipynb`` carry `# expect:` markers in their code cells; half of
them are correct notebooks that a linter reading them naively (document order, every
cell as Python, markdown as code) would flag.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbformat
import pytest
from expectations import parse_expectations

from devlint.config import DEFAULT_SETTINGS
from devlint.notebooks.magics import neutralise
from devlint.running.engine import lint_source

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "fixtures" / "notebooks"
FIXTURES = sorted(NOTEBOOKS.glob("*.ipynb"))
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"


def _devlint(
    *args: str, cwd: Path = ROOT, stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "devlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        check=False,
    )


def _json_findings(*paths: Path | str, cwd: Path = ROOT) -> list[dict]:
    done = _devlint("check", "--no-cache", "--format", "json", *map(str, paths), cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _markers(path: Path) -> set[tuple[str, int, int, str]]:
    """(file, cell, line, code) of every marker in the notebook's code cells."""
    notebook = nbformat.read(path, as_version=4)
    return {
        (path.name, number, expectation.line, expectation.code)
        for number, cell in enumerate(notebook.cells, 1)
        if cell.cell_type == "code"
        for expectation in parse_expectations(neutralise(cell.source))
    }


def test_every_notebook_reports_exactly_its_markers():
    assert len(FIXTURES) >= 15
    reported = {
        (Path(d["path"]).name, d["cell"], d["line"], d["code"])
        for d in _json_findings(NOTEBOOKS.relative_to(ROOT))
    }
    assert reported == set().union(*map(_markers, FIXTURES))


def test_half_the_notebooks_are_correct_code():
    clean = [path for path in FIXTURES if not _markers(path)]
    assert len(clean) * 2 >= len(FIXTURES)


def _cells(name: str) -> list[nbformat.NotebookNode]:
    return nbformat.read(NOTEBOOKS / name, as_version=4).cells


def _codes(source: str) -> set[str]:
    return {d.code for d in lint_source(source, "naive.py", DEFAULT_SETTINGS)}


def test_cells_run_in_the_order_of_their_execution_counts():
    """In document order the loss meets a batch not yet moved; as the counts ran it, it is."""
    code = [cell.source for cell in _cells("out_of_order.ipynb") if cell.cell_type == "code"]
    assert "DVL301" in _codes("\n".join(code))


def test_cell_magic_bodies_that_do_not_run_in_the_notebook_are_not_linted():
    """`%%writefile` writes its body to a file; read as the notebook's code it would be a bug."""
    body = _cells("magics_and_shell.ipynb")[2].source.split("\n", 1)[1]
    assert "DVL102" in _codes(body)


def test_markdown_and_raw_cells_are_not_code():
    cells = _cells("code_in_markdown_and_raw.ipynb")
    assert "DVL102" in _codes("import torch\nfrom torch import nn\n" + cells[2].source)


def test_a_cells_last_expression_is_displayed_not_discarded():
    """`m.to(device)` alone at the end of a cell shows the moved copy (Out[n]); the notebook
    goes on with `m` on the cpu on purpose."""
    cells = _cells("displayed_transfer.ipynb")
    source = "\n".join(cell.source for cell in cells if cell.cell_type == "code")
    assert "DVL201" in _codes(source)  # read as a Python file, it is thrown away


def test_noqa_in_a_cell_silences_that_line_only():
    cells = _cells("noqa_in_cell.ipynb")
    source = "\n".join(cell.source for cell in cells).replace("noqa: DVL102", "")
    assert "DVL102" in _codes(source)


def test_text_output_names_the_cell():
    done = _devlint("check", "--no-cache", "fixtures/notebooks/input_left_on_cpu.ipynb")
    assert done.returncode == 1
    first = done.stdout.decode().splitlines()[0]
    assert first.startswith("fixtures/notebooks/input_left_on_cpu.ipynb:cell 5:1:5: DVL102 ")
    assert "created without `device=` at line 1 of cell 4" in first
    assert "moved to `device` at line 1 of cell 2" in first


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"import torch\nx = torch.zeros(3).cuda()\n", "the file is not a JSON object"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": "x', "not valid JSON"),
        (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}', "nbformat 3 is not read"),
        (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "no `cells` list"),
        (
            b'{"nbformat": 4, "metadata": {}, "cells": [{"cell_type": "code"}]}',
            "cell 1 has no `source` text",
        ),
        (b'{"nbformat": 4, "cells": []} trailing', "text after the notebook"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_file_that_is_no_notebook_gets_a_notice_never_clean(tmp_path, content, reason):
    (tmp_path / "nb.ipynb").write_bytes(content)
    done = _devlint("check", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 1
    assert "nb.ipynb:1:1: DVL002 [error] cannot read notebook: " in done.stdout.decode()
    assert reason in done.stdout.decode()


def test_integers_too_long_for_python_do_not_stop_the_notebook_being_linted(tmp_path):
    """Python refuses to convert integers of over 4,300 digits (once DVL003)."""
    huge = "9" * 5000
    text = (
        f'{{"nbformat": 4, "nbformat_minor": 5, "metadata": {{"n": {huge}}}, "cells": ['
        f'{{"cell_type": "code", "execution_count": {huge}, "metadata": {{}}, "outputs": [],'
        ' "source": "import torch\\nx = torch.zeros(3)\\nx.to(\\"cuda\\")\\ny = 1\\n"}]}'
    )
    (tmp_path / "nb.ipynb").write_text(text)
    assert [
        (d["code"], d["cell"], d["line"]) for d in _json_findings("nb.ipynb", cwd=tmp_path)
    ] == [("DVL201", 1, 3)]


def test_a_folder_walk_lints_notebooks_skips_checkpoints_and_exclude_drops_them(tmp_path):
    shutil.copy(NOTEBOOKS / "input_left_on_cpu.ipynb", tmp_path / "nb.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    shutil.copy(NOTEBOOKS / "input_left_on_cpu.ipynb", tmp_path / ".ipynb_checkpoints" / "nb.ipynb")
    assert [(d["path"], d["code"]) for d in _json_findings(".", cwd=tmp_path)] == [
        ("nb.ipynb", "DVL102")
    ]
    done = _devlint("check", "--no-cache", "--extend-exclude", "*.ipynb", ".", cwd=tmp_path)
    assert done.returncode == 0


def test_standard_input_named_as_a_notebook_is_read_as_one():
    data = (NOTEBOOKS / "input_left_on_cpu.ipynb").read_bytes()
    done = _devlint(
        "check", "--no-cache", "--format", "json", "--stdin-filename", "nb.ipynb", "-", stdin=data
    )
    assert [(d["cell"], d["line"], d["code"]) for d in json.loads(done.stdout)] == [
        (5, 1, "DVL102")
    ]


def test_fix_edits_only_the_cell_and_the_notebook_stays_valid(tmp_path):
    path = tmp_path / "nb.ipynb"
    shutil.copy(NOTEBOOKS / "batch_not_moved.ipynb", path)
    before = path.read_bytes()
    diff = _devlint("check", "--no-cache", "--diff", "nb.ipynb", cwd=tmp_path)
    assert diff.returncode == 1
    assert (
        '+    "        loss = criterion(model(inputs), targets.to(device))' in diff.stdout.decode()
    )
    assert path.read_bytes() == before  # --diff writes nothing
    done = _devlint("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    after = path.read_bytes()
    nbformat.validate(nbformat.reads(after.decode(), as_version=4))
    changed = [
        (old, new)
        for old, new in zip(before.splitlines(), after.splitlines(), strict=True)
        if old != new
    ]
    assert changed == [
        (
            b'    "        loss = criterion(model(inputs), targets)  # expect: DVL301\\n",',
            b'    "        loss = criterion(model(inputs), targets.to(device))'
            b'  # expect: DVL301\\n",',
        )
    ]
    assert after.endswith(b"\n") == before.endswith(b"\n")


def test_fix_keeps_a_hand_written_layout_byte_for_byte(tmp_path):
    """One-string sources, CRLF, escaped non-ASCII, a BOM and no final newline survive."""
    source = (
        "import torch\\nfrom torch import nn\\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\\n"
        "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset("
        "torch.randn(8, 2), torch.randn(8, 1)))\\n"
        "model = nn.Linear(2, 1).to(device)\\n"
        "for x, y in loader:\\n"
        "    loss = ((model(x.to(device)) - y) ** 2).mean()"
    )
    text = (
        '{"cells": [{"cell_type": "markdown", "metadata": {}, "source": "caf\\u00e9"},\r\n'
        ' {"cell_type": "code", "execution_count": null, "metadata": {"tags": []},'
        ' "outputs": [], "source": "' + source + '"}],\r\n'
        ' "metadata": {}, "nbformat": 4, "nbformat_minor": 2}'
    )
    path = tmp_path / "nb.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    done = _devlint("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    expected = text.replace("- y) ** 2", "- y.to(device)) ** 2")
    assert path.read_bytes() == b"\xef\xbb\xbf" + expected.encode()


def test_sarif_points_at_the_file_lines_that_show_the_cell_line():
    done = _devlint(
        "check", "--no-cache", "--format", "sarif", "fixtures/notebooks/batch_not_moved.ipynb"
    )
    log = json.loads(done.stdout)
    jsonschema.validate(log, json.loads(SCHEMA.read_text(encoding="utf-8")))
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    lines = (NOTEBOOKS / "batch_not_moved.ipynb").read_text(encoding="utf-8").splitlines()
    assert "loss = criterion(model(inputs), targets)" in lines[region["startLine"] - 1]
    assert result["properties"] == {"cell": 6, "cellLine": 5, "cellColumn": 41}
    assert result["message"]["text"].startswith("Cell 6: `targets` is on cpu")


def test_github_annotations_point_at_the_file_lines_that_show_the_cell_line():
    """They once used the cell's line as the file's line and named no cell."""
    path = "fixtures/notebooks/batch_not_moved.ipynb"
    done = _devlint("check", "--no-cache", "--format", "github", path)
    (annotation,) = done.stdout.decode().splitlines()
    command, message = annotation.split("::")[1:]
    level, listed = command.split(" ", 1)
    properties = dict(item.split("=", 1) for item in listed.split(","))
    assert (level, properties["file"], properties["title"]) == ("warning", path, "DVL301")
    assert "col" not in properties and "endColumn" not in properties  # a JSON line's columns
    lines = (NOTEBOOKS / "batch_not_moved.ipynb").read_text(encoding="utf-8").splitlines()
    shown = lines[int(properties["line"]) - 1]
    assert "loss = criterion(model(inputs), targets)" in shown
    assert properties["endLine"] == properties["line"]
    sarif = json.loads(_devlint("check", "--no-cache", "--format", "sarif", path).stdout)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert int(properties["line"]) == region["startLine"]  # where SARIF points too
    assert message.startswith("Cell 6, line 5, column 41: `targets` is on cpu")


def test_a_github_annotation_of_a_notebook_gone_since_points_at_its_first_line():
    from devlint.diagnostic import Diagnostic
    from devlint.frontends.github_output import annotation

    finding = Diagnostic("gone.ipynb", 2, 4, 3, 1, "DVL101", "m", cell=3)
    assert annotation(finding, {}) == (
        "::error file=gone.ipynb,line=1,endLine=1,title=DVL101::Cell 3, line 2, column 5: m"
    )
    assert annotation(finding, {3: (10, 11, 12)}).startswith(
        "::error file=gone.ipynb,line=11,endLine=12,title=DVL101::"
    )


def test_a_cached_run_reports_the_same_cells(tmp_path):
    shutil.copy(NOTEBOOKS / "transfer_discarded.ipynb", tmp_path / "nb.ipynb")
    runs = [
        _devlint(
            "check",
            "--format",
            "json",
            "--cache-dir",
            str(tmp_path / "cache"),
            "nb.ipynb",
            cwd=tmp_path,
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert {(d["cell"], d["code"]) for d in json.loads(runs[1])} == {(2, "DVL201"), (3, "DVL102")}


def test_empty_cells_indented_cells_and_help_searches_read_as_ipython_runs_them(tmp_path):
    """An empty source list, a cell IPython dedents (its first line indented),
    `torch.*Tensor?` and a `%%bash` cell without a final newline: the finding keeps the
    line and column the user sees in the cell."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(""),
        nbformat.v4.new_code_cell("torch.*Tensor?"),
        nbformat.v4.new_code_cell("%%bash\nfor f in *; do\n  echo $f\ndone"),
        nbformat.v4.new_code_cell(
            "  import torch\n  model = torch.nn.Linear(2, 2).cuda()\n  y = model(torch.ones(1, 2))"
        ),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook, path)
    found = _json_findings("nb.ipynb", cwd=tmp_path)
    assert [(d["cell"], d["line"], d["column"], d["code"]) for d in found] == [(4, 3, 7, "DVL102")]


RUNTIME_FAILURES = {  # fixture: where "Run All" on a GPU machine first fails
    "batch_not_moved.ipynb": "cell 6:5: RuntimeError: Expected all tensors",
    "input_left_on_cpu.ipynb": "cell 5:1: RuntimeError: Expected all tensors",
    "numpy_of_gpu_output.ipynb": "cell 3:3: TypeError: can't convert cuda",
    "transfer_discarded.ipynb": "cell 3:1: RuntimeError: Expected all tensors",
    "unregistered_mask.ipynb": "cell 2:8: RuntimeError: Expected all tensors",
}
RUN_CLEAN = [
    "device_from_earlier_cell.ipynb",
    "displayed_transfer.ipynb",
    "moved_in_helper_cell.ipynb",
    "out_of_order.ipynb",
    "magics_and_shell.ipynb",
    "code_in_markdown_and_raw.ipynb",
    "guarded_by_cuda_check.ipynb",
    "capture_and_time_cells.ipynb",
]


@pytest.mark.parametrize("name", sorted(RUNTIME_FAILURES) + RUN_CLEAN)
def test_devlint_run_names_the_cell_where_the_notebook_fails_on_an_emulated_gpu(tmp_path, name):
    """The findings are real: the buggy notebooks fail where they are marked, the correct ones
    run clean (in the order their execution counts give)."""
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    done = _devlint("run", "--gpus", "1", name, cwd=tmp_path)
    summary = done.stderr.decode()
    if name in RUNTIME_FAILURES:
        assert done.returncode == 1
        assert f"first device error: {name}:{RUNTIME_FAILURES[name]}" in summary
    else:
        assert done.returncode == 0, summary
        assert "\nno device error\n" in summary


def test_devlint_run_refuses_a_notebook_it_cannot_run_as_python(tmp_path):
    shutil.copy(NOTEBOOKS / "not_python.ipynb", tmp_path / "r.ipynb")
    (tmp_path / "broken.ipynb").write_text('{"nbformat": 3}')
    for name, reason in (
        ("r.ipynb", "not a Python notebook (its kernel's language is r)"),
        ("broken.ipynb", "cannot read notebook: nbformat 3 is not read"),
    ):
        done = _devlint("run", name, cwd=tmp_path)
        assert done.returncode == 2
        assert f"devlint run: error: {name}: {reason}" in done.stderr.decode()


def test_a_cell_ipython_dedents_is_analysed_and_fixed_beside_one_that_does_not_parse(tmp_path):
    """The cells are parsed one by one when one does not parse: the dedented cell must be
    parsed as IPython runs it, and its fix applied at the columns the user sees."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "  import torch\n  x = torch.randn(2)\n  x.to('cuda')\n  print(x.sum())"
        ),
        nbformat.v4.new_code_cell("out = # your code here"),
    ]
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook, path)
    found = _json_findings("nb.ipynb", cwd=tmp_path)
    assert [(d["cell"], d["line"], d["column"], d["code"]) for d in found] == [
        (1, 3, 3, "DVL201"),
        (2, 1, 7, "DVL001"),  # where Python finds the syntax error
    ]
    _devlint("check", "--no-cache", "--fix", "nb.ipynb", cwd=tmp_path)
    fixed = nbformat.read(path, as_version=4).cells[0].source
    assert fixed.splitlines()[2] == "  x = x.to('cuda')"
