"""What devlint knows about torch by hand: names of torch's functions, methods and classes
(and of the libraries torch programs call with them), and how they treat devices, where the
generated table (``torch_api.json``, read by ``torch_api``) cannot tell.

A new fact about torch goes here, with a docstring saying what it is and why the analysis
needs it; what the analysis does with it stays in the module that uses it. This module
imports nothing, so every module of the core may read it.
"""

from __future__ import annotations

# -- devices and where they are available ------------------------------------------------------

DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hpu", "npu", "xla")
"""The device types a device string names (``"cuda:1"``, ``"mps"``)."""
DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8",
        "int16", "int32", "int64", "long", "short", "uint8", "bool", "complex64", "complex128",
        "cfloat", "cdouble",
    )
)  # fmt: skip
"""``torch.float32`` and the like: dtypes, never devices."""
CUDA_AVAILABILITY = frozenset({"torch.cuda.is_available"})
"""Whether CUDA is available: code that tests it places tensors either way, and the branches
it guards join as "cuda when available"."""
STABLE_AVAILABILITY_CHECKS = frozenset(
    {"torch.cuda.is_available", "torch.backends.mps.is_available", "torch.xpu.is_available"}
)
"""Availability checks that give the same answer all through a run: two ``if`` statements
on one of them take the same branch."""
RUNTIME_DEVICE_CHECKS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.backends.mps.is_available",
        "torch.accelerator.is_available",
        "torch.accelerator.current_accelerator",
    }
)
"""Calls that ask which devices the machine has: a file that makes one chooses its device
at run time."""

# -- tensors made ------------------------------------------------------------------------------

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

# -- tensor operations -------------------------------------------------------------------------

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

# -- what only a tensor has --------------------------------------------------------------------

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

# -- arguments torch reads on the host ---------------------------------------------------------

HOST_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths")}
"""Arguments a torch function reads on the host (position, keyword): they must be CPU
tensors whatever device the rest is on (``'lengths' argument should be a 1D CPU int64
tensor``)."""
NUMPY_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray"})
"""NumPy calls that make an array of what they are given: a tensor they are given is read on
the host, which a CUDA tensor refuses (``can't convert cuda:0 device type tensor to numpy``)."""

# -- nn.Module ---------------------------------------------------------------------------------

MODULE_BASE_CLASSES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
"""``nn.Module`` under its qualified names: a class deriving from it, a parameter typed as it."""
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
"""Modules that hold the modules they are given: stateful when a member is."""
MODULE_DICT = "torch.nn.ModuleDict"
"""``nn.ModuleDict``'s qualified name: its members are read as attributes (``self.heads.cls``)."""
MODULE_TENSORS = frozenset({"parameters", "buffers"})
"""``model.parameters()``, ``model.buffers()``: the module's tensors, on its device."""
NAMED_MODULE_TENSORS = frozenset({"named_parameters", "named_buffers"})
"""``model.named_parameters()``: (name, tensor) pairs, the tensors on the module's device."""
TENSORS_OF_A_MODULE = MODULE_TENSORS | NAMED_MODULE_TENSORS
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

# -- data --------------------------------------------------------------------------------------

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

# -- checkpoints -------------------------------------------------------------------------------

CHECKPOINT_SAVES = frozenset({"torch.save", "torch.serialization.save"})
"""``torch.save`` under its qualified names: a checkpoint keeps each tensor's device."""
CHECKPOINT_LOADS = frozenset({"torch.load", "torch.serialization.load"})
"""``torch.load`` under its qualified names: without ``map_location`` each tensor comes back
on the device it was saved from."""

OFFLOADED_STATE_CALLS = frozenset({"full_optim_state_dict"})
"""``FSDP.full_optim_state_dict(model, optim)``: consolidates the optimizer state on the CPU
(its implementation's ``cpu_offload=True``)."""
STATE_DICT_TYPE_SETTERS = frozenset({"state_dict_type", "set_state_dict_type"})
"""FSDP's ``state_dict_type(model, kind, config)`` (a context manager) and
``set_state_dict_type``: with a config of ``offload_to_cpu=True``, ``model.state_dict()``
returns CPU tensors."""
OFFLOAD_KEYWORDS = frozenset({"offload_to_cpu", "cpu_offload"})
"""``FullStateDictConfig(offload_to_cpu=True)``, ``StateDictOptions(cpu_offload=True)`` (the
options of ``torch.distributed.checkpoint.state_dict.get_state_dict`` and its siblings): the
state dict is gathered on the CPU."""
STATE_DICT_GETTERS = frozenset(
    {"get_state_dict", "get_model_state_dict", "get_optimizer_state_dict"}
)
"""``torch.distributed.checkpoint.state_dict``'s getters, which take ``options=``."""

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

# -- torch.distributed -------------------------------------------------------------------------

