"""Functions defined inside a differentiated function, and functions passed to helpers.

Runs right after parsing, before `check`. A nested def or a lambda bound to a local name
becomes a function of its own (frontend/lifted.py) that takes the enclosing function's variables it
reads as extra parameters, passed at each call (Python reads them at call time too):

    def loss(x, w):                          def loss(x, w):
        act = lambda t: np.tanh(t * w)  ->       h = _loss_lambda_3(x, w)
        h = act(x)                               ...       (loss_lambda_3(t, w) lifted)

A function passed to a user helper (`apply(act, x)`, `apply(lambda t: t * 2, x)`,
`apply(np.tanh, x)`) gives a copy of the helper with that parameter bound to it
(`apply_act(x, w)`), so the helper's `g(x)` is a call of a known function.
Anything else done with a local function (storing it, returning it) is refused.
"""
from __future__ import annotations

import copy
import types
from dataclasses import dataclass, replace

import gast

from ... import rules
from ...errors import describe, errors_at
from ..depends import function_reads, module_level, note
from ..lifted import lifted_function, remaining_defaults
from .objects import user_code
from ..source import FunctionSource, parse_function
from ...ir.blocks import nodes, walk, walk_list


class _Refused(Exception):
    pass


def lift_nested(fn: FunctionSource) -> FunctionSource:
    """`fn` with its nested functions lifted and calls of them rewritten (or `fn` itself).

    Raises:
        SGCompilerError: for a nested function used in a way that cannot be differentiated.
    """
    if not any(isinstance(n, (gast.Lambda, gast.FunctionDef)) for s in fn.tree.body
               for n in nodes(s)) and not _passes_functions(fn):
        return fn
    lifter = _Lifter(fn)
    try:
        lifter.run()
    except _Refused as exc:
        node, message = exc.args
        raise errors_at([describe(fn, node, message)]) from None
    return replace(fn, introduced={**fn.introduced, **lifter.introduced})


def _passes_functions(fn) -> bool:
    """Whether some call passes a module-level function to another function."""
    everything = walk_list(fn.tree)     # (one walk for the names and the calls)
    local = {n.id for n in everything if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    for node in everything:
        if isinstance(node, gast.Call):
            for arg in node.args:
                if isinstance(arg, (gast.Name, gast.Attribute)) and \
                        _is_function(module_level(fn, arg, local)):
                    return True
    return False


def _is_function(obj) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)) or \
        type(obj).__name__ == "ufunc"


