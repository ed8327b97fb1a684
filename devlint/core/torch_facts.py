"""What devlint knows about torch by hand: names of torch's functions, methods and classes
(and of the libraries torch programs call with them), and how they treat devices, where the
generated table (``torch_api.json``, read by ``torch_api``) cannot tell.

A new fact about torch goes here, with a docstring saying what it is and why the analysis
needs it; what the analysis does with it stays in the module that uses it. This module
imports nothing, so every module of the core may read it.
"""

from __future__ import annotations

# -- names that are no devices -------------------------------------------------------------

DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
        "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
        "cfloat", "cdouble",
    )
)  # fmt: skip
"""``torch.float32`` and the like: dtypes, never devices."""

# -- arguments torch reads on the host -------------------------------------------------------

HOST_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths")}
"""Arguments a torch function reads on the host (position, keyword): they must be CPU
tensors whatever device the rest is on (``'lengths' argument should be a 1D CPU int64
tensor``)."""

# -- nn.Module -------------------------------------------------------------------------------

MODULE_DICT = "torch.nn.ModuleDict"
"""``nn.ModuleDict``: any attribute but its own methods is one of its members."""
MODULE_DICT_API = frozenset({"items", "keys", "values", "get", "pop", "update", "clear"})
"""``nn.ModuleDict``'s own methods; any other attribute is one of its members."""

# -- modules of other libraries --------------------------------------------------------------

AUDIO_TRANSFORMS_WITH_BUFFERS = frozenset(
    f"torchaudio.transforms.{name}"
    for name in (
        "Spectrogram", "InverseSpectrogram", "GriffinLim", "MelScale", "InverseMelScale",
        "MelSpectrogram", "MFCC", "LFCC", "Resample", "TimeStretch", "SpectralCentroid",
    )
)  # fmt: skip
"""torchaudio transforms that register a buffer in ``__init__`` (a window, a filter bank, a
resampling kernel): modules made on the CPU like ``nn.Linear``. torchaudio is not in the
generated table; its buffer-free transforms (``AmplitudeToDB``, ``Vol``) follow their input."""
