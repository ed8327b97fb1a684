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

# -- tensors made ---------------------------------------------------------------------------

LEGACY_CONSTRUCTORS = frozenset(
    {
        "torch.Tensor",
        "torch.FloatTensor",
        "torch.DoubleTensor",
        "torch.HalfTensor",
        "torch.BFloat16Tensor",
        "torch.LongTensor",
        "torch.IntTensor",
        "torch.ShortTensor",
        "torch.CharTensor",
        "torch.ByteTensor",
        "torch.BoolTensor",
    }
)
"""Typed constructors that build cpu tensors only: given ``device=`` naming any other device
they raise ``RuntimeError: legacy constructor expects device type: cpu``."""
TENSOR_FROM_DATA = LEGACY_CONSTRUCTORS | {
    "torch.tensor",
    "torch.as_tensor",
    "torch.asarray",
    "torch.from_numpy",
}
"""Calls that make a tensor from Python data, an array or another tensor: where the result
lives depends on what they are given as well as on ``device=``."""
RANDOM_FACTORIES = frozenset(
    {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson"}
)
"""Factories that draw random numbers, by their last name: made on another device they draw
other numbers, so a fix that gives them a ``device=`` changes what the program computes."""
SIZE_AS_VARARGS = frozenset({"zeros", "ones", "empty", "rand", "randn"})
"""Factories that take their size as separate arguments too: ``torch.zeros(8, 2)`` has one
dimension per argument."""

# -- tensor operations -----------------------------------------------------------------------

ADDS_A_DIMENSION = frozenset(
    {
        "unsqueeze", "unsqueeze_", "stack", "hstack", "vstack", "dstack", "column_stack",
        "row_stack", "cat", "concat", "concatenate",
    }
)  # fmt: skip
"""Ops whose result has at least one dimension whatever the input: never a 0-dim tensor
(``stack`` adds one; ``cat`` refuses 0-dim inputs: "zero-dimensional tensor ... cannot be
concatenated")."""
COMPARISONS_TO_A_BOOL = frozenset({"allclose", "equal"})
"""Comparisons that return a Python bool (so the generated table calls them non-tensor) but
compute on both tensors: ``allclose`` is ``isclose(a, b).all()``, and both need their
operands on one device ("Expected all tensors to be on the same device")."""
GRADIENTS = frozenset({"torch.autograd.grad"})
"""``torch.autograd.grad(outputs, inputs)``: one gradient per input, on its input's device."""

# -- what only a tensor has ------------------------------------------------------------------

TENSOR_ONLY_ATTRIBUTES = frozenset({"device", "grad_fn", "requires_grad"})
"""Attributes of a tensor that NumPy arrays and Python values lack: code that reads one on a
parameter shows it to be a tensor."""
DEVICE_TESTS = frozenset({"is_cuda", "is_cpu", "get_device"})
"""A tensor's attributes and methods that ask where it lives (``x.is_cuda``,
``x.get_device()``): a parameter the code tests so is ready for either device."""
TENSOR_ONLY_METHODS = frozenset(
    {
        "size", "dim", "numel", "unsqueeze", "view", "view_as", "contiguous", "permute",
        "expand", "expand_as", "type_as", "detach", "masked_fill", "masked_fill_",
        "masked_select", "masked_scatter", "new_zeros", "new_ones", "new_full", "new_empty",
        "new_tensor", "narrow", "unbind", "index_select", "index_fill", "index_add",
        "index_copy", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
        "bmm", "softmax", "log_softmax", "sigmoid", "relu", "exp", "log", "sqrt", "norm",
        "clamp", "clamp_", "clamp_min", "clamp_max", "long", "int", "bool", "unfold", "flip",
        "roll", "topk", "logical_not", "is_contiguous",
        "element_size", "fill_", "zero_", "add_", "mul_", "sub_", "div_", "chunk",
        "split_with_sizes", "matmul", "mm", "neg", "rsqrt", "is_floating_point",
    }
)  # fmt: skip
"""Methods of torch.Tensor that NumPy arrays, Python containers, strings and
nn.Modules do not have (or not with a tensor's signature)."""
TENSOR_VALUED_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "mH", "real", "imag"})
"""Attributes of a tensor that are tensors on its device (``x.T``, ``p.grad``)."""

# -- calls that place a value or follow another's device ---------------------------------------

DEVICE_FOLLOWING_CALLS = frozenset(
    {"to", "cuda", "cpu", "type_as", "new_zeros", "new_ones", "new_full", "new_empty",
     "new_tensor", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
     "randn_like", "randint_like", "get_device"}
)  # fmt: skip
"""Calls that place a value or follow another's device: code written with devices in mind."""

# -- arguments torch reads on the host -------------------------------------------------------

