"""The syntax walks skip LibCST's visitor-based ``children`` but must still reach every
node of code: a node they missed would be a name, a call or a string no rule sees."""

from __future__ import annotations

import libcst as cst

from devlint.core.syntax import descendants, statements_on_self, words_in

CODE = """\
@register(device="cuda")
class Net(nn.Module):
    def __init__(self, dim, /, scale=2.0, *extra, bias: torch.Tensor = None, **kw) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim) if bias is None else make(bias.to("cuda:1"))
        try:
            self.table = torch.zeros(dim, device=kw["device"])
        except (KeyError, ValueError) as error:
            self.table = {k: v.cuda() for k, v in (lambda: kw)().items() if k}
        finally:
            self.ready = not extra
        for row in range(dim):
            while row:
                row -= 1
            else:
                self.last = row
        with torch.no_grad() as guard:
            self.out = f"{guard!r:>{dim}}" + "cpu"
        match scale:
            case 1.0:
                self.scale = [*extra, -scale]
"""


def _code_nodes_by_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node under ``node`` through LibCST's ``children``, the walk the helpers used."""
    found, stack = [], list(node.children)
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _is_code(node: cst.CSTNode) -> bool:
    return (
        type(node).__module__ != cst.Dot.__module__  # operators and punctuation
        and not isinstance(node, cst.BaseParenthesizableWhitespace)
        and type(node).__name__ not in ("Newline", "TrailingWhitespace", "EmptyLine", "Comment")
        and not isinstance(
            node,
            cst.LeftParen
            | cst.RightParen
            | cst.LeftSquareBracket
            | cst.RightSquareBracket
            | cst.LeftCurlyBrace
            | cst.RightCurlyBrace,
        )
    )


def test_descendants_reach_every_node_of_code_that_children_reach():
    module = cst.parse_module(CODE)
    expected = {id(node) for node in _code_nodes_by_children(module) if _is_code(node)}
    walked = {id(node) for node in descendants(module) if _is_code(node)}
    assert walked == expected
    assert len(expected) > 200  # the sample is code of every kind, not an empty walk


def test_descendants_stop_below_the_nodes_enter_refuses():
    module = cst.parse_module(CODE)
    outside = {
        id(node) for node in descendants(module, lambda node: not isinstance(node, cst.FunctionDef))
    }
    method = next(node for node in descendants(module) if isinstance(node, cst.FunctionDef))
    assert id(method) in outside
    assert id(method.body) not in outside


def test_words_of_a_condition_are_its_names_attributes_and_strings():
    test = cst.parse_expression('a.gpu[0] + f(x, "cuda") if flag else -(b ** "mps")')
    assert sorted(words_in(test)) == sorted(
        [
            ("gpu", False),
            ("a", False),
            ("f", False),
            ("x", False),
            ('"cuda"', True),
            ("flag", False),
            ("b", False),
            ('"mps"', True),
        ]
    )


def test_assignments_to_self_are_found_in_every_kind_of_suite():
    module = cst.parse_module(CODE)
    init = next(
        node
        for node in descendants(module)
        if isinstance(node, cst.FunctionDef) and node.name.value == "__init__"
    )
    names = sorted(name for _, name in statements_on_self(init))
    assert names == ["last", "out", "proj", "ready", "scale", "table", "table"]
