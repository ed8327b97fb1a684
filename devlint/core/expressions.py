"""Expression evaluation: the abstract value of every expression, one dispatch per node."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from devlint.core import distributions, torch_facts, torch_model
from devlint.core.binder import Env
from devlint.core.events import ADVANCED_INDEXING, Operand, OperandsMeet, UnsyncedRead
from devlint.core.filled_defaults import filled_default
from devlint.core.lattice import CPU, Concrete, Symbol, can_be_accelerator, is_known
from devlint.core.roles import InterpretsCalls, RunsStatements, TracksWrappers
from devlint.core.scopes import ClassInfo
from devlint.core.state import Part
from devlint.core.syntax import (
    dotted_name,
    mentions_accelerator,
    parse_device_string,
    string_value,
)
from devlint.core.values import (
    ASYNC_COPY,
    FALSE_VALUE,
    NONE_VALUE,
    PARAMETER,
    SCALAR_VALUE,
    TRUE_VALUE,
    UNKNOWN_VALUE,
    Kind,
    Origin,
    Value,
    batch_part,
    combined_ndim,
    element_of,
    has_dimension,
    is_tensor_like,
    item_at,
    join_all,
    join_values,
    result_base,
)

STRING_VALUE = Value(Kind.STRING)
MAX_MAPPED_ITEMS = 8
"""A comprehension over at most this many known items gives one result per item."""
_ELEMENTWISE_COMPARISONS = (
    cst.Equal,
    cst.NotEqual,
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
)


def _unwraps(attribute: cst.BaseExpression, plain: cst.BaseExpression) -> bool:
    """``x.module`` against ``x``: the unwrap-if-wrapped idiom."""
    return (
        isinstance(attribute, cst.Attribute)
        and attribute.attr.value == "module"
        and dotted_name(plain) is not None
        and dotted_name(attribute.value) == dotted_name(plain)
    )


def _indexed_ndim(base: Value, elements: Sequence[cst.SubscriptElement]) -> int | None:
    """Dimensions ``x[...]`` keeps for sure: each element that is no slice, ``None`` or
    ``...`` may take one away (an int does; a list or a bool may not)."""
    if base.ndim is None or base.ndim == 0:
        return None
    dropped = sum(not _keeps_dimensions(element.slice) for element in elements)
    left = base.ndim - dropped
    return left if left >= 1 else None


def _maps_one_name(clause: cst.CompFor) -> bool:
    """``elt for x in xs``: one clause, one name, no filter, so each item gives one element."""
    return clause.inner_for_in is None and not clause.ifs and isinstance(clause.target, cst.Name)


def _keeps_dimensions(index: cst.BaseSlice) -> bool:
    """``x[1:]``, ``x[:, None]``, ``x[...]`` keep a tensor's dimensions; ``x[0]`` may not."""
    if isinstance(index, cst.Slice):
        return True
    value = index.value
    return isinstance(value, cst.Ellipsis) or (
        isinstance(value, cst.Name) and value.value == "None"
    )


