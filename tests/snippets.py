"""Small files with one known finding each, shared by the front-end tests."""

MIXED = """\
import torch


def run():
    a = torch.zeros(3, device="cuda")
    b = torch.ones(3)
    return a + b
"""
"""`a + b`: a cuda tensor meets a cpu one (DVL101 at line 7)."""
DISCARDED = 'import torch\n\nx = torch.ones(3)\nx.to("cuda")\n'
"""`x.to("cuda")` as a statement: the result is discarded (DVL201 at line 4)."""
