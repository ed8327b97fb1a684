"""The device lattice obeys the join laws, and conflicts follow PyTorch's rules."""

from hypothesis import given
from hypothesis import strategies as st

from devlint.core.lattice import (
    BOTTOM,
    CPU,
    MAYBE_ACCEL,
    UNKNOWN,
    Concrete,
    Symbol,
    conflict,
    join,
)
from devlint.core.values import join_ndim
from devlint.diagnostic import Severity

devices = st.one_of(
    st.sampled_from([BOTTOM, UNKNOWN, MAYBE_ACCEL, CPU, Concrete("meta"), Concrete("mps")]),
    st.builds(Concrete, st.just("cuda"), st.one_of(st.none(), st.integers(0, 2))),
    st.builds(Symbol, st.sampled_from(["device", "args.device", "x.device"]), st.booleans()),
    st.builds(  # a GPU's index: `x.cuda(rank)`
        Symbol, st.sampled_from(["rank", "device"]), st.just(True), gpu=st.booleans()
    ),
)
guards = st.booleans()


@given(devices, devices, guards)
def test_join_is_commutative(a, b, guarded):
    assert join(a, b, guarded=guarded) == join(b, a, guarded=guarded)


@given(devices, devices, devices, guards)
def test_join_is_associative(a, b, c, guarded):
    left = join(join(a, b, guarded=guarded), c, guarded=guarded)
    right = join(a, join(b, c, guarded=guarded), guarded=guarded)
    assert left == right


@given(devices, guards)
def test_join_is_idempotent_with_bottom_as_identity(a, guarded):
    assert join(a, a, guarded=guarded) == a
    assert join(a, BOTTOM, guarded=guarded) == a


@given(devices, devices)
def test_conflict_is_symmetric(a, b):
    assert conflict(a, b) == conflict(b, a)


def test_cpu_joined_with_cuda_is_unknown_without_a_guard():
    assert join(CPU, Concrete("cuda")) is UNKNOWN


def test_cpu_joined_with_cuda_under_an_availability_guard_is_maybe_accel():
    assert join(CPU, Concrete("cuda"), guarded=True) is MAYBE_ACCEL
    assert join(MAYBE_ACCEL, Concrete("cuda", 0), guarded=True) is MAYBE_ACCEL


def test_cpu_or_another_gpu_under_a_guard_is_maybe_accel():
    # `"cuda:1" if torch.cuda.is_available() else "cpu"`: an accelerator when there is one
    assert join(CPU, Concrete("cuda", 1), guarded=True) is MAYBE_ACCEL
    assert join(CPU, Concrete("cuda", 1)) is UNKNOWN


def test_two_gpus_join_into_a_gpu_whose_index_is_unknown():
    # `torch.device("cuda:0" if torch.cuda.is_available() else "cuda:1")`
    for guarded in (False, True):
        assert join(Concrete("cuda", 0), Concrete("cuda", 1), guarded=guarded) == Concrete("cuda")
    assert conflict(Concrete("cuda"), CPU) is Severity.ERROR
    assert conflict(Concrete("cuda"), Concrete("cuda", 1)) is None


def test_two_known_devices_are_an_error():
    assert conflict(CPU, Concrete("cuda")) is Severity.ERROR
    assert conflict(Concrete("cuda", 0), Concrete("cuda", 1)) is Severity.ERROR


def test_current_cuda_device_is_compatible_with_any_index():
    assert conflict(Concrete("cuda"), Concrete("cuda", 1)) is None


def test_cpu_against_a_device_variable_is_a_warning():
    assert conflict(CPU, Symbol("device")) is Severity.WARNING
    assert conflict(CPU, MAYBE_ACCEL) is Severity.WARNING


def test_opaque_symbols_and_unknown_never_conflict():
    assert conflict(CPU, Symbol("x", accel=False)) is None
    assert conflict(CPU, UNKNOWN) is None
    assert conflict(Symbol("a"), Symbol("b")) is None
    assert conflict(Concrete("meta"), CPU) is None


def test_paths_agree_on_the_fewer_dimensions_they_both_have() -> None:
    assert join_ndim(2, 1) == 1
    assert join_ndim(3, 3) == 3
    assert join_ndim(2, 0) is None  # one path may be a cpu 0-dim tensor
    assert join_ndim(2, None) is None


def test_a_gpu_chosen_by_index_joins_as_cuda_does() -> None:
    """`x.cuda(rank)` is a GPU whatever `rank` holds: under an availability guard it joins
    the cpu into "cuda when available", and it joins another GPU into `cuda`."""
    by_index = Symbol("args.gpu", gpu=True)
    assert join(CPU, by_index, guarded=True) is MAYBE_ACCEL
    assert join(CPU, by_index) is UNKNOWN
    assert join(CPU, Symbol("args.gpu"), guarded=True) is UNKNOWN  # may be the cpu
    assert join(by_index, Concrete("cuda", 0)) == Concrete("cuda")
    assert join(by_index, Symbol("args.gpu")) == Symbol("args.gpu")
    assert not join(by_index, Symbol("args.gpu")).gpu
