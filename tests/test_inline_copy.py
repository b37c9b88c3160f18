"""inline() copies a rule's template and substitutes its names in one walk; check that walk
against the obvious two-step version (copy.deepcopy, then a NodeTransformer) on every rule."""
import copy

import gast
import pytest

from sgcompiler.ir.builders import load
from sgcompiler.reverse.inline import _clone, inline
from sgcompiler.rules.registry import all_rules


class _Namer:
    def __init__(self):
        self.taken = set()

    def reserve(self, names):
        self.taken.update(names)

    def fresh(self, base):
        name, i = base, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name


class _Fn:
    def lookup(self, name):
        return False, None


def _linker():
    from sgcompiler.reverse.inline import Linker
    return Linker(_Fn(), _Namer())


def _two_step(rule, param, values, linker):
    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in values:
                return copy.deepcopy(values[node.id])
            return load(linker.name_for(node.id, rule.namespace[node.id]))
    return Substitute().visit(copy.deepcopy(rule.output_for(param)))


RULES = [(r, p) for r in all_rules() for p, out in zip(r.params, r.outputs) if out is not None]


@pytest.mark.parametrize("rule, param", RULES, ids=[f"{r.name}-{p}" for r, p in RULES])
def test_inline_equals_deepcopy_then_substitute(rule, param):
    g = gast.BinOp(left=load("dz"), op=gast.Mult(), right=load("w"))
    args = {p: load(f"arg_{p}") for p in rule.params}
    values = {"g": g, "ans": load("z"), **args}
    linker_a, linker_b = _linker(), _linker()
    fast = inline(rule, param, args, g, "z", linker_a)
    slow = _two_step(rule, param, values, linker_b)
    assert gast.dump(fast) == gast.dump(slow)
    assert linker_a.names.keys() == linker_b.names.keys()


def test_clone_shares_no_node_with_its_original():
    tree = gast.parse("y = f(a, b=[c, 2.0]) * -d[1:2]")
    copied = _clone(tree, None)
    assert gast.dump(copied) == gast.dump(tree)
    originals = {id(n) for n in gast.walk(tree) if not isinstance(n, gast.expr_context)}
    assert not originals & {id(n) for n in gast.walk(copied)}
