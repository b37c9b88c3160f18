"""The gradient for arrays of another array library: `xp.` in place of NumPy.

`to_namespace` rewrites a generated gradient (made for any shape, so with no `out=`
buffers) so that every reference to NumPy goes through one name, `xp`: `np.exp(z)` becomes
`xp.exp(z)`, and `exp(z)` of `from numpy import exp` becomes `xp.exp(z)`. When the code
runs, `xp` is the `runtime.namespace.NumPyNames` of the arguments' namespace and every
runtime helper it calls is bound to the same names (runtime/namespace.py). What only
NumPy and SciPy can compute is refused here, naming the function.
"""
from __future__ import annotations

import builtins
import copy
import sys
import types

import gast
import numpy as np

from ..errors import SGCompilerError
from .. import runtime
from ..runtime import is_helper
from ..runtime.namespace import XP, standard_helper
from ..runtime.spellings import SciPyLinalg, SciPySignal, Special, spelled_stats

_NUMPY_MODULES = frozenset({"numpy", "numpy.linalg", "numpy.fft"})


def to_namespace(tree: gast.FunctionDef, lookup, linker, where: str) -> tuple:
    """Rewrite `tree` in place to reach NumPy through `xp`; returns the NumPy names it
    uses, ((name, line), ...), for the caller to check against a namespace.

    `lookup(name)` says what a free name of the function refers to ((found, value));
    `linker` names the objects inlined rules use; `where` is the function's file and
    line, for messages.

    Raises:
        SGCompilerError: for a call of a SciPy function or helper.
    """
    xp = linker.name_for("xp", XP)
    local = _local_names(tree)
    used = []

    def meaning(name):
        if name in local:
            return False, None
        if name in linker.names:
            return True, linker.names[name]
        return lookup(name)

    _standard_spellings(tree, meaning, linker, xp)
    _SciPyFunctions(meaning, xp, where).visit(tree)
    _StandardIndexing(xp).visit(tree)
    for node in gast.walk(tree):
        for field, child in gast.iter_fields(node):
            if isinstance(child, list):
                child[:] = [_rewritten(c, meaning, xp, where, linker) for c in child]
            elif isinstance(child, gast.AST):
                setattr(node, field, _rewritten(child, meaning, xp, where, linker))
    for node in gast.walk(tree):
        chain = _numpy_chain(node, xp)
        if chain:
            used.append((chain, getattr(node, "lineno", None)))
    return tuple(dict.fromkeys(used))


def _local_names(tree):
    names = {a.id for a in tree.args.args + tree.args.kwonlyargs}
    for extra in (tree.args.vararg, tree.args.kwarg):
        if extra is not None:
            names.add(extra.id)
    names.update(n.id for n in gast.walk(tree)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)))
    return names


def _standard_spellings(tree, meaning, linker, xp):
    """What NumPy arrays do that the standard's do not, spelled through runtime helpers
    and NumPyNames (bound to the namespace like the others): a product with a comparison
    `xp.times_mask(g, x == 0)`, `x.astype(t)` (the standard's
    arrays have no astype method) becomes `astype(x, t)`, `x.copy()` `xp.copy_of(x)`, and
    Python's `sum(x)` of an array (which iterates its rows) `rows_sum(x)`."""
    _MaskProducts(xp).visit(tree)
    for node in gast.walk(tree):
        if not isinstance(node, gast.Call):
            continue
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "astype" and \
                not _names_a_module(func.value, meaning):
            node.func = _helper_name(linker, "astype", runtime.astype)
            node.args = [func.value] + node.args
        elif isinstance(func, gast.Attribute) and func.attr == "copy" and \
                not node.args and not node.keywords and \
                not _names_a_module(func.value, meaning):
            node.func = _attributes(xp, ["copy_of"])
            node.args = [func.value]
        elif isinstance(func, gast.Name) and _is(meaning(func.id), builtins.sum):
            node.func = _helper_name(linker, "rows_sum", runtime.rows_sum)


class _MaskProducts(gast.NodeTransformer):
    """`g * (x == 0)` and `g * np.equal(x, 0)` (a rule's product with a comparison: the
    standard multiplies numbers only) as `xp.times_mask(g, x == 0)`, which casts the mask
    as NumPy promotes it."""

    def __init__(self, xp):
        self.xp = xp

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Mult):
            return node
        for mask, other in ((node.right, node.left), (node.left, node.right)):
            if isinstance(mask, gast.Compare) or _comparison_call(mask):
                return gast.copy_location(gast.Call(
                    func=_attributes(self.xp, ["times_mask"]), args=[other, mask],
                    keywords=[]), node)
        return node


