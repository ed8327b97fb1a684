"""Statements and control flow: bindings, branches that join, loops run to a fixpoint."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import libcst as cst

from devlint.core import torch_api, torch_model
from devlint.core.binder import Env, Narrowing, join_envs
from devlint.core.deferred_imports import deferred_imports
from devlint.core.events import INDEX_PUT, DiscardedTransfer, Operand, OperandsMeet
from devlint.core.filled_defaults import keep_filled_default, keep_made_without_device
from devlint.core.flags import Flag, flag_of
from devlint.core.guards import (
    availability_test,
    device_test,
    no_accelerator,
    place,
    proxy_test,
    requires_grad_test,
    unseen,
)
from devlint.core.imports import (
    ModuleScope,
    imported_name,
    module_value,
    project_module,
    star_names,
)
from devlint.core.lattice import CPU, UNKNOWN, Concrete, is_known
from devlint.core.roles import (
    EvaluatesExpressions,
    Frame,
    InterpretsCalls,
    RunsClasses,
    RunsFunctions,
)
from devlint.core.scopes import ClassInfo
from devlint.core.state import AnalysisState, Part
from devlint.core.syntax import (
    dotted_name,
    is_main_guard,
    mentions_accelerator,
    none_test,
    string_value,
    without_not,
    wrapper_test,
)
from devlint.core.values import (
    BUFFER,
    CUDA_AVAILABLE,
    NONE_VALUE,
    PARAMETER,
    UNKNOWN_VALUE,
    Kind,
    Origin,
    Value,
    appended,
    element_of,
    has_dimension,
    is_tensor_like,
    items_of_length,
    join_values,
    truth,
)

MAX_LOOP_PASSES = 4
_GROWS = frozenset({"append", "extend", "insert"})


@dataclass
class _Loop:
    breaks: list[Env] = field(default_factory=list)
    continues: list[Env] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _TestFacts:
    """What the analysis reads from an ``if`` test's syntax alone (the same on every pass)."""

    guarded: bool  # an accelerator check: cpu and the accelerator join to "the accelerator"
    wrapped: str | None  # the model an `isinstance(m, DataParallel)`-style test is about
    negated: bool
    flag: Flag | None


