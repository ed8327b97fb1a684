"""``devlint confirm``: every rule's examples on each backend, judged by the rule's expectation."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from devlint.harness.runner import Job, Result, cuda_device_count, run_jobs
from devlint.harness.verdict import Outcome, expected, judge
from devlint.harness.words import counted
from devlint.rule import Rule
from devlint.rule_examples import EXAMPLE_FILES, example_dir
from devlint.rules import all_rules


@dataclass(frozen=True)
class Evidence:
    """One example on one backend: what the rule expects and what happened."""

    rule: str
    example: str
    backend: str
    gpus: int
    outcome: Outcome
    expected: str
    observed: str
    seconds: float

    def to_json(self) -> dict[str, object]:
        return {**self.__dict__, "outcome": self.outcome.value, "seconds": round(self.seconds, 2)}


def select_rules(codes: Sequence[str]) -> list[type[Rule]]:
    """The rules whose code starts with one of ``codes`` (all rules when none is given)."""
    return [
        rule
        for rule in all_rules()
        if not codes or any(rule.meta.code.startswith(code) for code in codes)
    ]


def gpu_machine_likely() -> bool:
    """Whether an NVIDIA driver is loaded; only then is it worth asking torch."""
    return os.path.exists("/proc/driver/nvidia") or os.path.exists("/dev/nvidiactl")


def available_gpus(backend: str, emulated_gpus: int) -> int:
    if backend == "emulated":
        return emulated_gpus
    return cuda_device_count() if gpu_machine_likely() else 0


def confirm(
    rules: Sequence[type[Rule]],
    backend: str,
    gpus: int,
    parallel: int,
    timeout: float,
    previous_seconds: dict[tuple[str, str, str], float] | None = None,
    on_done: Callable[[Evidence], None] | None = None,
) -> list[Evidence]:
    """Run ``bad.py``, ``good.py`` and ``fixed.py`` of each rule on one backend."""
    skipped: list[Evidence] = []
    jobs: list[Job] = []
    for rule in rules:
        expectation = rule.meta.runtime
        for name in EXAMPLE_FILES:
            path = example_dir(rule) / name
            if expectation.gpus > gpus:
                skipped.append(
                    Evidence(
                        rule.meta.code,
                        name,
                        backend,
                        gpus,
                        Outcome.SKIP,
                        expected(expectation, name),
                        f"needs {counted(expectation.gpus, 'GPU')}, "
                        f"the {backend} backend has {gpus}",
                        0.0,
                    )
                )
            elif path.is_file():
                jobs.append(Job(path, backend, gpus, key=(rule, name)))
    jobs = _longest_first(jobs, previous_seconds or {}, backend, parallel)

    def to_evidence(result: Result) -> Evidence:
        rule, name = result.job.key
        verdict = judge(rule.meta.runtime, name, result)
        return Evidence(
            rule.meta.code,
            name,
            backend,
            gpus,
            verdict.outcome,
            expected(rule.meta.runtime, name),
            verdict.observed,
            result.seconds,
        )

    def done(result: Result) -> None:
        if on_done is not None:
            on_done(to_evidence(result))

    for evidence in skipped:
        if on_done is not None:
            on_done(evidence)
    results = run_jobs(jobs, parallel, timeout, done) if jobs else []
    found = skipped + [to_evidence(result) for result in results]
    order = {(rule.meta.code, name): i for i, (rule, name) in enumerate(_all_examples(rules))}
    return sorted(found, key=lambda evidence: order[(evidence.rule, evidence.example)])


def _longest_first(
    jobs: list[Job], seconds: dict[tuple[str, str, str], float], backend: str, parallel: int
) -> list[Job]:
    """Start the slowest examples first (by their last run); one that outlasts all the others
    together gets every core, since the others finish long before it."""

    def took(job: Job) -> float:
        return seconds.get((job.key[0].meta.code, job.key[1], backend), 0.0)

    jobs = sorted(jobs, key=lambda job: -took(job))
    if len(jobs) > 1 and parallel > 1 and took(jobs[0]) > sum(map(took, jobs[1:])) / (parallel - 1):
        jobs[0] = replace(jobs[0], threads=os.cpu_count() or 1)
    return jobs


def _all_examples(rules: Sequence[type[Rule]]) -> list[tuple[type[Rule], str]]:
    return [(rule, name) for rule in rules for name in EXAMPLE_FILES]


def differences(evidence: Sequence[Evidence]) -> list[tuple[str, str, Evidence, Evidence]]:
    """Examples whose outcome on real CUDA differs from the emulator's (the fidelity check)."""
    by_key: dict[tuple[str, str], dict[str, Evidence]] = {}
    for item in evidence:
        by_key.setdefault((item.rule, item.example), {})[item.backend] = item
    found = []
    for (rule, example), backends in by_key.items():
        cuda, emulated = backends.get("cuda"), backends.get("emulated")
        if cuda is None or emulated is None:
            continue
        if Outcome.SKIP in (cuda.outcome, emulated.outcome):
            continue
        if cuda.outcome != emulated.outcome:
            found.append((rule, example, cuda, emulated))
    return found


def failed(evidence: Sequence[Evidence]) -> list[Evidence]:
    return [item for item in evidence if item.outcome in (Outcome.FAIL, Outcome.TIMEOUT)]
