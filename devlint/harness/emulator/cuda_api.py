"""``torch.cuda`` and ``torch.accelerator`` answering as if the virtual GPUs exist.

Streams are all synchronous except for the one thing a program can observe:
a non-blocking device-to-host copy lands only when the host synchronises.
"""

from __future__ import annotations

import functools
import os
import time
from collections import namedtuple
from typing import Any

import torch

from devlint.harness.emulator.errors import invalid_device_ordinal
from devlint.harness.emulator.patches import Patches
from devlint.harness.emulator.state import EmulatorState

DEVICE_NAME = "devlint emulated GPU"
TOTAL_MEMORY = 16 * 1024**3

Properties = namedtuple(
    "Properties",
    "name major minor total_memory multi_processor_count is_integrated is_multi_gpu_board",
)


def install(patches: Patches, state: EmulatorState) -> None:
    """Replace the queries of ``torch.cuda`` / ``torch.accelerator`` by the emulator's answers."""
    cuda, accelerator = torch.cuda, torch.accelerator

    def index_of(device: Any = None) -> int:
        if device is None:
            return state.current
        if isinstance(device, int):
            return device
        device = torch.device(device)
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return state.current if device.index is None else device.index

    def checked(device: Any = None) -> int:
        state.initialize()
        index = index_of(device)
        if not 0 <= index < state.gpus:
            raise invalid_device_ordinal()
        return index

    def set_device(device: Any) -> None:
        state.current = checked(device)

    def synchronize(device: Any = None) -> None:
        state.initialize()
        state.synchronize()

    def properties(device: Any = None) -> Properties:
        state.initialize()
        if not 0 <= index_of(device) < state.gpus:
            raise AssertionError("Invalid device id")  # torch.cuda.get_device_properties
        return Properties(DEVICE_NAME, 8, 0, TOTAL_MEMORY, 108, False, False)

    def memory_allocated(device: Any = None) -> int:
        return state.allocated[checked(device)]

    def max_memory_allocated(device: Any = None) -> int:
        return state.peak[checked(device)]

    def reset_peak_memory_stats(device: Any = None) -> None:
        index = checked(device)
        state.peak[index] = state.allocated[index]

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        return TOTAL_MEMORY - state.allocated[checked(device)], TOTAL_MEMORY

    class DeviceContext:
        """``torch.cuda.device(i)`` / ``torch.accelerator.device_index(i)``."""

        def __init__(self, device: Any) -> None:
            self.index = None if device is None or device == -1 else index_of(device)
            self.previous = -1

        def __enter__(self) -> None:
            if self.index is not None:
                self.previous = state.current
                set_device(self.index)

        def __exit__(self, *exc_info: object) -> None:
            if self.index is not None:
                state.current = self.previous

    class Stream:
        """A CUDA stream whose work is done by the time it is queued."""

        def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
            self.device_index = index_of(device)
            self.device = torch.device("cuda", self.device_index)

        def synchronize(self) -> None:
            state.synchronize()

        def query(self) -> bool:
            return not state.pending

        def is_capturing(self) -> bool:
            return False

        def wait_stream(self, stream: Any) -> None:
            pass

        def wait_event(self, event: Any) -> None:
            pass

        def record_event(self, event: Any = None) -> Any:
            event = event or Event()
            event.record(self)
            return event

        def __enter__(self) -> Stream:
            return self

        def __exit__(self, *exc_info: object) -> None:
            pass

    class Event:
        def __init__(self, enable_timing: bool = False, **kwargs: Any) -> None:
            self.time = 0.0

        def record(self, stream: Any = None) -> None:
            self.time = time.perf_counter()

        def synchronize(self) -> None:
            state.synchronize()

        def query(self) -> bool:
            return not state.pending

        def wait(self, stream: Any = None) -> None:
            pass

        def elapsed_time(self, end: Event) -> float:
            return (end.time - self.time) * 1000.0

    streams: dict[int, Stream] = {}

    def current_stream(device: Any = None) -> Stream:
        index = checked(device)
        if index not in streams:
            streams[index] = Stream(index)
        return streams[index]

    def lazy_init() -> None:
        state.initialize()

    def is_available() -> bool:
        if os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK") != "1":
            state.poison_fork()  # torch asks the CUDA runtime, which initialises the driver
        return state.gpus > 0

    generators = tuple(_gpu_generator(torch.Generator, index) for index in range(state.gpus))

    def get_rng_state(device: Any = "cuda") -> torch.Tensor:
        return generators[checked(device)].get_state()

    def set_rng_state(new_state: torch.Tensor, device: Any = "cuda") -> None:
        generators[checked(device)].set_state(new_state)

    def current_generator() -> list[Any]:
        """The current GPU's generator, without touching CUDA: torch queues the seeding
        functions until CUDA is initialised (``_lazy_call``), so they never fail, not even
        on a machine without GPUs."""
        return [generators[state.current]] if state.current < len(generators) else []

    def manual_seed(seed: int) -> None:
        for generator in current_generator():
            generator.manual_seed(seed)

    def manual_seed_all(seed: int) -> None:
        for generator in generators:
            generator.manual_seed(seed)

    def seed() -> None:
        for generator in current_generator():
            generator.seed()

    def seed_all() -> None:
        for generator in generators:
            generator.seed()

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    answers: dict[str, Any] = {
        "is_available": is_available,
        "device_count": lambda: state.gpus,
        "is_initialized": lambda: state.initialized,
        "init": lazy_init,
        "_lazy_init": lazy_init,
        "current_device": lambda: checked(),
        "set_device": set_device,
        "get_device_name": lambda device=None: properties(device).name,
        "get_device_capability": lambda device=None: (properties(device).major, 0),
        "get_device_properties": properties,
        "synchronize": synchronize,
        "_sleep": nothing,  # spins a real GPU's stream; emulated streams have no time
        "device": DeviceContext,
        "device_of": lambda tensor: DeviceContext(tensor.get_device() if tensor.is_cuda else -1),
        "Stream": Stream,
        "Event": Event,
        "current_stream": current_stream,
        "default_stream": current_stream,
        "stream": lambda stream=None: stream or Stream(),
        "set_stream": nothing,
        "is_current_stream_capturing": lambda: False,
        "memory_allocated": memory_allocated,
        "max_memory_allocated": max_memory_allocated,
        "memory_reserved": memory_allocated,
        "max_memory_reserved": max_memory_allocated,
        "reset_peak_memory_stats": reset_peak_memory_stats,
        "reset_max_memory_allocated": reset_peak_memory_stats,
        "mem_get_info": mem_get_info,
        "empty_cache": nothing,
        "is_bf16_supported": lambda *args, **kwargs: True,
        "manual_seed": manual_seed,
        "manual_seed_all": manual_seed_all,
        "seed": seed,
        "seed_all": seed_all,
        "initial_seed": lambda: generators[checked()].initial_seed(),
        "get_rng_state": get_rng_state,
        "set_rng_state": set_rng_state,
        "get_rng_state_all": lambda: [generator.get_state() for generator in generators],
        "set_rng_state_all": lambda states: (
            [generator.set_state(new) for generator, new in zip(generators, states, strict=True)]
            and None
        ),
    }
    for name, value in answers.items():
        patches.set(cuda, name, _distinct(value))
    # One generator per GPU, as a CUDA build has (get_rng_state indexes them).
    patches.set(cuda, "default_generators", generators)
    patches.set(torch, "Generator", _generator_type_with_gpus(torch.Generator, checked))
    patches.set(cuda.memory, "mem_get_info", _distinct(mem_get_info))
    # No cuDNN here: say so quietly (PyTorch warns when asked about a CUDA tensor).
    patches.set(torch.backends.cudnn, "is_acceptable", lambda tensor: False)
    for name, value in {
        "is_available": answers["is_available"],
        "device_count": answers["device_count"],
        "current_accelerator": lambda check_available=False: (
            torch.device("cuda") if state.gpus else None
        ),
        "current_device_index": answers["current_device"],
        "set_device_index": set_device,
        "current_stream": current_stream,
        "synchronize": synchronize,
        "device_index": DeviceContext,
    }.items():
        patches.set(accelerator, name, _distinct(value))