class Flow(Part):
    """Statements and control flow: environments that branches copy and join, loops run
    to a fixpoint, ``try``, and the frames of the functions being analysed."""

    def __init__(self, state: AnalysisState) -> None:
        super().__init__(state)
        self.loops: list[_Loop] = []
        self.frames: list[Frame] = []  # functions being analysed, innermost last
        self._tests: dict[cst.BaseExpression, _TestFacts] = {}
        self._deferred: dict[cst.ImportFrom, frozenset[str]] | None = None

    def connect(
        self,
        *,
        expressions: EvaluatesExpressions,
        calls: InterpretsCalls,
        functions: RunsFunctions,
        classes: RunsClasses,
    ) -> None:
        self.expressions = expressions
        self.calls = calls
        self.functions = functions
        self.classes = classes
        self._statements: dict[type, Callable[[cst.CSTNode, Env], Env | None]] = {
            cst.SimpleStatementLine: self._simple_line,
            cst.If: self._if,
            cst.For: self._for,
            cst.While: self._while,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.With: self._with,
            cst.FunctionDef: self.functions.function_def,
            cst.ClassDef: self.classes.class_def,
            cst.Match: self._match,
        }
        self._small: dict[type, Callable[[cst.CSTNode, Env], Env | None]] = {
            cst.Expr: self._expression_statement,
            cst.Assign: self._assign,
            cst.AnnAssign: self._annotated_assign,
            cst.AugAssign: self._augmented_assign,
            cst.Return: self._return,
            cst.Raise: self._raise,
            cst.Break: self._break,
            cst.Continue: self._continue,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.Del: self._delete,
            cst.Assert: self._assert,
        }

    # -- function frames ------------------------------------------------------------

    @property
    def function(self) -> cst.FunctionDef | None:
        """The function whose body is being analysed (None at module level)."""
        return self.frames[-1].function if self.frames else None

    def running(self) -> list[cst.FunctionDef]:
        """The functions being analysed, outermost first."""
        return [frame.function for frame in self.frames]

    def run_body(self, function: cst.FunctionDef, env: Env) -> Frame:
        """Run a function's body in a frame of its own: what it returns and yields, and the
        environments it leaves by; loops outside it do not see its ``break``s."""
        frame = Frame(function)
        self.frames.append(frame)
        saved_loops, self.loops = self.loops, []
        try:
            out = self.suite(function.body, env)
        finally:
            self.loops = saved_loops
            self.frames.pop()
        if out is not None:
            frame.returns.append(NONE_VALUE)
            frame.exits.append(out)
        return frame

    def note_yield(self, value: Value) -> None:
        """A ``yield`` in the function being analysed produces ``value``."""
        if self.frames:
            self.frames[-1].yields.append(value)

    # -- blocks -----------------------------------------------------------------

    def block(self, statements, env: Env | None) -> Env | None:
        for statement in statements:
            if env is None:
                return None
            handler = self._statements.get(type(statement))
            if handler is not None:
                env = handler(statement, env)
        return env

    def suite(self, body: cst.BaseSuite, env: Env | None) -> Env | None:
        if isinstance(body, cst.SimpleStatementSuite):
            return self._simple_line(body, env) if env is not None else None
        return self.block(body.body, env)

    def _simple_line(
        self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite, env: Env
    ) -> Env | None:
        for statement in line.body:
            handler = self._small.get(type(statement))
            if handler is not None:
                env = handler(statement, env)
                if env is None:
                    return None
        return env

    # -- simple statements ----------------------------------------------------------

    def _expression_statement(self, statement: cst.Expr, env: Env) -> Env:
        expression = statement.value
        self.expressions.eval(expression, env)
        if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
            method = expression.func.attr.value
            if method in torch_api.moves():
                self._bare_move(expression, expression.func.value, env)
            elif method in _GROWS:
                self._grow(expression, expression.func.value, method, env)
        return env

    def _grow(
        self, call: cst.Call, receiver_node: cst.BaseExpression, method: str, env: Env
    ) -> None:
        """``outs.append(t)``: a local list now may hold ``t`` (``torch.cat(outs)`` is there)."""
        receiver = self.state.values.get(receiver_node)
        path = dotted_name(receiver_node)
        if receiver is None or receiver.kind is not Kind.SEQUENCE or path is None:
            return
        if env.get(path) is not receiver or len(call.args) != (2 if method == "insert" else 1):
            return
        added = self.state.values.get(call.args[-1].value, UNKNOWN_VALUE)
        env.update(path, appended(receiver, added if method != "extend" else element_of(added)))

    def _bare_move(self, call: cst.Call, receiver_node: cst.BaseExpression, env: Env) -> None:
        """A move as a statement: a lost copy for tensors, an in-place move otherwise."""
        receiver = self.state.values.get(receiver_node, UNKNOWN_VALUE)
        if receiver.kind is Kind.TENSOR:
            method = call.func.attr.value
            self.state.record(DiscardedTransfer(call, Operand(receiver_node, receiver), method))
        elif receiver.kind in (Kind.UNKNOWN, Kind.BATCH):
            moved = self.state.values.get(call)
            if moved is not None and is_known(moved.device):
                self.calls.rebind(
                    receiver_node,
                    moved
                    if receiver.kind is Kind.BATCH
                    else Value(Kind.UNKNOWN, moved.device, moved.origin),
                    env,
                )

    def _assign(self, statement: cst.Assign, env: Env) -> Env:
        value = self.expressions.eval(statement.value, env)
        for target in statement.targets:
            self.bind(target.target, value, env, statement.value)
        return env

    def _annotated_assign(self, statement: cst.AnnAssign, env: Env) -> Env:
        if statement.value is not None:
            self.bind(statement.target, self.expressions.eval(statement.value, env), env)
        return env

    def _augmented_assign(self, statement: cst.AugAssign, env: Env) -> Env:
        current = self.expressions.eval(statement.target, env)
        value = self.expressions.eval(statement.value, env)
        operator = type(statement.operator).__name__.replace("Assign", "")
        strict = isinstance(statement.operator, cst.MatrixMultiplyAssign)
        result = self.expressions.operate(
            statement, operator, current, statement.target, value, statement.value, strict
        )
        if is_tensor_like(current):
            result = current
        self.bind(statement.target, result, env)
        return env

    def _return(self, statement: cst.Return, env: Env) -> None:
        value = (
            self.expressions.eval(statement.value, env)
            if statement.value is not None
            else NONE_VALUE
        )
        if self.frames:
            self.frames[-1].returns.append(value)
            self.frames[-1].exits.append(env)
        return None

    def _raise(self, statement: cst.Raise, env: Env) -> None:
        if statement.exc is not None:
            self.expressions.eval(statement.exc, env)
        return None

    def _break(self, statement: cst.Break, env: Env) -> None:
        if self.loops:
            self.loops[-1].breaks.append(env)
        return None

    def _continue(self, statement: cst.Continue, env: Env) -> None:
        if self.loops:
            self.loops[-1].continues.append(env)
        return None

    def _import(self, statement: cst.Import, env: Env) -> Env:
        for alias in statement.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                scope = self._project_module(full, 0)
                value = module_value(scope) if scope else self.calls.namespace(full)
                env.set(alias.asname.name.value, value)
            else:
                top = full.split(".", 1)[0]
                scope = self._project_module(top, 0)
                env.set(top, module_value(scope) if scope else self.calls.namespace(top))
        return env

    def _project_module(self, name: str, level: int) -> ModuleScope | None:
        """The project module an import names, None when it is not one (torch never is)."""
        scope = project_module(self.state.importer, name, level, tuple(self.state.search_folders))
        if scope is not None:
            self.state.note_import(scope)
        return scope

    def _import_from(self, statement: cst.ImportFrom, env: Env) -> Env:
        base = dotted_name(statement.module) if statement.module is not None else None
        level = len(statement.relative)
        if isinstance(statement.names, cst.ImportStar):
            return self._import_star(base, level, env)
        folders = tuple(self.state.search_folders)
        home, deferred = self.state.home, self._waiting(statement)
        for alias in statement.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            if name is None:
                continue
            local = (
                alias.asname.name.value
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                else name
            )
            lookup = partial(imported_name, self.state.importer, folders, base, level, name)
            if home is not None and local in deferred:
                home.deferred[local] = lookup  # looked up when read
            else:
                env.set(local, lookup(self.state.note_import))
        return env

    def _import_star(self, base: str | None, level: int, env: Env) -> Env:
        """``from .pqmf import *``: the project module's public names (``__all__`` when it
        lists them), as a package ``__init__`` re-exports them; another file's top level
        running for its importers looks each up when it is read."""
        scope = self._project_module(base or "", level) if base or level else None
        if scope is None:
            return env
        home = self.state.home
        for name in star_names(scope):
            if home is not None:
                home.deferred[name] = partial(_star_member, scope, name)
            else:
                value = scope.bound(name)
                if value is not None:
                    env.set(name, value)
        return env

    def _waiting(self, statement: cst.ImportFrom) -> frozenset[str]:
        """Names of this import that can wait until read, when another file's top level runs
        for its importers (``core.deferred_imports``); none in the file analysed."""
        home = self.state.home
        if home is None:
            return frozenset()
        if self._deferred is None:
            self._deferred = deferred_imports(home.module)
            home.waiting = frozenset().union(*self._deferred.values())
        return self._deferred.get(statement, frozenset())

    def _delete(self, statement: cst.Del, env: Env) -> Env:
        targets = statement.target
        elements = targets.elements if isinstance(targets, (cst.Tuple, cst.List)) else None
        for target in [e.value for e in elements] if elements else [targets]:
            path = dotted_name(target)
            if path is not None:
                env.delete(path)
        return env

    def _assert(self, statement: cst.Assert, env: Env) -> Env:
        """After ``assert test``, the code runs only where the test held: an earlier ``if`` on
        the same flag took its true side (``assert not is_distributed`` leaves the model
        unwrapped), as in an ``if test:`` body, for each part of an ``and`` (in any order: a
        part may uncover what an earlier one's ``if`` left, so they are taken again while
        one narrows something)."""
        self.expressions.eval(statement.test, env)
        tests = _conjuncts(statement.test)
        for _ in tests:
            narrowed = False
            for test in tests:
                facts = self._test_facts(test)
                if facts.wrapped is not None and facts.negated:
                    self._unwrap(facts.wrapped, env)
                narrowed |= bool(self._narrow(test, env, facts.flag, True))
            if not narrowed:
                break
        return env

    # -- binding ----------------------------------------------------------------

    def bind(
        self,
        target: cst.BaseExpression,
        value: Value,
        env: Env,
        source: cst.BaseExpression | None = None,
    ) -> None:
        """Bind ``target`` to ``value``; ``source`` is the assigned expression when there is one."""
        if isinstance(target, cst.Name):
            env.set(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._unpack(target, value, env)
        elif isinstance(target, cst.Attribute):
            path = dotted_name(target)
            if path is not None:
                env.set(path, _keeps_registration(env.get(path), value))
                _replace_state_of_module(path, value, env)
            else:
                self.expressions.eval(target.value, env)
        elif isinstance(target, cst.Subscript):
            self._store_item(target, value, env, source)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, Value(Kind.SEQUENCE, element=element_of(value)), env)

    def _store_item(
        self,
        target: cst.Subscript,
        value: Value,
        env: Env,
        source: cst.BaseExpression | None = None,
    ) -> None:
        """``batch[k] = batch[k].to(device)`` changes what the container holds."""
        container = self.expressions.eval(target.value, env)
        keys = [
            self.expressions.eval(element.slice.value, env)
            for element in target.slice
            if isinstance(element.slice, cst.Index)
        ]
        if is_tensor_like(container):
            self._index_put(target, container, keys, value, source)
        path = dotted_name(target.value)
        if path is None or not (_is_container(container) or _is_batch_part(container)):
            return
        key = target.slice[0].slice if len(target.slice) == 1 else None
        name = string_value(key.value) if isinstance(key, cst.Index) else None
        if container.kind is Kind.MAPPING and container.keys is not None and name is not None:
            keys = container.keys if name in container.keys else (*container.keys, name)
            items = dict(zip(container.keys, container.items or (), strict=False))
            items[name] = value
            env.set(path, Value(Kind.MAPPING, items=tuple(items[k] for k in keys), keys=keys))
            return
        part = (
            element_of(container)
            if container.kind is not Kind.MAPPING
            else (container.element or UNKNOWN_VALUE)
        )
        joined = join_values(part, value)
        if container.kind is not Kind.MAPPING and container.kind is not Kind.SEQUENCE:
            env.set(path, container.with_device(joined.device, joined.origin))
        else:
            env.set(path, Value(container.kind, element=joined))

    def _index_put(
        self,
        target: cst.Subscript,
        tensor: Value,
        keys: list[Value],
        value: Value,
        source: cst.BaseExpression | None,
    ) -> None:
        """``t[idx] = v`` with a tensor ``idx`` is ``index_put_``: it moves ``idx`` to ``t``'s
        device, and ``v`` must be there unless it is 0-dim (basic indexing copies across
        devices and is not checked)."""
        index = self.expressions.advanced_index(
            target, target.value, tensor, target.slice, keys, reading=False
        )
        if index is None or source is None or value.kind is not Kind.TENSOR:
            return
        if not has_dimension(value):
            return
        operands = (Operand(target.value, tensor), Operand(source, value))
        self.state.record(OperandsMeet(target, INDEX_PUT, operands, True, self.function))

    def _unpack(self, target: cst.Tuple | cst.List, value: Value, env: Env) -> None:
        elements = target.elements
        starred = any(isinstance(e, cst.StarredElement) for e in elements)
        items = items_of_length(value, len(elements)) if value.kind is Kind.SEQUENCE else None
        if items is not None and not starred:
            for element, item in zip(elements, items, strict=True):
                self.bind(element.value, item, env)
            return
        part = element_of(value)
        for element in elements:
            if isinstance(element, cst.StarredElement):
                self.bind(element.value, Value(Kind.SEQUENCE, element=part), env)
            else:
                self.bind(element.value, part, env)

    # -- control flow ---------------------------------------------------------------

    def _if(self, statement: cst.If, env: Env) -> Env | None:
        if self.state.home is not None and is_main_guard(statement.test):
            return env  # the script part of a module another file imports: not run then
        self.expressions.eval(statement.test, env)
        facts = self._test_facts(statement.test)
        wrapped, negated, flag = facts.wrapped, facts.negated, facts.flag
        then_start, else_start = env.copy(), env.copy()
        known = _known_truth(statement.test, env)  # `if first_iter:` on a local True/False
        if known is not None:
            then_start, else_start = (then_start, None) if known else (None, else_start)
        if wrapped is not None:  # `if isinstance(m, nn.DataParallel)` / `hasattr(m, "module")`
            self._unwrap(wrapped, else_start if not negated else then_start)
        then_narrowed = self._narrow(statement.test, then_start, flag, True)
        else_narrowed = self._narrow(statement.test, else_start, flag, False)
        then_env = self.suite(statement.body, then_start)
        orelse = statement.orelse
        if orelse is None or else_start is None:
            else_env = else_start
        elif isinstance(orelse, cst.If):
            else_env = self._if(orelse, else_start)
        else:
            else_env = self.suite(orelse.body, else_start)
        # Whether CUDA is available does not change: what a branch learnt of it holds after
        # the branch too (`if use_cuda: p = p.cpu()` leaves `p` on the cpu). Nor does what
        # the test said where the other branch does not go on (`if not v.is_cuda: continue`
        # leaves `v` on a GPU for the rest of the loop's body).
        both = then_env is not None and else_env is not None
        if both and availability_test(statement.test, self._holds_availability) is None:
            then_env.widen(then_narrowed)
            else_env.widen(else_narrowed)
        joined = join_envs(then_env, else_env, guarded=facts.guarded)
        if joined is not None and both:
            keep_filled_default(statement.test, then_env, else_env, joined)
            if not facts.guarded:
                keep_made_without_device(statement, then_env, else_env, joined)
        if flag is not None and joined is not None and both:
            positive, negative = (then_env, else_env) if flag.positive else (else_env, then_env)
            joined.record_split(flag, positive, negative)
        return joined

    def _test_facts(self, test: cst.BaseExpression) -> _TestFacts:
        """Read once per test: loop passes and calls with new arguments revisit the same ``if``."""
        found = self._tests.get(test)
        if found is None:
            wrapped, negated = wrapper_test(test)
            found = _TestFacts(mentions_accelerator(test), wrapped, negated, flag_of(test))
            self._tests[test] = found
        return found

    def _narrow(
        self, test: cst.BaseExpression, env: Env | None, flag: Flag | None, holds: bool
    ) -> list[Narrowing]:
        """What a branch knows from its test (``holds``: the test is true there): the side of
        an earlier ``if`` on the same flag, ``x.is_cuda``, ``torch.cuda.is_available()``, a
        tracing proxy, ``x.requires_grad``."""
        if env is None:
            return []
        narrowed = env.refine(flag, flag.positive == holds) if flag is not None else []
        parts = _conjuncts(test) if holds else _disjuncts(test)
        if len(parts) > 1:  # `if ddp and v.is_cuda:` holds only where each part does
            for part in parts:
                narrowed += self._narrow(part, env, self._test_facts(part).flag, holds)
            return narrowed
        by_test = Origin("on the cpu by the test {}", test, test)
        available = availability_test(test, self._holds_availability)
        if available is not None:
            return narrowed + (no_accelerator(env, by_test) if available != holds else [])
        found = device_test(test, self._literal_device)
        if found is not None:
            narrowed += place(env, found, found.cpu == holds, by_test)
        for opaque in (proxy_test(test), requires_grad_test(test)):
            if opaque is not None and opaque[1] == holds:
                narrowed += unseen(env, opaque[0])
        return narrowed

    def narrowed_for(self, test: cst.BaseExpression, env: Env, holds: bool) -> list[Narrowing]:
        """What a conditional expression's branch knows from its test, as an ``if``'s does
        (``env.widen`` the result when leaving the branch): ``m.module.x if hasattr(m,
        "module") else m.x`` reads the model itself on the second path."""
        facts = self._test_facts(test)
        narrowed = self._narrow(test, env, facts.flag, holds)
        if facts.wrapped is not None and holds == facts.negated:
            unwrapped = self._unwrapped(facts.wrapped, env)
            if unwrapped is not None:
                narrowed.append(env.narrow(facts.wrapped, unwrapped))
        return narrowed

    def _holds_availability(self, node: cst.BaseExpression) -> bool:
        value = self.state.values.get(node)
        return value is not None and value.ref == CUDA_AVAILABLE

    def _literal_device(self, node: cst.BaseExpression) -> Concrete | None:
        value = self.state.values.get(node)
        if value is not None and value.kind is Kind.DEVICE and isinstance(value.device, Concrete):
            return value.device
        return None

    def _unwrap(self, path: str, env: Env | None) -> None:
        """On the path where the test says "not wrapped", a maybe-wrapped model is the model."""
        unwrapped = self._unwrapped(path, env) if env is not None else None
        if env is not None and unwrapped is not None:
            env.set(path, unwrapped)

    def _unwrapped(self, path: str, env: Env) -> Value | None:
        value = env.get(path) or _attribute_of_instance(path, env)
        if value is not None and value.kind is Kind.WRAPPER and value.ref is not None:
            return value.ref.inner.with_device(value.device, value.origin)
        return None

    def _loop(
        self, env: Env, prepare: Callable[[Env], None], body: cst.BaseSuite
    ) -> tuple[Env, list[Env]]:
        """Run a loop body to a fixpoint; returns the normal exit and the ``break`` paths.

        The first pass sees exactly the state of the first iteration, the second
        exactly that of the second (what the first left behind: a tensor replaced
        by a cpu one at the end of the body meets the model again), and the last
        pass the fixpoint, so the events of these are kept; those of the passes in
        between rest on states no iteration has, and are dropped.
        """
        entry = env.copy()
        for attempt in range(MAX_LOOP_PASSES + 1):
            with self.state.recording() as recorded:
                out, frame = self._pass(entry, prepare, body)
            back = out
            for path in frame.continues:
                back = join_envs(back, path)
            widened = join_envs(entry, back)
            if _stable(entry, widened) or attempt == MAX_LOOP_PASSES:
                return widened, frame.breaks
            if attempt:
                recorded.discard()
            elif back is not None:
                self._pass(back, prepare, body)  # the second iteration: its events stay
            entry = widened if attempt < MAX_LOOP_PASSES - 1 else _forget_changes(entry, widened)
        raise AssertionError("unreachable")

    def _pass(
        self, entry: Env, prepare: Callable[[Env], None], body: cst.BaseSuite
    ) -> tuple[Env | None, _Loop]:
        """One pass over a loop body from ``entry``: where it ends and how it left."""
        frame = _Loop()
        self.loops.append(frame)
        start = entry.copy()
        prepare(start)
        try:
            return self.suite(body, start), frame
        finally:
            self.loops.pop()

    def _for(self, statement: cst.For, env: Env) -> Env | None:
        iterable = self.expressions.eval(statement.iter, env)
        element = torch_model.iterate(iterable, statement.iter)
        normal, breaks = self._loop(
            env, lambda start: self.bind(statement.target, element, start), statement.body
        )
        return self._loop_exit(statement.orelse, normal, breaks)

    def _while(self, statement: cst.While, env: Env) -> Env | None:
        self.expressions.eval(statement.test, env)
        normal, breaks = self._loop(
            env, lambda start: self.expressions.eval(statement.test, start), statement.body
        )
        return self._loop_exit(statement.orelse, normal, breaks)

    def _loop_exit(self, orelse: cst.Else | None, normal: Env, breaks: list[Env]) -> Env | None:
        """Where a loop continues: its ``else`` after a normal end, joined with breaks."""
        result = self.suite(orelse.body, normal.copy()) if orelse is not None else normal
        for path in breaks:
            result = join_envs(result, path)
        return result

    def _try(self, statement: cst.Try | cst.TryStar, env: Env) -> Env | None:
        left = self._paths_left()
        body_env = self.suite(statement.body, env.copy())
        anywhere = join_envs(env, body_env)
        result = self.suite(statement.orelse.body, body_env) if statement.orelse else body_env
        for handler in statement.handlers:
            start = anywhere.copy()
            if handler.name is not None:
                self.bind(handler.name.name, UNKNOWN_VALUE, start)
            if handler.type is not None:
                self.expressions.eval(handler.type, start)
            result = join_envs(result, self.suite(handler.body, start))
        if statement.finalbody is None:
            return result
        # `finally` also runs on the way out of each return, break and continue above
        final_start = result if result is not None else anywhere.copy()
        for path in self._left_since(left):
            final_start = join_envs(final_start, path)
        final_env = self.suite(statement.finalbody.body, final_start)
        return final_env if result is not None else None

    def _paths_left(self) -> tuple[int, int, int]:
        """How many paths have left the current function and loop so far (return, break, …)."""
        loop = self.loops[-1] if self.loops else None
        return (
            len(self.frames[-1].exits) if self.frames else 0,
            len(loop.breaks) if loop else 0,
            len(loop.continues) if loop else 0,
        )

    def _left_since(self, marks: tuple[int, int, int]) -> list[Env]:
        """The paths that left by return, break or continue after ``marks``."""
        loop = self.loops[-1] if self.loops else None
        exits = self.frames[-1].exits[marks[0] :] if self.frames else []
        breaks = loop.breaks[marks[1] :] if loop else []
        continues = loop.continues[marks[2] :] if loop else []
        return [*exits, *breaks, *continues]

    def _with(self, statement: cst.With, env: Env) -> Env | None:
        sets_default_device = False
        for item in statement.items:
            value = self.expressions.eval(item.item, env)
            sets_default_device = sets_default_device or value.kind is Kind.DEVICE
            if item.asname is not None:
                self.bind(
                    item.asname.name, value if value.kind is Kind.TENSOR else UNKNOWN_VALUE, env
                )
        before = dict(env.bindings) if sets_default_device else None
        after = self.suite(statement.body, env)
        if before is not None and after is not None:
            _created_on_the_default_device(before, after)
        return after

    def _match(self, statement: cst.Match, env: Env) -> Env | None:
        self.expressions.eval(statement.subject, env)
        result: Env | None = env
        for case in statement.cases:
            result = join_envs(result, self.suite(case.body, env.copy()))
        return result


