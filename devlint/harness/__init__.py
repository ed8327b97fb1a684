"""The runtime harness: run each rule's examples on real or emulated GPUs, check its claim.

Only the modules that run inside an example's process import torch
(``emulator/``, ``cuda_observer.py``, ``preload.py``, ``zygote.py``); the
commands and the linting path never do.
"""
