"""The mutation benchmark's verdict cache keeps facts about the code, not about the machine."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks/realworld"))  # checkouts
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks/realworld/mutation"))
import validate


def test_a_driver_failing_on_a_missing_module_is_run_again(tmp_path: Path) -> None:
    """An ``einops`` missing when the cache was written said nothing about the mutant: the
    verdict is read as a miss, so the run with ``einops`` installed runs it again."""
    entries = [
        {"key": "mutant", "status": "device-error", "error": "RuntimeError: Expected all"},
        {"key": "original", "status": "other-error", "error": "ModuleNotFoundError: einops"},
        {"key": "import", "status": "other-error", "error": "ImportError: cannot import x"},
        {"key": "other", "status": "other-error", "error": "ValueError: shapes"},
    ]
    cache = tmp_path / "mutation-cache.jsonl"
    cache.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    found = validate.read_cache(cache)
    assert sorted(found) == ["mutant", "other"]
    assert found["mutant"].status == "device-error"