def _created_on_the_default_device(before: dict[str, Value], after: Env) -> None:
    """``with device:`` (torch's default-device context manager) creates tensors and modules
    without ``device=`` on ``device``: what the block bound on the cpu is somewhere the
    analysis does not model (unknown), not on the cpu."""
    for name, value in list(after.bindings.items()):
        created = before.get(name) is not value and value.kind in (Kind.TENSOR, Kind.MODULE)
        if created and value.device == CPU:
            after.update(name, value.with_device(UNKNOWN, None))


def _known_truth(test: cst.BaseExpression, env: Env) -> bool | None:
    """The value of ``if name:`` / ``if not name:`` when ``name`` is a local literal boolean,
    and of ``if name is None:`` when ``name`` holds None or a tensor or module (an argument
    given: ``if action is None: action = dist.sample()`` is not taken)."""
    test, holds = without_not(test)
    compared = none_test(test)
    if compared is not None:
        value = env.bindings.get(compared[0])
        known = _is_none(value) if value is not None else None
        return None if known is None else (known == compared[1]) == holds
    if not isinstance(test, cst.Name):
        return None
    value = env.bindings.get(test.value)
    known = truth(value) if value is not None else None
    return None if known is None else known == holds


def _is_none(value: Value) -> bool | None:
    """Whether a value is None: known for None itself and for tensors and modules, except
    what a parameter holds for lack of a caller (``mask: Tensor = None`` may be left out)."""
    if value.kind is Kind.NONE:
        return True
    unseen_caller = value.origin is not None and isinstance(value.origin.node, cst.Param)
    return False if value.kind in (Kind.TENSOR, Kind.MODULE) and not unseen_caller else None