def _name(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(id_):
    return gast.Name(id=id_, ctx=gast.Store(), annotation=None, type_comment=None)


@dataclass(frozen=True)
class _Signature:
    """How a local function takes its arguments (its lifted copy takes them all by
    position, in this order, then the variables it captures)."""

    positional: tuple
    kwonly: tuple
    defaults: dict          # parameter -> a constant, or the variable its default is in


class _Lifter:
    """One pass over a function: lift its local functions, rewrite their uses."""

    def __init__(self, fn: FunctionSource):
        self.fn = fn
        self.locals = {n.id for n in walk(fn.tree) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, (gast.Store, gast.Param))}
        self.locals |= {a.id for a in fn.tree.args.args + fn.tree.args.kwonlyargs}
        self.values = {}        # local name -> (lifted function, captured names)
        self.signatures = {}    # local name -> its _Signature
        self.introduced = {}    # name in fn -> object

    def run(self):
        self._lift_block(self.fn.tree.body)
        for node in list(walk(self.fn.tree)):
            if isinstance(node, gast.Call):
                self._rewrite_call(node)
        for node in walk(self.fn.tree):
            if isinstance(node, gast.Name) and node.id in self.values:
                raise _Refused(node, f"the local function '{node.id}' can only be called or "
                                     "passed to a function here; define it at module level "
                                     "to use it otherwise")
            if isinstance(node, (gast.Lambda, gast.FunctionDef)) and \
                    node is not self.fn.tree:
                raise _Refused(node, "this nested function can only be bound to a name "
                                     "once and called, or passed to a function; define it "
                                     "at module level otherwise")

    def _lift_block(self, body):
        for i, stmt in enumerate(body):
            for field in ("body", "orelse"):
                if not isinstance(stmt, gast.FunctionDef) and hasattr(stmt, field):
                    self._lift_block(getattr(stmt, field))
            name, tree = self._definition(stmt)
            if name is None:
                continue
            if sum(1 for n in walk(self.fn.tree) if isinstance(n, gast.Name)
                   and n.id == name and isinstance(n.ctx, gast.Store)) > (
                       0 if isinstance(stmt, gast.FunctionDef) else 1):
                raise _Refused(stmt, f"the local function '{name}' is bound more than once; "
                                     "give each function a name of its own")
            function, captured, signature, evaluated = self._lift(tree, stmt)
            self.values[name] = (function, captured)
            self.signatures[name] = signature
            # defaults are evaluated where the function is defined, as Python does
            body[i] = [gast.copy_location(gast.Assign(targets=[_store(n)], value=v,
                                                      type_comment=None), stmt)
                       for n, v in evaluated] or gast.copy_location(gast.Pass(), stmt)
        body[:] = [s for item in body for s in (item if isinstance(item, list) else [item])]

    def _definition(self, stmt):
        """(name, def tree) when `stmt` defines a local function, else (None, None)."""
        if isinstance(stmt, gast.FunctionDef):
            if stmt.decorator_list:
                raise _Refused(stmt, "decorated nested functions are not supported; define "
                                     "the function at module level")
            return stmt.name, copy.deepcopy(stmt)
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) and \
                len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            return stmt.targets[0].id, self._lambda_def(stmt.value)
        return None, None

    def _lambda_def(self, node):
        tree = gast.FunctionDef(name="lambda", args=node.args,
                                body=[gast.Return(value=node.body)], decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        gast.copy_location(tree, node)
        gast.copy_location(tree.body[0], node.body)
        return copy.deepcopy(tree)

    def _lift(self, tree, where):
        """(function, captured names, signature, [(name, default expression)]) for a
        nested def tree; the lifted function takes every parameter by position."""
        args = tree.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise _Refused(where, "a nested function with *args, **kwargs or positional-"
                                  "only parameters is not supported; name each parameter, "
                                  "or define the function at module level")
        outer = self.fn.name
        base = f"{outer}_lambda_{tree.lineno}" if tree.name == "lambda" else \
            f"{outer}_{tree.name}"
        signature, evaluated = self._signature(args, base, where)
        args.args = args.args + args.kwonlyargs
        args.kwonlyargs, args.kw_defaults, args.defaults = [], [], []
        # calls of the local functions lifted before it, inside it
        for node in list(walk(tree)):
            if isinstance(node, gast.Call):
                self._rewrite_call(node)
        own = {a.id for a in args.args} | {n.id for n in walk(tree) if isinstance(
            n, gast.Name) and isinstance(n.ctx, gast.Store)}
        captured = sorted({n.id for n in walk(tree) if isinstance(n, gast.Name)
                           and isinstance(n.ctx, gast.Load) and n.id not in own
                           and (n.id in self.locals or n.id in self.fn.closure)})
        for name in captured:
            args.args.append(gast.Name(id=name, ctx=gast.Param(), annotation=None,
                                       type_comment=None))
        tree.name = base
        # what the tree was made from: where it is, and the objects it calls by name
        key = ("nested", self.fn.function.__code__, tree.lineno, tree.col_offset,
               tuple((k, id(v)) for k, v in sorted(self.introduced.items())))
        function = lifted_function(tree, self.fn.globals, key, self.fn.filename,
                                   dict(self.introduced))
        return function, tuple(captured), signature, evaluated

    def _signature(self, args, base, where):
        """(_Signature, [(name, expression)]): a default that is not a constant is
        evaluated where the function is defined, into a variable of its own."""
        positional = [a.id for a in args.args]
        given = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        given += [(a.id, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                  if d is not None]
        defaults, evaluated = {}, []
        for name, expr in given:
            if isinstance(expr, gast.Constant):
                defaults[name] = expr
                continue
            if where is None:
                raise _Refused(expr, "a lambda written where it is called or passed may "
                                     "have constant defaults only; assign it to a name "
                                     "first")
            variable = self._fresh_local(f"_{base}_{name}")
            evaluated.append((variable, expr))
            defaults[name] = _name(variable)
        return _Signature(tuple(positional), tuple(a.id for a in args.kwonlyargs),
                          defaults), evaluated

    def _fresh_local(self, base):
        name = base
        while name in self.locals or name in self.fn.globals or name in self.introduced:
            name += "_"
        self.locals.add(name)
        return name

    def _bound_arguments(self, call, signature):
        """The arguments of a call of a local function, in its parameters' order."""
        if any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords) or \
                len(call.args) > len(signature.positional):
            raise _Refused(call, "this call of a local function passes arguments it does "
                                 "not take, or unpacks them with * or **; pass each one")
        values = dict(zip(signature.positional, call.args))
        for k in call.keywords:
            if k.arg in values or k.arg not in signature.positional + signature.kwonly:
                raise _Refused(call, f"this call of a local function passes '{k.arg}', "
                                     "which it does not take or is given twice")
            values[k.arg] = k.value
        out = []
        for name in signature.positional + signature.kwonly:
            if name not in values and name not in signature.defaults:
                raise _Refused(call, f"this call of a local function does not pass "
                                     f"'{name}'")
            out.append(values[name] if name in values else
                       copy.deepcopy(signature.defaults[name]))
        return out

    def _introduce(self, base, obj):
        name = "_" + base
        while name in self.locals or name in self.fn.globals or \
                self.introduced.get(name, obj) is not obj:
            name += "_"
        self.introduced[name] = obj
        return name

    def _rewrite_call(self, call):
        func = call.func
        if isinstance(func, gast.Lambda) or isinstance(func, gast.Name) and \
                func.id in self.values:
            if isinstance(func, gast.Lambda):
                function, captured, signature, _ = self._lift(self._lambda_def(func), None)
            else:
                (function, captured), signature = self.values[func.id], \
                    self.signatures[func.id]
            call.func = _name(self._introduce(function.__name__, function))
            call.args = self._bound_arguments(call, signature) + [_name(c) for c in captured]
            call.keywords = []
            return
        if isinstance(func, gast.Name) and func.id not in self.locals:
            self._specialise(call)
        for i, arg in enumerate(call.args):
            if isinstance(arg, gast.Lambda):
                raise _Refused(arg, "a lambda passed to a library function (scipy.optimize, "
                                    "np.apply_along_axis with extra arguments, ...) is "
                                    "called by the library, where no gradient can be "
                                    "derived; write the computation with array operations "
                                    "or a loop (map(f, xs), np.apply_along_axis(f, axis, x),"
                                    " np.vectorize(f)(x) and user functions taking a lambda "
                                    "are fine)")

    def _argument(self, arg):
        """(function, captured, signature) when `arg` is a function value, else None;
        the signature (None for a module-level function) says how the helper's calls of
        it fill its defaults (one evaluated where it was defined is passed on as though
        the function captured it)."""
        if isinstance(arg, gast.Lambda):
            function, captured, signature, _ = self._lift(self._lambda_def(arg), None)
        elif isinstance(arg, gast.Name) and arg.id in self.values:
            (function, captured), signature = self.values[arg.id], self.signatures[arg.id]
        else:
            obj = module_level(self.fn, arg, self.locals)
            return (obj, (), None) if _is_function(obj) else None
        if not (signature.defaults or signature.kwonly):
            return function, captured, None
        return function, captured, signature
    def _specialise(self, call):
        """`h(a, g, b)` with h a user function and g a function: `_h_g(a, b, *captured)`."""
        found, helper = self.fn.lookup(call.func.id)
        if not found or not isinstance(helper, types.FunctionType):
            return
        if not user_code(helper) and not rules.registry.is_source_module(helper.__module__):
            return      # a library's function (scipy.integrate.odeint): its rule, or none
        bound = {i: v for i, a in enumerate(call.args)
                 if (v := self._argument(a)) is not None}
        # a parameter left to its default function (act=np.tanh): bound to it
        positional = helper.__code__.co_varnames[:helper.__code__.co_argcount]
        defaults = helper.__defaults__ or ()
        given = {k.arg for k in call.keywords}
        for i, value in enumerate(defaults, len(positional) - len(defaults)):
            if i >= len(call.args) and positional[i] not in given and _is_function(value):
                bound[i] = (value, (), None)
        if not bound:
            return
        for read in function_reads(helper):
            note(*read)
        special = specialised(helper, bound, call)
        call.func = _name(self._introduce(special.__name__, special))
        call.args = [a for i, a in enumerate(call.args) if i not in bound]
        # the caller's variables the functions read: keyword-only parameters at the end
        names = helper.__code__.co_varnames
        call.keywords += [gast.keyword(arg=_captured_name(names[i], c), value=_name(c))
                          for i, value in sorted(bound.items()) for c in _passed(value)]


def _passed(value) -> tuple:
    """The caller's variables a helper is passed for the function (function, captured,
    signature) bound to one of its parameters: those it reads, then those its defaults
    were evaluated into."""
    _, captured, signature = value
    held = () if signature is None else tuple(
        d.id for d in signature.defaults.values() if isinstance(d, gast.Name))
    return tuple(captured) + tuple(v for v in held if v not in captured)


def _filled(call, signature, renamed: dict, where) -> list:
    """The arguments of the helper's call `call` of a local function with defaults, in
    its parameters' order (a default evaluated into a variable: the helper's parameter
    for that variable)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords) or \
            len(call.args) > len(signature.positional):
        raise _Refused(where, "the helper calls the local function passed to it with "
                              "arguments it does not take, or unpacks them with * or **")
    values = dict(zip(signature.positional, call.args))
    values.update((k.arg, k.value) for k in call.keywords)
    out = []
    for name in signature.positional + signature.kwonly:
        if name in values:
            out.append(values.pop(name))
        elif name in signature.defaults:
            default = signature.defaults[name]
            out.append(_name(renamed[default.id]) if isinstance(default, gast.Name)
                       else copy.deepcopy(default))
        else:
            raise _Refused(where, f"the helper calls the local function passed to it "
                                  f"without '{name}'")
    if values:
        raise _Refused(where, f"the helper calls the local function passed to it with "
                              f"'{next(iter(values))}', which it does not take")
    return out


def _captured_name(param, name) -> str:
    """The helper's parameter for variable `name` that the function bound to its
    parameter `param` reads (`_g_w`)."""
    return f"_{param}_{name}"


def specialised(helper, bound: dict, where):
    """A copy of user function `helper` with the positional parameters in `bound`
    (position -> (function, captured names)) bound to those functions; the captured
    names become keyword-only parameters, passed on to each call of the function."""
    src = parse_function(helper)
    tree = src.tree
    args = tree.args
    if args.vararg or args.kwarg or args.posonlyargs or max(bound) >= len(args.args):
        raise _Refused(where, f"'{src.name}' takes a function argument in a form that is "
                              "not supported (*args, positional-only parameters); name each "
                              "parameter")
    names = [a.id for a in args.args]
    first_default = len(names) - len(args.defaults)
    introduced, extra, suffix = dict(src.introduced), {}, []
    signatures, passed = {}, {}
    for i, value in sorted(bound.items()):
        function, captured, signatures[names[i]] = value
        introduced[names[i]] = function
        extra[names[i]] = [_captured_name(names[i], c) for c in captured]
        passed[names[i]] = {c: _captured_name(names[i], c) for c in _passed(value)}
        suffix.append(getattr(function, "__name__", "f").strip("<>"))
    calls = set()
    for node in walk(tree):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in extra:
            signature = signatures[node.func.id]
            if signature is not None:
                node.args = _filled(node, signature, passed[node.func.id], where)
                node.keywords = []
            node.args += [_name(r) for r in extra[node.func.id]]
            calls.add(id(node.func))
    for node in walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                (extra.get(node.id) or signatures.get(node.id)) and id(node) not in calls:
            raise _Refused(where, f"'{src.name}' uses its function parameter '{node.id}' "
                                  "other than by calling it, and the function passed reads "
                                  "variables of its caller; call it there, or pass a "
                                  "module-level function")
    keep = [i for i in range(len(names)) if i not in bound]
    args.defaults = [d for j, d in enumerate(args.defaults) if first_default + j in keep]
    args.args = [args.args[i] for i in keep]
    for i in sorted(bound):
        for r in passed[names[i]].values():
            args.kwonlyargs.append(gast.Name(id=r, ctx=gast.Param(), annotation=None,
                                             type_comment=None))
            args.kw_defaults.append(None)
    tree.name = f"{src.name}_{'_'.join(suffix)}"
    key = ("specialised", helper.__code__,
           tuple((i, v[0], _passed(v)) for i, v in sorted(bound.items())))
    return lifted_function(tree, helper.__globals__, key, src.filename, introduced,
                           cells=dict(zip(helper.__code__.co_freevars,
                                          helper.__closure__ or ())),
                           defaults=remaining_defaults(helper, {names[i] for i in bound}))
