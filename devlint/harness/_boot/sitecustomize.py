"""Python processes started by a program under the harness run under the same backend.

The harness puts this folder first on ``PYTHONPATH``; Python imports
``sitecustomize`` at startup. Any other ``sitecustomize`` on the path still runs.
"""

import importlib.util
import os
import sys


def _run_the_next_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    others = [path for path in sys.path if os.path.abspath(path or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get("DEVLINT_HARNESS_BACKEND"):
    try:
        from devlint.harness.launch import install_from_environment
    except ImportError:  # devlint is not importable here: run without the harness
        pass
    else:
        install_from_environment()
_run_the_next_sitecustomize()