def _is_container(value: Value) -> bool:
    return value.kind in (Kind.BATCH, Kind.MAPPING, Kind.SEQUENCE)


def _is_batch_part(value: Value) -> bool:
    """A piece of a DataLoader batch: a tensor, or a dict of them (``batch["x"][k] = …``)."""
    return value.origin is not None and value.origin.from_loader


def _stable(before: Env, after: Env | None) -> bool:
    """Whether the loop entry is a fixpoint for the names bound before the loop."""
    if after is None:
        return True
    for name, value in before.bindings.items():
        other = after.bindings.get(name)
        if other is None or not value.same(other):
            return False
    return True


def _forget_changes(before: Env, after: Env) -> Env:
    """Widening: names still changing after several passes become unknown."""
    result = after.copy()
    for name, value in after.bindings.items():
        previous = before.bindings.get(name)
        if previous is None or not previous.same(value):
            result.bindings[name] = UNKNOWN_VALUE
    return result


def _keeps_registration(previous: Value | None, value: Value) -> Value:
    """A tensor assigned to a registered buffer's name stays a buffer (``Module.__setattr__``
    stores it in ``_buffers``), so ``.to()`` still moves it."""
    if previous is not None and previous.ref == BUFFER and value.kind is Kind.TENSOR:
        return replace(value, ref=BUFFER)
    return value


