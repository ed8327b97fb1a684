"""CUDA emulated on a CPU-only PyTorch: virtual GPUs whose tensors hold real CPU values.

This package imports torch; only the process that runs an example under the
``emulated`` backend (or a test) imports it. What it emulates and what it does
not is in docs/harness.md.
"""

from devlint.harness.emulator.install import Emulation, active, emulated, install, uninstall

__all__ = ["Emulation", "active", "emulated", "install", "uninstall"]