_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def _comparison_call(node) -> bool:
    """Whether `node` is a call `np.equal(x, 0)` of a comparison (a mask times_mask casts;
    it multiplies as it is anything else times_mask is given)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr in _COMPARISONS and len(node.args) == 2 and not node.keywords


class _StandardIndexing(gast.NodeTransformer):
    """`y[index]`, `y[index] = v` and `y[index] += v` at an index that is not plainly
    basic (a name: it may hold an integer array, which the standard's arrays take in no
    assignment, and in a read only with every axis indexed) as `xp.getitem(y, index)` and
    `xp.setitem(y, index, v)`, which index as NumPy does."""

    def __init__(self, xp):
        self.xp = xp

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or _basic(node.slice):
            return node
        return gast.copy_location(gast.Call(func=_attributes(self.xp, ["getitem"]),
                                            args=[node.value, _as_value(node.slice)],
                                            keywords=[]), node)

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and self._at_an_array(node.targets[0]):
            return self._set(node, node.targets[0], node.value)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        target = node.target
        if self._at_an_array(target) and _pure(target.slice) and _pure(target.value):
            read = self.visit(gast.Subscript(value=copy.deepcopy(target.value),
                                             slice=copy.deepcopy(target.slice),
                                             ctx=gast.Load()))
            return self._set(node, target, gast.BinOp(left=read, op=node.op,
                                                      right=node.value))
        return node

    def _at_an_array(self, target):
        return isinstance(target, gast.Subscript) and not _basic(target.slice)

    def _set(self, node, target, value):
        call = gast.Call(func=_attributes(self.xp, ["setitem"]),
                         args=[target.value, _as_value(target.slice), value], keywords=[])
        return gast.copy_location(gast.Expr(value=call), node)


def _as_value(index):
    """An index as an argument: `a:b` as `slice(a, b)`."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_as_value(e) for e in index.elts], ctx=gast.Load())
    if isinstance(index, gast.Slice):
        bounds = [index.lower, index.upper, index.step]
        if index.step is None:      # (`:` as slice(None), `a:` as slice(a, None))
            bounds = [None] if index.lower is None and index.upper is None else bounds[:2]
        return gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None,
                                        type_comment=None),
                         args=[gast.Constant(value=None, kind=None) if p is None else p
                               for p in bounds], keywords=[])
    return index


def _basic(index) -> bool:
    """Whether an index is written as integers, slices, `...` and None only."""
    if isinstance(index, gast.Tuple):
        return all(_basic(e) for e in index.elts)
    if isinstance(index, gast.Slice):
        return all(p is None or _basic(p) for p in (index.lower, index.upper, index.step))
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
        return _basic(index.operand)
    return isinstance(index, gast.Constant) and (
        index.value is None or index.value is Ellipsis or type(index.value) is int)


def _pure(node) -> bool:
    """Whether evaluating `node` twice is evaluating it once (names, constants, slices)."""
    if isinstance(node, gast.Tuple):
        return all(_pure(e) for e in node.elts)
    if isinstance(node, gast.Slice):
        return all(p is None or _pure(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, gast.UnaryOp):
        return _pure(node.operand)
    return isinstance(node, (gast.Name, gast.Constant))


def _names_a_module(node, meaning) -> bool:
    """Whether `node` is a name of a module or class (np.astype, runtime.astype: functions,
    not methods of an array)."""
    if not isinstance(node, gast.Name):
        return False
    found, value = meaning(node.id)
    return found and isinstance(value, (types.ModuleType, type))


def _is(meant, value):
    found, what = meant
    return found and what is value


def _helper_name(linker, name, helper):
    return gast.Name(id=linker.name_for(name, helper), ctx=gast.Load(), annotation=None,
                     type_comment=None)


def _rewritten(node, meaning, xp, where, linker):
    """`node` with a Name that refers to NumPy (or one of its functions) spelled
    through `xp`."""
    if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) or \
            node.id == xp:
        return node
    found, value = meaning(node.id)
    if not found:
        return node
    module = getattr(value, "__module__", None) or ""
    if value is np or value is np.linalg or value is np.fft:
        chain = value.__name__.split(".")[1:]
        return _attributes(xp, chain)
    if _spelled_special(value):     # (scipy.special.xlogy: xp.special.xlogy)
        return _attributes(xp, ["special", value.__name__])
    if value is not None and value is sys.modules.get("scipy.special"):
        return _attributes(xp, ["special"])     # (its other functions: refused by name)
    if isinstance(value, np.ufunc) and getattr(np, value.__name__, None) is not value:
        raise SGCompilerError(      # a ufunc of SciPy's (scipy.special.xlogy)
            f"{where}: {value.__name__} (a SciPy ufunc) computes with NumPy arrays only, so "
            "this gradient cannot run on arrays of other array-API libraries; pass NumPy "
            "arrays")
    if module in _NUMPY_MODULES or isinstance(value, np.ufunc) or \
            (isinstance(value, type) and issubclass(value, np.generic)):
        name = getattr(value, "__name__", node.id)
        prefix = module.split(".")[1:] if module in _NUMPY_MODULES else []
        return _attributes(xp, prefix + [name])
    scipy_helper = is_helper(value) and any(
        part.startswith("scipy") for part in module.split(".")[1:]) and \
        not standard_helper(value)
    if scipy_helper:        # (runtime/scipy/: computes with SciPy, which needs NumPy)
        raise SGCompilerError(
            f"{where}: {getattr(value, '__name__', node.id)} (a helper of sgcompiler's "
            f"SciPy rules, in {module}) computes with SciPy and NumPy arrays only, so this "
            "gradient cannot run on arrays of other array-API libraries; pass NumPy arrays")
    if is_helper(value) and node.id not in linker.names:    # (the user's: bound to xp too)
        return gast.Name(id=linker.name_for(node.id, value), ctx=gast.Load(),
                         annotation=None, type_comment=None)
    if module.startswith("scipy") or getattr(value, "__name__", "").startswith("scipy"):
        public = ".".join(p for p in module.split(".") if not p.startswith("_"))
        what = f"{public}.{getattr(value, '__name__', node.id)}" if module else node.id
        raise SGCompilerError(
            f"{where}: {what} (SciPy) computes with NumPy arrays only, so this gradient "
            "cannot run on arrays of other array-API libraries; pass NumPy arrays")
    return node