DISTRIBUTED_PREFIXES = ("torch.distributed.", "torch.distributed.distributed_c10d.")
"""Where ``torch.distributed``'s functions live under their qualified names."""
COLLECTIVES: dict[str, tuple[tuple[tuple[int, str], ...], tuple[int, str]]] = {
    "all_reduce": (((0, "tensor"),), (2, "group")),
    "broadcast": (((0, "tensor"),), (2, "group")),
    "reduce": (((0, "tensor"),), (3, "group")),
    "all_gather": (((1, "tensor"),), (2, "group")),
    "all_gather_into_tensor": (((0, "output_tensor"), (1, "input_tensor")), (2, "group")),
    "reduce_scatter_tensor": (((0, "output"), (1, "input")), (3, "group")),
    "gather": (((0, "tensor"),), (3, "group")),
    "scatter": (((0, "tensor"),), (3, "group")),
    "send": (((0, "tensor"),), (2, "group")),
    "recv": (((0, "tensor"),), (2, "group")),
    "isend": (((0, "tensor"),), (2, "group")),
    "irecv": (((0, "tensor"),), (2, "group")),
}
"""Collectives -> the parameters that take a tensor (position, keyword), and where ``group``
is: a collective runs on the backend its process group has for its tensors' device."""
GROUP_MAKERS = {"init_process_group": 0, "new_group": 2}
"""Calls that make a process group -> the position of their ``backend``."""
BACKEND_KEYWORDS = ("backend", "process_group_backend", "dist_backend")
"""The keywords by which calls outside torch name the backend of the group their processes
get (``dispatch.run(client, train, backend="gloo")``, a strategy's ``process_group_backend``)."""
BACKEND_NAMES = frozenset({"nccl", "gloo", "mpi", "ucc", "cpu", "cuda"})
"""Backends, and the devices of ``"cpu:gloo,cuda:nccl"`` mappings."""

# -- torch.distributions -----------------------------------------------------------------------

DISTRIBUTIONS_PACKAGE = "torch.distributions."
"""Where the distribution classes live: a capitalised name under it is one."""
DISTRIBUTION_WRAPPERS = frozenset(
    {"Independent", "TransformedDistribution", "ExpandedDistribution"}
)
"""Distributions built on a base distribution (``Independent(base, 1)``): they hold its
tensors."""
NOT_DISTRIBUTION_PARAMETERS = frozenset(
    {"validate_args", "reinterpreted_batch_ndims", "transforms"}
)
"""Arguments of a distribution that are no tensor parameters of it."""
DISTRIBUTION_SAMPLERS = frozenset({"sample", "rsample", "sample_n"})
"""A distribution's methods that draw samples: its parameters meet there."""
DISTRIBUTION_METHODS_OF_A_VALUE = frozenset({"log_prob", "cdf", "icdf"})
"""A distribution's methods given a value: the value meets its parameters there."""
DISTRIBUTION_STATISTICS = frozenset({"entropy", "enumerate_support", "perplexity"})
"""A distribution's methods that give a tensor on its parameters' device."""
DISTRIBUTION_ATTRIBUTES = frozenset(
    {"mean", "mode", "stddev", "variance", "loc", "scale", "probs", "logits", "covariance_matrix"}
)
"""A distribution's attributes that are tensors on its parameters' device."""

# -- torch.fx ----------------------------------------------------------------------------------

FX_PROXY_CHECKS = frozenset({"is_torch_fx_proxy", "is_fx_proxy"})
"""Functions (transformers') that test whether a value is a symbolic-tracing proxy."""
FX_PROXY_CLASSES = frozenset({"Proxy", "torch.fx.Proxy", "fx.Proxy"})
"""``torch.fx.Proxy`` as code spells it in ``isinstance`` tests: a proxy records operations
for a graph run later, on a device the analysis cannot see."""

# -- other libraries torch programs call -------------------------------------------------------

PASS_THROUGH = frozenset(
    {
        "iter",
        "tqdm.tqdm",
        "tqdm.auto.tqdm",
        "tqdm.notebook.tqdm",
        "tqdm.std.tqdm",
        "reversed",
        "sorted",
        "einops.rearrange",
        "einops.repeat",
        "copy.copy",
        "copy.deepcopy",
        "torch.autograd.Variable",
        "torch.autograd.variable.Variable",
    }
)
"""Calls whose result is their first argument, or lives where it lives: Python's ``iter``,
``reversed``, ``sorted`` and ``copy``, tqdm's progress bars, einops, torch's old ``Variable``."""
OFFLOAD_HOOKS = frozenset(
    {
        "cpu_offload",
        "cpu_offload_with_hook",
        "disk_offload",
        "dispatch_model",
        "add_hook_to_module",
        "attach_align_device_hook",
        "attach_align_device_hook_on_blocks",
    }
)
"""accelerate's hooks on a model: its weights move to the execution device at each call."""
OFFLOAD_METHODS = frozenset(
    {"enable_model_cpu_offload", "enable_sequential_cpu_offload", "enable_group_offload"}
)
"""diffusers pipelines' methods that put such hooks on their models
(``pipe.enable_model_cpu_offload()``)."""
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