def _attribute_of_instance(path: str, env: Env) -> Value | None:
    """``self.model`` inside a method: what the class's ``__init__`` left there."""
    owner, _, name = path.rpartition(".")
    base = env.get(owner) if owner else None
    if base is None or base.kind is not Kind.INSTANCE or not isinstance(base.ref, ClassInfo):
        return None
    if base.keys is not None and name in base.keys:
        return base.items[base.keys.index(name)]
    return base.ref.attrs.get(name)


def _replace_state_of_module(path: str, value: Value, env: Env) -> None:
    """``lin.w.weight = nn.Parameter(t)``, ``model.head = other``: a module given state
    that lives elsewhere is no longer where it was created or moved (all of it may have
    been replaced): its device becomes unknown. So is a module whose submodule, one its
    class's ``__init__`` made, is replaced by one not known to be on its device
    (``predictor.model = model.model``: the placed model's weights now serve it), and one
    whose parameter's data is replaced (``cell.weight_hh.data = gru.weight_hh_l0.data``:
    the parameter now holds that tensor, wherever it lives)."""
    root, _, rest = path.partition(".")
    module = env.get(root)
    stateful = value.ref in (PARAMETER, BUFFER) or (value.kind is Kind.MODULE and value.stateful)
    stateful = stateful or path.endswith(".data")
    if not stateful and not (module is not None and _replaces_a_submodule(module, rest, value)):
        return
    if (
        module is not None
        and module.kind in (Kind.MODULE, Kind.WRAPPER)
        and is_known(module.device)
        and module.device != value.device
    ):
        env.update(root, module.with_device(UNKNOWN, None))


def _replaces_a_submodule(module: Value, attribute: str, value: Value) -> bool:
    """``attribute`` names a module its class's ``__init__`` made, and ``value`` is not known
    to be on the module's device."""
    info = module.ref
    if not isinstance(info, ClassInfo) or "." in attribute or value.device == module.device:
        return False
    made = info.attrs.get(attribute)
    return made is not None and made.kind is Kind.MODULE


def _star_member(scope: ModuleScope, name: str) -> Value:
    return scope.bound(name) or UNKNOWN_VALUE


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts that all hold where ``test`` holds: ``a and (b and c)`` gives a, b, c."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def _disjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts that all fail where ``test`` fails: ``a or (b or c)`` gives a, b, c."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _disjuncts(test.left) + _disjuncts(test.right)
    return [test]
