"""Which file a ``torch.save`` or ``torch.load`` call names, as far as its literals tell.

``torch.save(x.cpu(), os.path.join(out, "feats.pth"))`` and
``torch.load(os.path.join(args.features, "feats.pth"))`` name the same file
even though their folders are spelled differently: the rules ask whether a
load reads what the same code wrote.
"""

from __future__ import annotations

import libcst as cst

from devlint.core.syntax import descendants, string_value


def path_argument(call: cst.Call, position: int) -> cst.BaseExpression | None:
    """The ``f`` argument: ``torch.load(f)`` (position 0), ``torch.save(obj, f)`` (1)."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            if arg.keyword.value == "f":
                return arg.value
        elif index == position and not arg.star:
            return arg.value
    return None


def file_names(node: cst.CSTNode | None) -> set[str]:
    """The file names spelled in a path expression (``os.path.join(d, "feats.pth")``)."""
    if node is None:
        return set()
    names = set()
    for current in (node, *descendants(node)):
        text = string_value(current) if isinstance(current, cst.SimpleString) else None
        name = text.rsplit("/", 1)[-1] if text else ""
        if "." in name.strip("."):  # "feats.pth", not "out" or "/"
            names.add(name)
    return names