def _gpu_generator(real: type, index: int | None) -> Any:
    """A host generator that says it is on ``cuda:index`` (``cuda`` when made without an
    index, as a CUDA build says): it samples the emulated GPU's values (on the host) and keeps
    a host uint8 state, as a CUDA generator's state is."""
    device = torch.device("cuda") if index is None else torch.device("cuda", index)

    class Generator(real):  # type: ignore[misc, valid-type]
        @property
        def device(self) -> torch.device:
            return device

    Generator.__module__, Generator.__qualname__ = "torch", "Generator"
    return Generator()


def _generator_type_with_gpus(real: type, checked: Any) -> type:
    """``torch.Generator(device="cuda")``: a CPU build refuses to sample with a CUDA generator,
    so the stand-in makes a host generator on the virtual GPU; other calls are the real type's."""

    class GeneratorType(type):
        def __instancecheck__(cls, instance: object) -> bool:
            return isinstance(instance, real)

        def __subclasscheck__(cls, subclass: type) -> bool:
            return issubclass(subclass, real)

        def __call__(cls, device: Any = "cpu") -> Any:
            if isinstance(device, int):
                device = torch.device("cuda", device)
            if torch.device(device).type != "cuda":
                return real(device)
            index = checked(device)
            return _gpu_generator(real, None if torch.device(device).index is None else index)

    class Generator(metaclass=GeneratorType):
        __doc__ = real.__doc__

    Generator.__module__, Generator.__qualname__ = "torch", "Generator"
    return Generator


def _distinct(value: Any) -> Any:
    """A function object of its own for each patched name.

    torch._dynamo indexes torch's functions by identity and refuses one object
    under two names with different tracing rules.
    """
    if isinstance(value, type):
        return value

    @functools.wraps(value)
    def call(*args: Any, **kwargs: Any) -> Any:
        return value(*args, **kwargs)

    return call