class _SciPyFunctions(gast.NodeTransformer):
    """A SciPy function runtime/spellings.py spells, written as an attribute chain
    (`scipy.stats.norm.logpdf`, `norm.logpdf`, `scipy.linalg.inv`) or a name of it, as
    `xp.stats.norm.logpdf` and `xp.scipy.linalg.inv`; the other scipy.stats distributions
    are refused by name (`scipy.stats.t.logpdf (SciPy)`), the other functions of SciPy's
    modules by `_rewritten`."""

    def __init__(self, meaning, xp, where):
        self.meaning = meaning
        self.xp = xp
        self.where = where

    def visit_Attribute(self, node):
        chain, root = [], node
        while isinstance(root, gast.Attribute):
            chain.append(root.attr)
            root = root.value
        if isinstance(root, gast.Name) and isinstance(node.ctx, gast.Load):
            found, value = self.meaning(root.id)
            for attr in reversed(chain):
                value = getattr(value, attr, None) if found else None
            spelled = _spelled_scipy(value) if found else None
            if spelled:
                return gast.copy_location(_attributes(self.xp, spelled), node)
            if found and _stats_method(value, spelled=False):
                self._refuse(f"scipy.stats.{value.__self__.name}.{value.__name__}")
        self.generic_visit(node)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id != self.xp:
            found, value = self.meaning(node.id)
            spelled = _spelled_scipy(value) if found else None
            if spelled:
                return gast.copy_location(_attributes(self.xp, spelled), node)
            family = getattr(getattr(value, "__self__", None), "name", None)
            if found and isinstance(family, str) and _stats_method(value, spelled=False):
                self._refuse(f"scipy.stats.{family}.{value.__name__}")
        return node

    def _refuse(self, what):
        raise SGCompilerError(
            f"{self.where}: {what} (SciPy) computes with NumPy arrays only, so this "
            "gradient cannot run on arrays of other array-API libraries; pass NumPy arrays")


def _spelled_scipy(value):
    """The chain of attributes of `xp` that spells `value`, a function of SciPy's that
    runtime/spellings.py spells (['stats', 'norm', 'pdf'], ['scipy', 'linalg', 'inv']),
    else None."""
    method = _stats_method(value)
    if method:
        return ["stats", *method]
    name = getattr(value, "__name__", None)
    for module, spelled in (("linalg", SciPyLinalg.SPELLED), ("signal", SciPySignal.SPELLED)):
        found = sys.modules.get(f"scipy.{module}")
        if found is not None and name in spelled and getattr(found, name, None) is value:
            return ["scipy", module, name]
    return None


def _stats_method(value, spelled=True):
    """(family, method) when `value` is a method of a scipy.stats distribution that
    runtime/spellings.py spells (or, with spelled=False, any), else None."""
    stats = sys.modules.get("scipy.stats")
    owner = getattr(value, "__self__", None)
    method = getattr(value, "__name__", None)
    family = getattr(owner, "name", None)
    if stats is None or not isinstance(family, str) or not isinstance(method, str) or \
            getattr(stats, family, None) is not owner or \
            (spelled and not spelled_stats(family, method)):
        return None
    return family, method


def _spelled_special(value) -> bool:
    """Whether `value` is a function of scipy.special that runtime/spellings.py spells."""
    special = sys.modules.get("scipy.special")
    name = getattr(value, "__name__", None)
    return special is not None and isinstance(name, str) and \
        name in vars(Special) and not name.startswith("_") and \
        getattr(special, name, None) is value


def _attributes(xp, chain):
    node = gast.Name(id=xp, ctx=gast.Load(), annotation=None, type_comment=None)
    for attr in chain:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _numpy_chain(node, xp):
    """'linalg.norm' for `xp.linalg.norm` (the outermost attribute of a chain on xp)."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name) and node.id == xp and parts:
        return ".".join(reversed(parts))
    return None