class Expressions(Part):
    """Evaluates expressions in an environment and records the events they cause.

    Calls go to ``Calls``, assignment targets (walrus, comprehensions) to ``Flow``.
    """

    def connect(
        self, *, calls: InterpretsCalls, wrappers: TracksWrappers, flow: RunsStatements
    ) -> None:
        self.calls = calls
        self.wrappers = wrappers
        self.flow = flow
        self._dispatch: dict[type, Callable[[cst.CSTNode, Env], Value]] = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self.calls.call,
            cst.Subscript: self._subscript,
            cst.BinaryOperation: self._binary,
            cst.UnaryOperation: self._unary,
            cst.Comparison: self._comparison,
            cst.BooleanOperation: self._boolean,
            cst.IfExp: self._if_exp,
            cst.Tuple: self._sequence,
            cst.List: self._sequence,
            cst.Set: self._sequence,
            cst.Dict: self._dict,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._dict_comprehension,
            cst.NamedExpr: self._named,
            cst.SimpleString: self._string,
            cst.FormattedString: self._formatted_string,
            cst.ConcatenatedString: lambda node, env: STRING_VALUE,
            cst.Integer: self._integer,
            cst.Float: lambda node, env: SCALAR_VALUE,
            cst.Imaginary: lambda node, env: SCALAR_VALUE,
            cst.Await: lambda node, env: self.eval(node.expression, env),
            cst.Yield: self._yield,
            cst.Lambda: lambda node, env: Value(Kind.FUNCTION),
        }

    # -- entry points ---------------------------------------------------------

    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        handler = self._dispatch.get(type(node))
        value = handler(node, env) if handler is not None else UNKNOWN_VALUE
        self.state.values[node] = value
        return value

    def meet(
        self, node: cst.CSTNode, operation: str, operands: list[Operand], strict: bool
    ) -> None:
        """Record that tensors meet in one operation (rules decide if devices clash)."""
        tensors = tuple(op for op in operands if is_tensor_like(op.value))
        if len(tensors) >= 2:
            self.state.record(OperandsMeet(node, operation, tensors, strict, self.flow.function))

    def read(self, node: cst.CSTNode, value: Value) -> None:
        """Data of ``value`` is read here: flag a non-blocking host copy not yet synchronised."""
        origin = value.origin
        if origin is not None and origin.tag == ASYNC_COPY and value.device == CPU:
            self.state.record(UnsyncedRead(node, Operand(node, value)))

    # -- names and attributes ---------------------------------------------------

    def _name(self, node: cst.Name, env: Env) -> Value:
        value = env.get(node.value)
        if value is not None:
            return value
        if node.value == "None":
            return NONE_VALUE
        if node.value == "True":
            return TRUE_VALUE
        if node.value == "False":
            return FALSE_VALUE
        return self.calls.builtin(node.value) or UNKNOWN_VALUE

    def _attribute(self, node: cst.Attribute, env: Env) -> Value:
        path = dotted_name(node)
        if path is not None:
            bound = env.get(path)
            if bound is not None:
                return bound
        base = self.eval(node.value, env)
        return self.attribute_of(base, node.attr.value, node)

    def tensor_attribute(self, base: Value, name: str) -> Value:
        if name == "device":
            self.state.places_tensors = True
            if isinstance(base.device, Symbol) and base.device.tensor:
                self.state.runtime_device = True  # as for `x.device` of any value it cannot see
            return Value(Kind.DEVICE, base.device, base.origin)
        if name in torch_facts.TENSOR_VALUED_ATTRIBUTES:
            return Value(Kind.TENSOR, base.device, base.origin, base.ndim)
        return UNKNOWN_VALUE

    def attribute_of(self, base: Value, name: str, node: cst.Attribute) -> Value:
        """``base.name``: a torch name, a wrapper's or a tensor's attribute, what a local
        class's ``__init__`` left on an instance, a device read from something unseen."""
        kind = base.kind
        if kind is Kind.NAMESPACE:
            qualname = f"{base.ref}.{name}"
            if qualname in torch_facts.DTYPES:
                return Value(Kind.DTYPE)
            return self.calls.namespace(qualname)
        if kind is Kind.WRAPPER:
            return self.wrappers.wrapper_attribute(base, name, node)
        if kind is Kind.PROJECT_MODULE:
            member = base.ref.member(name)
            if member is None:
                return UNKNOWN_VALUE
            if member.kind is Kind.PROJECT_MODULE:
                self.state.note_import(member.ref)
            return member
        if is_tensor_like(base):
            return self.tensor_attribute(base, name)
        if kind is Kind.INSTANCE and isinstance(base.ref, ClassInfo):
            if base.keys is not None and name in base.keys:
                return base.items[base.keys.index(name)]
            return base.ref.attrs.get(name, UNKNOWN_VALUE)
        if kind is Kind.DEVICE:
            return Value(Kind.STRING) if name == "type" else SCALAR_VALUE
        if kind is Kind.DISTRIBUTION and name in torch_facts.DISTRIBUTION_ATTRIBUTES:
            return distributions.result(base, name)
        if name == "device" and kind not in (Kind.MODULE, Kind.WRAPPER):
            self.state.places_tensors = True
            path = dotted_name(node)
            if path is not None and self.state.code_home() is None:
                # in another file's code `x.device` names that file's `x`: unknown here
                self.state.runtime_device = True
                return Value(Kind.DEVICE, Symbol(path), Origin("given as {}", node, node))
        if (
            kind is Kind.MODULE
            and base.ref == torch_facts.MODULE_DICT
            and name not in torch_facts.MODULE_DICT_API
        ):
            return element_of(base)  # self.transformer.wpe: a member, where the dict is
        if kind in (Kind.MODULE, Kind.WRAPPER) and name in ("weight", "bias"):
            return Value(Kind.TENSOR, base.device, base.origin, ref=PARAMETER)
        return UNKNOWN_VALUE

    # -- subscripts -------------------------------------------------------------

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        self.read(node.value, base)
        keys = []
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                keys.append(self.eval(element.slice.value, env))
        if is_tensor_like(base):
            self.advanced_index(node, node.value, base, node.slice, keys)
            if any(is_tensor_like(key) and has_dimension(key) for key in keys):
                return Value(base.kind, base.device, base.origin, 1)  # `t[idx]`: idx's dims
            return Value(base.kind, base.device, base.origin, _indexed_ndim(base, node.slice))
        if base.kind is Kind.MODULE:  # self.layers[i] of an nn.ModuleList
            return element_of(base)
        if base.kind is Kind.BATCH:
            return batch_part(base)
        if base.kind is Kind.DATASET and base.element is not None:
            return base.element  # `dataset[i]`: what its `__getitem__` returns
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return base if base.kind is Kind.SEQUENCE else UNKNOWN_VALUE
        return self._item(base, node.slice[0].slice.value, keys[0] if keys else UNKNOWN_VALUE)

    def advanced_index(
        self,
        node: cst.CSTNode,
        base_node: cst.BaseExpression,
        base: Value,
        elements: Sequence[cst.SubscriptElement],
        keys: list[Value],
        *,
        reading: bool = True,
    ) -> Operand | None:
        """``t[idx]`` with a tensor ``idx``: read, a cpu ``t`` cannot take indices on an
        accelerator (a GPU ``t`` accepts cpu indices; ``index`` checks "indices should be
        either on cpu or on the same device as the indexed tensor"); written (``t[idx] = v``,
        ``index_put_``), indices on any device are moved to ``t``'s. Returns the index when it
        is such a tensor."""
        if len(elements) != 1 or len(keys) != 1 or not isinstance(elements[0].slice, cst.Index):
            return None
        key = keys[0]
        if key.kind is not Kind.TENSOR or not has_dimension(key):  # a 0-dim index: an int
            return None
        index = Operand(elements[0].slice.value, key)
        if reading and base.device == CPU and can_be_accelerator(key.device):
            self.state.record(
                OperandsMeet(
                    node,
                    ADVANCED_INDEXING,
                    (Operand(base_node, base), index),
                    True,
                    self.flow.function,
                )
            )
        return index

    def _item(self, base: Value, key_node: cst.BaseExpression, key: Value) -> Value:
        if base.kind is Kind.SEQUENCE:
            found = item_at(base, key.ref) if isinstance(key.ref, int) else None
            return element_of(base) if found is None else found
        if base.kind is Kind.MAPPING:
            name = string_value(key_node)
            if base.keys is not None and name in base.keys:
                return base.items[base.keys.index(name)]
            if base.element is not None:
                return base.element
            return join_all(base.items) if base.items else UNKNOWN_VALUE
        return UNKNOWN_VALUE

    # -- operators --------------------------------------------------------------

    def _binary(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        strict = isinstance(node.operator, cst.MatrixMultiply)
        return self.operate(
            node, type(node.operator).__name__, left, node.left, right, node.right, strict
        )

    def operate(
        self,
        node: cst.CSTNode,
        operation: str,
        left: Value,
        left_node: cst.CSTNode,
        right: Value,
        right_node: cst.CSTNode,
        strict: bool,
    ) -> Value:
        """Result of a binary operator; records the meeting when both sides are tensors."""
        self.read(left_node, left)
        self.read(right_node, right)
        left_tensor, right_tensor = is_tensor_like(left), is_tensor_like(right)
        if not (left_tensor or right_tensor):
            if left.kind is Kind.STRING or right.kind is Kind.STRING:
                return STRING_VALUE
            return SCALAR_VALUE if left.kind is Kind.SCALAR is right.kind else UNKNOWN_VALUE
        if left_tensor and right_tensor:
            self.meet(
                node, operation, [Operand(left_node, left), Operand(right_node, right)], strict
            )
            base = result_base([left, right]) or right
            ndim = combined_ndim([left, right])
            return Value(Kind.TENSOR, base.device, base.origin, None if strict else ndim)
        tensor, other = (left, right) if left_tensor else (right, left)
        if tensor.device == CPU and not has_dimension(tensor) and other.kind is Kind.UNKNOWN:
            return Value(Kind.TENSOR)  # a cpu 0-dim tensor takes the other operand's device
        if other.kind in (Kind.SCALAR, Kind.NONE) or has_dimension(tensor):
            return Value(Kind.TENSOR, tensor.device, tensor.origin, tensor.ndim)  # broadcasting
        return Value(Kind.TENSOR, tensor.device, tensor.origin)  # never removes dimensions

    def _unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        if isinstance(node.operator, cst.Not):
            return SCALAR_VALUE
        return operand

    def _comparison(self, node: cst.Comparison, env: Env) -> Value:
        left_node: cst.BaseExpression = node.left
        left = self.eval(left_node, env)
        result = SCALAR_VALUE
        for target in node.comparisons:
            right = self.eval(target.comparator, env)
            if isinstance(target.operator, _ELEMENTWISE_COMPARISONS):
                value = self.operate(
                    node,
                    type(target.operator).__name__,
                    left,
                    left_node,
                    right,
                    target.comparator,
                    strict=False,
                )
                if value.kind is Kind.TENSOR:
                    result = value
            left_node, left = target.comparator, right
        return result

    def _boolean(self, node: cst.BooleanOperation, env: Env) -> Value:
        return join_values(self.eval(node.left, env), self.eval(node.right, env))

    def _if_exp(self, node: cst.IfExp, env: Env) -> Value:
        self.eval(node.test, env)
        narrowed = self.flow.narrowed_for(node.test, env, True)
        body = self.eval(node.body, env)
        env.widen(narrowed)
        narrowed = self.flow.narrowed_for(node.test, env, False)
        orelse = self.eval(node.orelse, env)
        env.widen(narrowed)
        if _unwraps(node.body, node.orelse) or _unwraps(node.orelse, node.body):
            # `model.module if wrapped else model`: the model itself, whichever path runs
            plain = orelse if _unwraps(node.body, node.orelse) else body
            unwrapped = body if plain is orelse else orelse
            return unwrapped if plain.kind is Kind.WRAPPER else plain
        joined = join_values(body, orelse, guarded=mentions_accelerator(node.test))
        if is_known(joined.device):
            return joined
        return filled_default(node.test, body, orelse) or joined

    # -- literals and displays ----------------------------------------------------

    def _string(self, node: cst.SimpleString, env: Env) -> Value:
        value = string_value(node)
        device = parse_device_string(value) if value is not None else None
        return Value(Kind.STRING, device) if device is not None else STRING_VALUE

    def _formatted_string(self, node: cst.FormattedString, env: Env) -> Value:
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.read(part.expression, self.eval(part.expression, env))
        first = node.parts[0] if node.parts else None
        if isinstance(first, cst.FormattedStringText):
            device = parse_device_string(first.value.rstrip(":"))
            if device is not None and device.type != "cpu":
                if not first.value.endswith(":"):
                    return Value(Kind.STRING, device)
                index = node.parts[1] if len(node.parts) > 1 else None
                name = (
                    dotted_name(index.expression)
                    if isinstance(index, cst.FormattedStringExpression)
                    else None
                )
                # f"cuda:{local_rank}": a GPU chosen at run time, named after its index
                symbol = Symbol(f"{device.type}:{name}") if name else Concrete(device.type)
                return Value(Kind.STRING, symbol)
        return STRING_VALUE

    def _integer(self, node: cst.Integer, env: Env) -> Value:
        try:
            return Value(Kind.SCALAR, ref=int(node.value, 0))
        except ValueError:
            return SCALAR_VALUE

    def _sequence(self, node: cst.Tuple | cst.List | cst.Set, env: Env) -> Value:
        items = []
        starred = False
        for element in node.elements:
            value = self.eval(element.value, env)
            if isinstance(element, cst.StarredElement):
                starred = True
                value = element_of(value)
            items.append(value)
        if starred:
            return Value(Kind.SEQUENCE, element=join_all(items) if items else None)
        return Value(Kind.SEQUENCE, items=tuple(items))

    def _dict(self, node: cst.Dict, env: Env) -> Value:
        keys: list[str] = []
        items: list[Value] = []
        literal_keys = True
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self.eval(element.key, env)
                key = string_value(element.key)
                if key is not None:
                    keys.append(key)
                else:
                    literal_keys = False
            else:
                literal_keys = False
            items.append(self.eval(element.value, env))
        if literal_keys:
            return Value(Kind.MAPPING, items=tuple(items), keys=tuple(keys))
        return Value(Kind.MAPPING, element=join_all(items) if items else None)

    def _comprehension_scope(self, node: cst.BaseComp, env: Env) -> Env:
        inner = Env(parent=env)
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            iterable = self.eval(clause.iter, inner)
            self.flow.bind(clause.target, torch_model.iterate(iterable, clause.iter), inner)
            for condition in clause.ifs:
                self.eval(condition.test, inner)
            clause = clause.inner_for_in
        return inner

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp, env: Env
    ) -> Value:
        kind = Kind.ITERABLE if isinstance(node, cst.GeneratorExp) else Kind.SEQUENCE
        clause = node.for_in
        if isinstance(node, cst.SetComp) or not _maps_one_name(clause):
            return Value(kind, element=self.eval(node.elt, self._comprehension_scope(node, env)))
        iterable = self.eval(clause.iter, env)
        items = iterable.items if iterable.kind is Kind.SEQUENCE else None
        if items and len(items) <= MAX_MAPPED_ITEMS:  # `a, b = (x.detach() for x in (a, b))`
            return Value(
                Kind.SEQUENCE, items=tuple(self._mapped(node, item, env) for item in items)
            )
        return Value(
            kind, element=self._mapped(node, torch_model.iterate(iterable, clause.iter), env)
        )

    def _mapped(self, node: cst.ListComp | cst.GeneratorExp, item: Value, env: Env) -> Value:
        """The comprehension's element for one item of what it iterates."""
        inner = Env(parent=env)
        self.flow.bind(node.for_in.target, item, inner)
        return self.eval(node.elt, inner)

    def _dict_comprehension(self, node: cst.DictComp, env: Env) -> Value:
        inner = self._comprehension_scope(node, env)
        self.eval(node.key, inner)
        return Value(Kind.MAPPING, element=self.eval(node.value, inner))

    def _named(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.flow.bind(node.target, value, env)
        return value

    def _yield(self, node: cst.Yield, env: Env) -> Value:
        value = node.value
        if isinstance(value, cst.From):
            produced = element_of(self.eval(value.item, env))
        else:
            produced = self.eval(value, env) if value is not None else NONE_VALUE
        self.flow.note_yield(produced)
        return UNKNOWN_VALUE
