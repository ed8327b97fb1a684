"""What the harness's fork server imports once, so that each example starts in milliseconds.

torch._dynamo is imported too: optimizers import it on their first step, and
it costs one to two seconds per process otherwise. The emulator is imported
but not installed; each example installs its own.
"""

import contextlib

with contextlib.suppress(ImportError):
    import numpy  # noqa: F401
with contextlib.suppress(ImportError):
    import torch
    import torch._dynamo
    import torch.nn
    import torch.optim
    import torch.utils.data  # noqa: F401

    import devlint.harness.cuda_observer
    import devlint.harness.emulator  # noqa: F401
