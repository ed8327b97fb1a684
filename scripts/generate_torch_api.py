#!/usr/bin/env python3
"""Generate ``devlint/core/torch_api.json``, the torch API table, from the installed torch.

Usage::

    python scripts/generate_torch_api.py           # (re)write the JSON
    python scripts/generate_torch_api.py --check   # exit 1 when the committed JSON is stale

Sources, all from the installed torch:

* ``torch._C._jit_get_all_schemas()``: the ATen schemas (typed parameters, returns) of
  ``torch.X``, ``torch.linalg/special/fft.X``, ``torch.Tensor.X`` and builtin
  ``torch.nn.functional.X``;
* ``inspect.signature`` and annotations of the Python functions (``torch.nn.functional``,
  ``torch.functional``);
* ``native_functions.yaml`` as packaged with torch (``torchgen/packaged``): for every ATen
  kernel whether it is a TensorIterator kernel (accepts a CPU 0-dim operand next to a CUDA
  tensor) or gets the generated exact-same-device check (does not);
* a trace of every tensor op on small meta tensors under a ``TorchDispatchMode``: which ATen
  kernels end up combining tensors that came from different arguments (so whether the call
  really requires one device, and how strictly), and whether the result is 0-dim (running
  ops on the meta device next to a CPU scalar is no guide: meta kernels skip most device
  checks, e.g. index_select accepts a CPU index, and some reject what CUDA accepts, e.g.
  masked_fill with a CPU 0-dim value);
* instantiating the ``torch.nn`` modules (parameters or buffers by default?) and the
  class hierarchy of ``torch.optim`` and ``torch.nn.modules.loss``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import itertools
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torchgen
from torch.utils._python_dispatch import TorchDispatchMode

OUTPUT = Path(__file__).resolve().parent.parent / "devlint" / "core" / "torch_api.json"
NATIVE_YAML = (
    Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
)

# ---------------------------------------------------------------------------------------
# Curated lists: only where signatures and experiments cannot tell.
# ---------------------------------------------------------------------------------------

# Handled by the analysis itself (they move tensors between devices by design).
TRANSFERS = {
    "to": "moves to the given device/dtype/tensor's device",
    "cuda": "moves to a CUDA device",
    "cpu": "moves to the CPU",
    "copy_": "copies across devices by design",
    "type": "a type string can name a CUDA tensor type",
    "type_as": "converts to the other tensor's type, device included",
    "set_": "takes the source's storage, device included",
    "xpu": "moves to an XPU device",
    "ipu": "moves to an IPU device",
    "mtia": "moves to an MTIA device",
}

# Factories without a usable ATen schema: Python-level constructors (as_tensor's schema takes
# a Tensor, which hides that it mostly builds from Python data); no device kwarg -> CPU.
PY_FACTORIES = ("tensor", "as_tensor", "asarray", "from_numpy", "frombuffer")

# Python wrappers without annotations or with (*args, **kwargs): one tensor in, result on
# its device.
PY_INHERIT = {
    "torch.unique": "input",
    "torch.lu": "A",
    "torch.nn.functional.softsign": "input",
    "torch.nn.functional.tanhshrink": "input",
    "torch.nn.functional.upsample": "input",
    "torch.nn.functional.upsample_bilinear": "input",
    "torch.nn.functional.upsample_nearest": "input",
}

# Index tensors may legally live on the CPU next to a CUDA tensor (advanced indexing), and
# CTC lengths/targets are CPU tensors for cuDNN: not a same-device requirement.
CPU_OPERANDS_OK = ("index", "index_put", "index_put_", "ctc_loss")

# Tensor methods implemented in C/Python with no ATen schema and no signature.
METHODS_WITHOUT_SCHEMA = {
    # dtype conversions and in-place helpers: the result stays on the receiver's device
    **dict.fromkeys(
        ["bfloat16", "bool", "byte", "cdouble", "cfloat", "char", "double", "float", "half"],
        "inherit",
    ),
    **dict.fromkeys(["int", "long", "short", "share_memory_", "as_subclass", "unique"], "inherit"),
    **dict.fromkeys(["new_tensor", "new"], "like"),
    **dict.fromkeys(
        ["tolist", "numpy", "data_ptr", "const_data_ptr", "dim_order", "ndimension", "nelement"],
        "non_tensor",
    ),
    **dict.fromkeys(
        ["is_shared", "storage", "untyped_storage", "storage_type", "register_hook"],
        "non_tensor",
    ),
    "register_post_accumulate_grad_hook": "non_tensor",
}

# ATen names no user calls: internal kernels, quantized/sparse/backend-specific plumbing,
# the *_copy twins of view ops (for functionalization).
INTERNAL_OP = re.compile(
    r"^_|_backward|_forward$|(?<!index)_copy$|_foreach|_nested|quantized|"
    r"^(q_|fake_quantize|quantize|dequantize|fbgemm_|mkldnn_|cudnn_|miopen_|native_|fused_|"
    r"batch_norm_|sparse_|is_vulkan|nested_|segment_reduce|sym_|choose_qparams)|"
    r"^(int_repr|indices|values|crow_indices|col_indices|ccol_indices|row_indices)$"
)

# A few argument values the synthesizer cannot derive from a type.
STR_ARGS = {"equation": "ab,bc->ac", "indexing": "ij"}

# Kernels that take tensors from any device by design: using them is not combining.
CROSS_DEVICE_KERNELS = {"copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "set_"}

# ---------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------

TENSOR, TENSOR_SEQ = "tensor", "tensor_seq"


@dataclass
class Param:
    """One parameter: Python name, coarse type category, whether it must be given."""

    name: str
    cat: str
    required: bool
    kwarg_only: bool = False
    default: Any = None
    varargs: bool = False


@dataclass
class Sig:
    """One overload as Python sees it."""

    params: list[Param]
    returns_tensor: bool
    key: str = ""  # native_functions.yaml key of an ATen overload ("add.Tensor"), else ""

    def tensors(self) -> list[Param]:
        return [p for p in self.params if p.cat in (TENSOR, TENSOR_SEQ)]


def schema_cat(type_str: str) -> str:
    """Coarse category of an ATen argument type."""
    t = type_str[len("Optional[") : -1] if type_str.startswith("Optional[") else type_str
    if type_str in ("Tensor", "Optional[Tensor]"):
        return TENSOR
    if "Tensor" in type_str and type_str.startswith(("List[", "Optional[List[")):
        return TENSOR_SEQ
    return {
        "int": "int",
        "List[int]": "int_list",
        "float": "float",
        "number": "scalar",
        "bool": "bool",
        "str": "str",
        "ScalarType": "dtype",
        "Device": "device",
        "Layout": "layout",
        "MemoryFormat": "memory_format",
        "Generator": "generator",
    }.get(t, "other")


def load_schemas() -> dict[str, list[Sig]]:
    """ATen op name -> its overloads that Python can call (no out=, Dimname, scalar-only)."""
    ops: dict[str, list[Sig]] = {}
    for s in torch._C._jit_get_all_schemas():
        ns, _, name = s.name.partition("::")
        if ns != "aten":
            continue
        types = [str(a.real_type) for a in s.arguments]
        rtypes = [str(r.real_type) for r in s.returns]
        if any(a.is_out for a in s.arguments) or any("Dimname" in t for t in types):
            continue
        if not any("Tensor" in t for t in types + rtypes):
            continue  # TorchScript-only scalar/list overloads
        params = [
            Param(
                a.name,
                schema_cat(t),
                not a.has_default_value(),
                a.kwarg_only,
                a.default_value if a.has_default_value() else None,
            )
            for a, t in zip(s.arguments, types, strict=True)
        ]
        key = f"{name}.{s.overload_name}" if s.overload_name else name
        ops.setdefault(name, []).append(Sig(params, any("Tensor" in t for t in rtypes), key))
    return ops


def annotation_cat(ann: Any) -> str | None:
    """Category of a Python annotation (None when absent)."""
    if ann is inspect.Parameter.empty:
        return None
    text = ann if isinstance(ann, str) else inspect.formatannotation(ann)
    if re.match(r"(typing\.|typing_extensions\.)?(TypeIs|TypeGuard)\[", text):
        return "bool"
    if "Tensor" in text:
        return TENSOR_SEQ if re.search(r"(list|List|Sequence|tuple|Tuple)\[", text) else TENSOR
    for cat, pattern in (
        ("int_list", r"(list|List|tuple|Tuple|Sequence)\[int"),
        ("bool", r"^(bool|bool \| None|Optional\[bool\])$"),
        ("int", r"^(int|int \| None|Optional\[int\]|BroadcastingList\d\[int\])"),
        ("float", r"^(float|float \| None|Optional\[float\])$"),
        ("str", r"^(str|str \| None|Optional\[str\])$"),
        ("dtype", r"DType|dtype"),
    ):
        if re.search(pattern, text):
            return cat
    return "other"


def python_sig(fn: Callable[..., Any]) -> Sig | None:
    """The overload of a Python function whose annotations name a Tensor parameter."""
    if not inspect.isfunction(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        cat = annotation_cat(p.annotation)
        if p.kind is p.VAR_KEYWORD or p.name == "out":
            continue
        if p.kind is p.VAR_POSITIONAL:
            cat = TENSOR_SEQ if cat == TENSOR else cat
        params.append(
            Param(
                p.name,
                cat or "other",
                p.default is p.empty,
                p.kind is p.KEYWORD_ONLY,
                None if p.default is p.empty else p.default,
                p.kind is p.VAR_POSITIONAL,
            )
        )
    ret = annotation_cat(sig.return_annotation)
    if ret is None or ret == "other":  # not annotated, or Any and the like: unknown
        return None
    if not any(p.cat in (TENSOR, TENSOR_SEQ) for p in params):
        # predicates and the like (is_tensor(obj) -> bool); not setters or getters
        return Sig(params, False) if params and ret in ("bool", "int", "float", "str") else None
    return Sig(params, ret in (TENSOR, TENSOR_SEQ))


# ---------------------------------------------------------------------------------------
# native_functions.yaml: how strictly a kernel checks devices
# ---------------------------------------------------------------------------------------

STRICT, LOOSE, UNKNOWN = "strict", "loose", "unknown"
# CompositeExplicitAutograd kernels: look inside; if that fails, the declared device check
# (exact-same by default, or NoCheck) decides.
COMPOSITE = {"composite": STRICT, "composite_nocheck": LOOSE}


def load_native() -> dict[str, dict[str, Any]]:
    """native_functions.yaml entries by "name.overload": the top-level keys as strings and
    "dispatch" as the set of dispatch keys (a line reader; the file's layout is regular)."""
    entries: dict[str, dict[str, Any]] = {}
    entry: dict[str, Any] | None = None
    in_dispatch = False
    for raw in NATIVE_YAML.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if line.startswith("- func:"):
            entry = {"dispatch": set()}
            entries[line[len("- func:") :].strip().split("(", 1)[0]] = entry
            in_dispatch = False
        elif line.strip() and entry is not None:
            key, _, value = line.strip().partition(":")
            if len(line) - len(line.lstrip()) == 2:
                in_dispatch = key == "dispatch"
                entry.setdefault(key, value.strip())
            elif in_dispatch:
                entry["dispatch"].update(k.strip() for k in key.split(","))
    return entries


def kernel_rule(native: dict[str, dict[str, Any]], key: str) -> str:
    """How an ATen kernel ("add.Tensor") treats devices.

    STRICT: the generated CUDA wrapper checks that all tensors are on one device (a CPU 0-dim
    tensor is rejected); LOOSE: the kernel checks devices itself (TensorIterator kernels accept
    a CPU 0-dim operand); a COMPOSITE key: a device-agnostic composite kernel; else UNKNOWN.
    """
    entry = native.get(key)
    if entry is None:
        return UNKNOWN
    delegate = native.get(entry.get("structured_delegate", ""), {})
    if "TensorIteratorBase" in (
        entry.get("structured_inherits"),
        delegate.get("structured_inherits"),
    ):
        return LOOSE
    nocheck = entry.get("device_check") == "NoCheck"
    keys = entry["dispatch"] | delegate.get("dispatch", set())
    composite = {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}
    if keys & composite and not keys & {"CPU", "CUDA"}:
        return "composite_nocheck" if nocheck else "composite"
    if nocheck:
        return LOOSE
    return STRICT if "CUDA" in keys else UNKNOWN


# ---------------------------------------------------------------------------------------
# The trace: run an op on meta tensors and watch the ATen kernels it reaches
# ---------------------------------------------------------------------------------------


@dataclass
class Trace:
    """What one successful call showed."""

    combining: list[str] = field(default_factory=list)  # kernel rules of combining kernels
    zero_dim: bool = False  # every tensor result is 0-dim


CPU = torch._C.DispatchKey.CPU
CPU_KEYS = torch._C.DispatchKeySet(CPU)


class Tracer(TorchDispatchMode):
    """Records the ATen kernels that see tensors derived from two different arguments."""

    def __init__(self, native: dict[str, dict[str, Any]], taints: dict[int, frozenset[int]]):
        super().__init__()
        self.native = native
        self.taints = taints
        self.keep: list[Any] = []
        self.combining: list[str] = []

    def _parts(self, obj: Any) -> list[frozenset[int]]:
        """The taints (argument indices it derives from) of each tensor in obj."""
        if isinstance(obj, torch.Tensor):
            return [self.taints.get(id(obj), frozenset())]
        if isinstance(obj, (list, tuple)):
            return [t for o in obj for t in self._parts(o)]
        return []

    def _mark(self, obj: Any, taint: frozenset[int]) -> None:
        if isinstance(obj, torch.Tensor):
            self.keep.append(obj)
            self.taints[id(obj)] = self.taints.get(id(obj), frozenset()) | taint
        elif isinstance(obj, (list, tuple)):
            for o in obj:
                self._mark(o, taint)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name.partition("::")[2]
        key = name if func._overloadname == "default" else f"{name}.{func._overloadname}"
        parts = self._parts(list(args) + list(kwargs.values()))
        combines = any(not (a <= b or b <= a) for a in parts for b in parts)
        rule = kernel_rule(self.native, key) if func.namespace == "aten" else UNKNOWN
        if name in CROSS_DEVICE_KERNELS:
            rule = ""
        out = None
        if combines and rule in COMPOSITE and not func.has_kernel_for_dispatch_key(CPU):
            # Run the composite kernel (it fills the CPU slot; its code is device-agnostic)
            # with this mode active to see which kernels it calls.
            mark = len(self.combining)
            try:
                with self:
                    out = func.redispatch(CPU_KEYS, *args, **kwargs)
                rule = ""
            except NotImplementedError:  # reaches a kernel meta tensors lack: judge the whole
                del self.combining[mark:]
                out = None
        if combines and rule:
            self.combining.append(COMPOSITE.get(rule, rule))
        if out is None:
            out = func(*args, **kwargs)
        self._mark(out, frozenset().union(*parts))
        return out


INDEX_NAMES = re.compile(r"index|indices|target|labels|offsets|idx|lengths")
MASK_NAMES = re.compile(r"mask|condition")
# Shapes to try: (the first tensor argument, the other tensor arguments).
SHAPES = [
    ((2, 2), (2, 2)),
    ((2, 2), (2,)),
    ((2,), (2,)),
    ((2, 2, 2), (2, 2, 2)),
    ((2, 2, 2), (2,)),
    ((1, 2, 2, 2), (1, 2, 2, 2)),
    ((1, 2, 2, 2), (2, 2, 2, 2)),
    ((1, 2, 2, 2), (2,)),
    ((1, 2, 2, 2, 2), (2, 2, 2, 2, 2)),
    ((1, 2, 2, 2, 2), (2,)),
    ((2, 2), ()),
]


def tensor_dtypes(sig: Sig) -> Iterator[dict[str, torch.dtype]]:
    """Dtype assignments to try: by parameter name, all float, then one index at a time."""
    names = [p.name for p in sig.tensors()]
    yield {
        n: torch.long
        if INDEX_NAMES.search(n.lower())
        else torch.bool
        if MASK_NAMES.search(n.lower())
        else torch.float
        for n in names
    }
    yield dict.fromkeys(names, torch.float)
    for index in names:
        yield {n: torch.long if n == index else torch.float for n in names}


def arg_value(p: Param, shape: tuple[int, ...], make: Callable[[Param], Any]) -> Any:
    """A plausible value for a parameter (raises LookupError when there is none)."""
    name = p.name.lower()
    if p.cat == TENSOR:
        return make(p)
    if p.cat == TENSOR_SEQ:
        return [make(p), make(p)]
    if p.cat == "int":
        return 0 if re.search(r"dim|index|start|offset|diagonal|axis|padding_idx", name) else 1
    if p.cat == "int_list":
        if re.search(r"^(size|shape|sizes)$", name):
            return list(shape)
        if name.endswith("shape"):
            return list(shape[-1:])
        if name in ("dims", "perm", "permutation"):
            return list(range(len(shape)))
        if "dim" in name:
            return [0]
        return [0, 0] if name == "pad" else [1]
    if p.cat in ("float", "scalar"):
        return 0.5 if name == "p" else 1
    if p.cat == "bool":
        return False
    if p.cat == "str" and name in STR_ARGS:
        return STR_ARGS[name]
    values = {
        "dtype": torch.float32,
        "device": "meta",
        "layout": torch.strided,
        "memory_format": torch.contiguous_format,
        "generator": None,
    }
    if p.cat in values:
        return values[p.cat]
    raise LookupError(p.name)


Plan = Callable[[dict[str, Any]], tuple[Callable[..., Any], list[Any], dict[str, Any]]]


def attempts(sig: Sig, fill_optional: bool) -> Iterator[tuple[dict[str, Any], dict[int, int]]]:
    """Argument sets to try, each with the argument index of every tensor in it."""
    for dtypes, by_role in itertools.product(tensor_dtypes(sig), (False, True)):
        for first, other in SHAPES:
            origin: dict[int, int] = {}

            def make(
                p: Param, first=first, other=other, dtypes=dtypes, origin=origin, by_role=by_role
            ) -> Any:
                if by_role:  # index and mask tensors get the other shape
                    shape = first if dtypes[p.name] == torch.float else other
                else:  # the first tensor gets the first shape
                    shape = first if not origin else other
                t = torch.empty(shape, dtype=dtypes[p.name], device="meta")
                origin[id(t)] = len(origin)
                return t

            try:
                values = {
                    p.name: arg_value(p, first, make)
                    for p in sig.params
                    if p.required or (fill_optional and p.cat in (TENSOR, TENSOR_SEQ))
                }
            except LookupError:
                return
            yield values, origin


def trace_call(
    plan: Plan, sig: Sig, native: dict[str, dict[str, Any]], fill_optional: bool
) -> Trace | None:
    """Call the op on meta tensors under the tracer; None when no argument set works."""
    for values, origin in attempts(sig, fill_optional):
        taints = {key: frozenset({index}) for key, index in origin.items()}
        try:
            fn, args, kwargs = plan(values)
        except Exception:
            continue
        calls = [args]
        lists = [i for i, a in enumerate(args) if isinstance(a, list)]
        if len(lists) == 1:  # Python wrappers that take *tensors
            calls.append(args[: lists[0]] + args[lists[0]] + args[lists[0] + 1 :])
        for call_args in calls:
            tracer = Tracer(native, dict(taints))
            tracer.keep.extend(values.values())
            try:
                with tracer, warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = fn(*call_args, **kwargs)
            except Exception:
                continue
            outs = out if isinstance(out, (list, tuple)) else [out]
            tensors = [o for o in outs if isinstance(o, torch.Tensor)]
            zero = bool(tensors) and all(o.dim() == 0 for o in tensors)
            return Trace(tracer.combining, zero)
    return None


def call_plan(target: Callable[..., Any] | str, sig: Sig, method: bool) -> Plan:
    """How to call a function (or, by name, a method) with values by parameter name."""

    def plan(values: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
        fn: Any = target
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        skipped = False
        for p in sig.params:
            if method and p.name == "self":
                fn = getattr(values[p.name], str(target))
            elif p.name not in values:
                skipped = skipped or not p.kwarg_only
            elif p.varargs:
                args.extend(values[p.name])
            elif p.kwarg_only or skipped:
                kwargs[python_name(p.name, method)] = values[p.name]
            else:
                args.append(values[p.name])
        return fn, args, kwargs

    return plan


# ---------------------------------------------------------------------------------------
# Classification
# ---------------------------------------------------------------------------------------


@dataclass
class Entry:
    kind: str
    tensor_params: list[str] = field(default_factory=list)
    sequence_param: str | None = None
    strict: bool = False
    reduces: bool = False
    size_params: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind}
        if self.tensor_params:
            data["tensor_params"] = self.tensor_params
        for name in ("sequence_param", "strict", "reduces", "size_params"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        return data


def python_name(name: str, method: bool) -> str:
    """The name Python gives an ATen parameter (``self`` is ``input`` for functions)."""
    return "input" if name == "self" and not method else name


def classify(
    name: str,
    sigs: list[Sig],
    plan_for: Callable[[Sig], Callable[..., Any]],
    native: dict[str, dict[str, Any]],
    method: bool,
) -> Entry | None:
    """Classify one public callable from its overloads (and a trace of each)."""
    if not any(s.returns_tensor for s in sigs):
        return Entry("non_tensor")
    sigs = [s for s in sigs if s.returns_tensor]
    has_device = [any(p.cat == "device" for p in s.params) for s in sigs]
    tensor_names: list[str] = []
    sequence: str | None = None
    for s in sigs:
        for p in s.tensors():
            if method and p.name == "self":
                continue
            pname = python_name(p.name, method)
            if pname not in tensor_names:
                tensor_names.append(pname)
            if p.cat == TENSOR_SEQ and sequence is None:
                sequence = pname
    base = name.rsplit(".", 1)[-1]
    if all(has_device) and any(not s.tensors() for s in sigs):
        sized = any(p.name == "size" and p.cat == "int_list" for s in sigs for p in s.params)
        zero = [trace_call(plan_for(s), s, native, fill_optional=False) for s in sigs]
        return Entry("factory", size_params=sized, reduces=any(t and t.zero_dim for t in zero))
    if any(has_device) and (base.endswith("_like") or base.startswith("new_")):
        return Entry("like", tensor_names)
    if not any(s.tensors() for s in sigs):
        return None  # e.g. torch.normal(mean, std, size): unknown device
    if base in CPU_OPERANDS_OK:  # only the indexed tensor counts
        return Entry("inherit", [] if method else tensor_names[:1])

    reduces = False
    combining: list[str] = []  # kernel rules of the kernels that combine arguments
    untraced: list[str] = []  # the same, for overloads no argument set could call
    traced = False
    for s in sigs:
        plan = plan_for(s)
        required = trace_call(plan, s, native, fill_optional=False)
        if required is not None:
            reduces = reduces or required.zero_dim
        if sum(2 if p.cat == TENSOR_SEQ else 1 for p in s.tensors()) < 2:
            continue
        full = trace_call(plan, s, native, fill_optional=True) or required
        if full is not None:
            traced = True
            combining += full.combining
        else:
            rule = kernel_rule(native, s.key) if s.key else UNKNOWN
            untraced.append(COMPOSITE.get(rule, rule))
    # an untraced composite overload probably behaves like its traced siblings
    combining += [r for r in untraced if r != UNKNOWN or not traced]
    if combining:
        strict = all(rule == STRICT for rule in combining)
        return Entry("combine", tensor_names, sequence, strict, reduces)
    return Entry("inherit", tensor_names, sequence, False, reduces)


# ---------------------------------------------------------------------------------------
# Public callables
# ---------------------------------------------------------------------------------------

NAMESPACES = (
    ("torch", torch, ""),
    ("torch.linalg", torch.linalg, "linalg_"),
    ("torch.special", torch.special, "special_"),
    ("torch.fft", torch.fft, "fft_"),
    ("torch.nn.functional", torch.nn.functional, ""),
)


def public_names(obj: Any) -> Iterator[str]:
    """Public callables of a module (torch.nn.functional keeps e.g. *_forward)."""
    internal = INTERNAL_OP if obj is not torch.nn.functional else re.compile("^_")
    for name in sorted(dir(obj)):
        if not internal.search(name):
            value = getattr(obj, name, None)
            if callable(value) and not inspect.isclass(value):
                yield name


def build_functions(
    schemas: dict[str, list[Sig]], native: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """qualname -> entry for torch.X, torch.linalg/special/fft.X, torch.nn.functional.X."""
    table: dict[str, dict[str, Any]] = {}
    for prefix, module, aten_prefix in NAMESPACES:
        for name in public_names(module):
            qualname = f"{prefix}.{name}"
            if name in TRANSFERS:
                continue
            if prefix == "torch" and name in PY_FACTORIES:
                table[qualname] = Entry("factory").to_json()
                continue
            if qualname in PY_INHERIT:
                table[qualname] = Entry("inherit", [PY_INHERIT[qualname]]).to_json()
                continue
            fn = getattr(module, name)
            psig = python_sig(fn)
            if psig is not None and getattr(fn, "__module__", "").startswith("torch"):
                sigs = [psig]
            else:
                sigs = schemas.get(aten_prefix + name, [])
            if not sigs:
                continue

            def plan_for(s: Sig, fn: Any = fn) -> Callable[..., Any]:
                return call_plan(fn, s, method=False)

            entry = classify(qualname, sigs, plan_for, native, method=False)
            if entry is not None:
                table[qualname] = entry.to_json()
    return table


def build_methods(
    schemas: dict[str, list[Sig]], native: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """method name -> entry for torch.Tensor.X."""
    table: dict[str, dict[str, Any]] = {}
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_") or INTERNAL_OP.search(name) or name in TRANSFERS:
            continue
        if not callable(getattr(torch.Tensor, name)):
            continue  # properties (shape, T, real, ...)
        if name in METHODS_WITHOUT_SCHEMA:
            table[name] = Entry(METHODS_WITHOUT_SCHEMA[name]).to_json()
            continue
        sigs = [s for s in schemas.get(name, []) if any(p.name == "self" for p in s.tensors())]
        if not sigs:
            continue

        def plan_for(s: Sig, name: str = name) -> Callable[..., Any]:
            return call_plan(name, s, method=True)

        entry = classify(name, sigs, plan_for, native, method=True)
        if entry is not None:
            table[name] = entry.to_json()
    return table


# ---------------------------------------------------------------------------------------
# Modules and optimizers
# ---------------------------------------------------------------------------------------

# Containers and wrappers: whether they own state depends on what they are given.
STATE_FROM_CONTENTS = (
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Container",
    "DataParallel",
    "DistributedDataParallel",
)


def module_arg(param: inspect.Parameter, small: int) -> Any:
    """A small value for a constructor parameter, guided by its annotation."""
    ann = param.annotation
    text = ann if isinstance(ann, str) else inspect.formatannotation(ann)
    submodule = getattr(torch.nn, text.strip("'\""), None)
    if inspect.isclass(submodule) and issubclass(submodule, torch.nn.Module):
        return instantiate(submodule)  # e.g. TransformerEncoder(encoder_layer, num_layers)
    cat = annotation_cat(ann)
    return {"int_list": [small], "float": 0.5, "bool": False}.get(cat or "", small)


def instantiate(cls: type) -> torch.nn.Module | None:
    """An instance built with small values for the required arguments, or None."""
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    for small in (2, 1, 4):
        candidates = [[module_arg(p, small) for p in required]]
        if varargs and not required:  # e.g. nn.RNN(*args, **kwargs)
            candidates += [[small] * n for n in (1, 2, 3)]
        for args in candidates:
            try:
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    return cls(*args)
            except Exception:
                continue
    return None


def build_modules() -> dict[str, dict[str, Any]]:
    """qualname -> {"stateful": bool | None, "loss": bool} for the classes in torch.nn."""
    loss_base = torch.nn.modules.loss._Loss
    table: dict[str, dict[str, Any]] = {}
    for prefix, module in (("torch.nn", torch.nn), ("torch.nn.parallel", torch.nn.parallel)):
        for name in sorted(dir(module)):
            cls = getattr(module, name)
            if name.startswith("_") or not (
                inspect.isclass(cls) and issubclass(cls, torch.nn.Module)
            ):
                continue
            stateful: bool | None = None
            if name not in STATE_FROM_CONTENTS:
                instance = instantiate(cls)
                if instance is not None:
                    stateful = any(True for _ in instance.parameters()) or any(
                        True for _ in instance.buffers()
                    )
            table[f"{prefix}.{name}"] = {"stateful": stateful, "loss": issubclass(cls, loss_base)}
    return table


def build_optimizers() -> list[str]:
    return sorted(
        f"torch.optim.{name}"
        for name in dir(torch.optim)
        if inspect.isclass(getattr(torch.optim, name))
        and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
    )


def build_wrapper_attributes() -> list[str]:
    """What ``model.<name>`` may read on a DataParallel/DDP wrapper without AttributeError:
    the class attributes of both wrappers and what their ``__init__`` sets on ``self``."""
    names: set[str] = set()
    for cls in (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel):
        names.update(dir(cls))
        source = inspect.getsource(cls.__init__)
        names.update(re.findall(r"self\.(\w+)\s*(?::[^=]+)?=(?!=)", source))
    names.update(vars(torch.nn.DataParallel(torch.nn.Linear(1, 1))))
    return sorted(name for name in names if not name.startswith("__"))


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def generate() -> str:
    """The JSON text."""
    torch.set_num_threads(1)
    schemas = load_schemas()
    native = load_native()
    data = {
        "torch_version": torch.__version__,
        "functions": build_functions(schemas, native),
        "methods": build_methods(schemas, native),
        "modules": build_modules(),
        "optimizers": build_optimizers(),
        "transfers": TRANSFERS,
        "wrapper_attributes": build_wrapper_attributes(),
    }
    return json.dumps(data, sort_keys=True, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the JSON is stale")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale: run python scripts/generate_torch_api.py", file=sys.stderr)
            return 1
        print(f"{OUTPUT} is up to date (torch {torch.__version__})")
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT} ({len(text.encode())} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