HOST_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths")}
"""Arguments a torch function reads on the host (position, keyword): they must be CPU
tensors whatever device the rest is on (``'lengths' argument should be a 1D CPU int64
tensor``)."""

# -- nn.Module -------------------------------------------------------------------------------

MODULE_BASE_CLASSES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
"""``nn.Module`` under its qualified names: a class deriving from it, a parameter typed as it."""
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
"""Modules that hold the modules they are given: stateful when a member is."""
MODULE_DICT = "torch.nn.ModuleDict"
"""``nn.ModuleDict``: any attribute but its own methods is one of its members."""
MODULE_DICT_API = frozenset({"items", "keys", "values", "get", "pop", "update", "clear"})
"""``nn.ModuleDict``'s own methods; any other attribute is one of its members."""
MODULE_ONLY_METHODS = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "modules",
        "named_modules",
        "children",
        "named_children",
        "eval",
    }
)
"""Methods that only an ``nn.Module`` has (among what a torch program calls): usage that
proves an object of a class defined elsewhere is a module."""
RETURNS_THE_MODULE = frozenset(
    {
        "train",
        "eval",
        "float",
        "half",
        "double",
        "bfloat16",
        "requires_grad_",
        "share_memory",
        "apply",
        "type",
    }
)
"""``nn.Module``'s own methods that return the module itself (``model = model.eval()``)."""
REGISTERED_KEYWORDS = {
    "register_buffer": ("tensor",),
    "register_parameter": ("param", "parameter"),  # torch's name; subclasses' (GPyTorch)
    "add_module": ("module",),
}
"""What each registration is given, by keyword: ``register_parameter(name=..., param=...)``."""
REGISTRATIONS = frozenset(REGISTERED_KEYWORDS)
"""``self.register_buffer``/``register_parameter``/``add_module``: methods only an
``nn.Module`` has, which make a tensor or a module part of its state."""
MODULE_MOVE_OVERRIDES = frozenset({"to", "cuda"})
"""``nn.Module``'s moves that a subclass overrides to take along what it keeps outside its
state (``def to(self, device): self.a = self.a.to(device)``)."""
CALLED_BY_TORCH = frozenset({"forward", "extra_repr", "_load_from_state_dict", "_apply"})
"""Methods of an ``nn.Module`` that torch itself calls."""
GRAD_MODE_DECORATORS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "no_grad", "inference_mode"}
)
"""torch's gradient-mode decorators: they hand the function to no framework that calls it."""

# -- losses ------------------------------------------------------------------------------------

ELEMENTWISE_WEIGHT_LOSSES = frozenset({"torch.nn.BCEWithLogitsLoss", "torch.nn.BCELoss"})
"""Losses whose ``weight``/``pos_weight`` combine with the input elementwise: a CPU 0-dim
weight is accepted next to inputs on a GPU, as in any elementwise op."""
CPU_OPERAND_MODULES = frozenset({"torch.nn.CTCLoss"})
"""Modules whose other inputs may stay on the CPU: CTC targets and lengths (cuDNN wants them
there; the native kernel moves them itself)."""

# -- data ----------------------------------------------------------------------------------

DATASET_BASES = frozenset(
    {
        "torch.utils.data.Dataset",
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.Dataset",
    }
)
"""torch's dataset classes: a class deriving from one is a dataset."""
DATASETS_OF_TENSORS = frozenset({"torch.utils.data.TensorDataset"})
"""Datasets built from tensors: their items are on the tensors' device."""
LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
"""``DataLoader`` under its qualified names: its batches are CPU tensors unless its dataset
or ``collate_fn`` puts them elsewhere."""

# -- checkpoints ---------------------------------------------------------------------------

CHECKPOINT_SAVES = frozenset({"torch.save", "torch.serialization.save"})
"""``torch.save`` under its qualified names: a checkpoint keeps each tensor's device."""
CHECKPOINT_LOADS = frozenset({"torch.load", "torch.serialization.load"})
"""``torch.load`` under its qualified names: without ``map_location`` each tensor comes back
on the device it was saved from."""

# -- data-parallel wrappers --------------------------------------------------------------------

WRAPPERS = {
    "torch.nn.DataParallel": "DataParallel",
    "torch.nn.parallel.DataParallel": "DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel": "DataParallel",
    "torch.nn.parallel.DistributedDataParallel": "DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel": "DistributedDataParallel",
}
"""``nn.DataParallel`` and ``DistributedDataParallel`` under their qualified names -> the
class's name."""
WRAPPER_NAMES = ("DataParallel", "DistributedDataParallel", "DDP")
"""The last names of the wrapper classes as code spells them in ``isinstance`` tests (``DDP``:
the usual alias)."""

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
