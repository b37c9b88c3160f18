"""Command line: print the generated gradient code of a function in a file or module.

    sgcompiler samples/stable_softmax.py:softmax_loss_stable [--wrt x,w] [--stage grad]
    sgcompiler mypackage.model:loss
    sgcompiler model.py:loss --shapes W=784x256,b=256,X=128x784,lam=float
    sgcompiler model.py:loss --order 2       # grad of grad: the gradient of sum(grad f)
    sgcompiler model.py:loss --mode forward      (the tangent function f_jvp, forward mode)
    sgcompiler explain model.py:loss [--wrt W,b] [--shapes ...]   (why the gradient is
                                                  what it is: explain/)
    sgcompiler --version

The file or module is imported, so its top-level code runs (as `python -c "import model"`
would run it). Without --shapes the code is for arguments of any shape; with it, for those
shapes (and dtypes: `x=3x4:float32`), as `grad(f)` compiles it for a call with such
arguments.

Errors are one line on stderr (file:line where there is one) and a non-zero exit; never a
traceback.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import inspect
import math
import os
import sys
import sysconfig
import traceback

import numpy as np

from . import __version__
from .frontend.forms.objects import as_function
from .frontend.source import function_name
from .api import grad
from .arguments import dtype_refusal, wrt_names
from .backend.loader import function_from_text
from .errors import SGCompilerError
from .backend.reading import reading_view
from .explain import explain
from .explain.side_by_side import side_by_side_sections, side_by_side_sections_text
from .frontend.forms.checkpoint import check_policy
from .pipeline import compile_gradient
from .pipeline.stages import FORWARD_STAGES, STAGES, dump_stage

INTERNAL_ERROR = 70      # exit status for a bug in sgcompiler (sysexits' EX_SOFTWARE)


class UsageError(Exception):
    """Bad command-line input: a missing file or function, a file that does not run."""


def main(argv=None) -> int:
    """Run the command line on `argv` (default: sys.argv[1:]) and return the exit status:
    0, 1 for input that cannot be compiled, 2 for bad usage (argparse exits with it, as
    for --help with 0), 70 for a bug in sgcompiler."""
    argv = sys.argv[1:] if argv is None else list(argv)
    explaining = bool(argv) and argv[0] == EXPLAIN
    args = (_explain_parser() if explaining else _parser()).parse_args(
        argv[1:] if explaining else argv)
    try:
        (_print_explanation if explaining else _print_stage)(args)
    except (SGCompilerError, UsageError) as exc:
        for line in str(exc).splitlines():
            _say(line)
        return 1
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except Exception as exc:    # one line, not a traceback
        if os.environ.get("SGCOMPILER_TRACEBACK"):
            raise
        ours, theirs = _frames(exc.__traceback__)
        if theirs:      # the user's code raised it (a module __getattr__, say)
            _say(f"{theirs}: {_one_line(exc)} (raised by your code, which sgcompiler ran "
                 f"at {ours})")
            return 1
        _say(f"internal error: {_one_line(exc)} (at {ours}); this is a bug in sgcompiler, "
             "please report it with the function (set SGCOMPILER_TRACEBACK=1 for the "
             "traceback)")
        return INTERNAL_ERROR
    return 0


def _print_stage(args) -> None:
    fn = load_target(args.target)
    wrt = parse_wrt(fn, args.wrt)
    scalars, arrays = parse_shapes(fn, args.shapes, wrt)
    if args.order < 1:
        raise UsageError(f"--order must be 1 or more, got {args.order}")
    for _ in range(args.order - 1):
        fn = summed_gradient(fn, wrt, scalars)
    if args.side_by_side:
        if args.mode != "reverse" or args.stage != "grad" or args.order != 1:
            raise UsageError("--side-by-side shows the first-order gradient; leave out "
                             "--mode, --stage and --order")
        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
        sys.stdout.write(side_by_side_sections_text(
            side_by_side_sections(fn, wrt, scalars, arrays), color))
        return
    note = None
    if args.mode == "forward":
        stage = "jvp" if args.stage == "grad" else args.stage
        text = dump_stage(fn, wrt, stage, scalars, arrays, mode="forward")
        sys.stdout.write(reading_view(text) if args.reading else text)
        return
    if args.stage == "jvp":
        raise UsageError("--stage jvp is forward mode's final code; add --mode forward")
    if args.checkpoint is not None:
        _print_checkpointed(args, fn, wrt, scalars, arrays)
        return
    if args.stage == "grad":
        note = _check_result(fn, compile_gradient(fn, wrt, scalars, value=False,
                                                  arrays=arrays), arrays)
    text = dump_stage(fn, wrt, args.stage, scalars, arrays)
    sys.stdout.write(reading_view(text) if args.reading else text)
    if note:
        _say(note)


def _print_checkpointed(args, fn, wrt, scalars, arrays) -> None:
    """The gradient code with its loops checkpointed (--checkpoint sqrt or N)."""
    if args.stage != "grad" or args.order != 1 or args.reading:
        raise UsageError("--checkpoint shows the final first-order gradient; leave out "
                         "--stage, --order and --reading")
    policy = args.checkpoint if args.checkpoint == "sqrt" else \
        int(args.checkpoint) if args.checkpoint.isdigit() else args.checkpoint
    try:
        policy = check_policy(policy)
    except ValueError as exc:
        raise UsageError(f"--checkpoint: {exc}") from None
    compiled = compile_gradient(fn, wrt, scalars, value=False, arrays=arrays,
                                checkpoint=policy)
    note = _check_result(fn, compiled, arrays)
    sys.stdout.write(compiled.source)
    if note:
        _say(note)


def summed_gradient(fn, wrt, scalars):
    """s(args) = the sum of every element of grad(fn, wrt)(args), as a function with
    source (its gradient is what --order 2 prints: the Hessian times ones, for an array;
    grad of grad itself, for a number)."""
    params = list(inspect.signature(fn).parameters)
    several = len(wrt) > 1
    inner = grad(fn, wrt=wrt if several else wrt[0]).as_function(frozenset(scalars))
    terms = " + ".join(f"np.sum(_g[{k}])" for k in range(len(wrt))) if several \
        else "np.sum(_g)"
    name = f"{fn.__name__}_grad_sum"
    text = (f"def {name}({', '.join(params)}):\n    _g = _grad({', '.join(params)})\n"
            f"    return {terms}\n")
    return function_from_text(text, name, {"np": np, "_grad": inner, "__name__": __name__},
                              "cli")


def _print_explanation(args) -> None:
    fn = load_target(args.target)
    wrt = parse_wrt(fn, args.wrt)
    scalars, arrays = parse_shapes(fn, args.shapes, wrt)
    sys.stdout.write(explain(fn, wrt, scalars, arrays).text)


EXPLAIN = "explain"


def _parser():
    parser = argparse.ArgumentParser(
        prog="sgcompiler",
        usage="%(prog)s [-h] [--version] target [--wrt WRT] [--mode {reverse,forward}] "
              "[--stage STAGE] [--shapes SHAPES] [--reading]\n"
              "       [--side-by-side [--color WHEN]] [--checkpoint sqrt|N]\n"
              "       %(prog)s explain target [--wrt WRT] "
              "[--shapes SHAPES]",
        description="Print the gradient code sgcompiler generates for a Python function. "
                    "The file or module is imported to find the function, so its top-level "
                    "code runs (keep a script's work under if __name__ == '__main__':).",
        epilog="subcommand: 'sgcompiler explain FILE.py:FUNCTION [--wrt ...] [--shapes ...]' "
               "explains the gradient instead: what each stop_gradient cut, which wrt "
               "arguments get a zero gradient and why, likely mistakes (np.round, "
               "comparisons on the path to the result) and what the tape saves per loop "
               "iteration (sgcompiler explain --help). Errors are one line on stderr with "
               "exit status 1 (70 for a bug in sgcompiler).")
    parser.add_argument("--version", action="version", version=f"sgcompiler {__version__}")
    _target_arguments(parser)
    parser.add_argument("--mode", choices=("reverse", "forward"), default="reverse",
                        help="reverse: the gradient (default); forward: the tangent "
                             "function f_jvp(<f's parameters>, <one tangent per --wrt>) "
                             "returning (value, tangent)")
    parser.add_argument("--stage", choices=tuple(dict.fromkeys(STAGES + FORWARD_STAGES)),
                        default="grad", metavar="STAGE",
                        help="print what one step of the pipeline made instead of the "
                             "final code; the steps, in the order they run: "
                             + ", ".join(STAGES) + "; with --mode forward: "
                             + ", ".join(FORWARD_STAGES))
    parser.add_argument("--order", type=int, default=1,
                        help="2 or more: the code of grad of grad (the gradient of the sum "
                             "of the elements of the gradient, which is f's second "
                             "derivative for a number and the Hessian times ones for an "
                             "array), made by compiling the generated gradient again")
    _shapes_argument(parser)
    parser.add_argument("--reading", action="store_true",
                        help="the reading view: leave out the del statements that free "
                             "memory early (the code that runs keeps them)")
    parser.add_argument("--side-by-side", action="store_true",
                        help="print each source line next to the adjoint statements "
                             "generated for it (and why a line has none)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colours for --side-by-side: auto (on a terminal), always, "
                             "never")
    parser.add_argument("--checkpoint", default=None, metavar="sqrt|N",
                        help="run the outermost for loops in segments (of about sqrt(n) "
                             "trips, or N), keeping each segment's first state only: the "
                             "code grad(f, checkpoint=...) runs")
    return parser


def _explain_parser():
    parser = argparse.ArgumentParser(
        prog="sgcompiler explain",
        description="Explain the gradient of a Python function, from the facts the "
                    "compiler used: each stop_gradient call and what it made inactive, each "
                    "wrt argument whose gradient is structurally zero and why, active values "
                    "through piecewise-constant operations (likely mistakes), and what the "
                    "primal sweep saves per loop iteration; for the function and each user "
                    "function it differentiates through. The file or module is imported.",
        epilog="Errors are one line on stderr with exit status 1 (70 for a bug in "
               "sgcompiler).")
    _target_arguments(parser)
    _shapes_argument(parser)
    return parser


def _target_arguments(parser) -> None:
    parser.add_argument("target", help="FILE.py:FUNCTION or package.module:FUNCTION "
                                       "(imported: its top-level code runs)")
    parser.add_argument("--wrt", default=None,
                        help="comma-separated parameter names or positions (default: the "
                             "first parameter)")


def _shapes_argument(parser) -> None:
    parser.add_argument("--shapes", default=None,
                        help="the code for arguments of these shapes, as grad(f) compiles "
                             "it for a call: NAME=2x3 (a float64 array), NAME=2x3:float32, "
                             "NAME=() (a 0-d array), NAME=float or NAME=int (a Python "
                             "number), comma-separated")


def _say(line: str) -> None:
    print(f"sgcompiler: {line}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _frames(tb):
    """(file:line of the innermost frame in sgcompiler, file:line of the innermost frame
    of the user's code that it called, or None)."""
    package = os.path.dirname(os.path.abspath(__file__))
    libraries = {os.path.abspath(sysconfig.get_path(p)) for p in ("stdlib", "purelib",
                                                                 "platlib")}
    ours, theirs = "?", None
    for frame, line in traceback.walk_tb(tb):
        filename = os.path.abspath(frame.f_code.co_filename)
        if filename.startswith(package + os.sep):
            ours = f"{os.path.relpath(filename, os.path.dirname(package))}:{line}"
            theirs = None
        elif not frame.f_code.co_filename.startswith("<") and \
                not any(filename.startswith(lib + os.sep) for lib in libraries):
            theirs = f"{frame.f_code.co_filename}:{line}"
    return ours, theirs


def _check_result(fn, compiled, arrays) -> str | None:
    """Refuse a result the shapes prove is not a scalar; a note when it may not be one."""
    if not compiled.returns_value:
        return None     # a scalar by construction
    name = function_name(fn)
    shape = compiled.result_shape
    if shape is not None and math.prod(shape) != 1:     # grad takes any size-1 result
        raise UsageError(f"{name} must return a scalar to be differentiated, but for these "
                         f"--shapes it returns an array of shape {shape}; reduce it to a "
                         "scalar (e.g. np.sum) first")
    if shape is not None:
        return None
    return (f"note: {name}'s result is not known to be a scalar "
            f"{'for these --shapes' if arrays else 'for arguments of any shape'}; the code "
            f"returns (result, gradient), and grad({name}) raises TypeError when a call's "
            "result is not a scalar")


def load_target(target: str):
    """The function named by FILE.py:FUNCTION or module.path:FUNCTION."""
    if ":" not in target:
        raise UsageError(f"{target}: expected FILE.py:FUNCTION or module:FUNCTION")
    where, _, name = target.rpartition(":")
    if not where or not name:
        missing = "the file or module before ':'" if not where else "the function after ':'"
        raise UsageError(f"{target}: expected FILE.py:FUNCTION or module:FUNCTION "
                         f"({missing} is missing)")
    if where.endswith(".py") or os.sep in where or "/" in where:
        module = _load_file(where)
    else:
        module = _import(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{where}: no function named '{name}'")
        obj = getattr(obj, part)
    obj = getattr(obj, "primal", obj)
    if not isinstance(obj, type):   # a bound method, callable object, partial: a function
        obj = as_function(obj) or obj
    if not callable(obj) or not hasattr(obj, "__code__"):
        raise UsageError(f"{where}: '{name}' is not a Python function")
    return obj


def _load_file(path: str):
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory, not a Python file; give FILE.py:FUNCTION "
                         "(or package.module:FUNCTION for a package)")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    name = "_sgcompiler_target_" + os.path.splitext(os.path.basename(path))[0]
    # the loader by hand: a file need not end in .py
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        _import_failed(path, exc, path)
    finally:
        sys.path.remove(directory)
    return module


def _import(name: str):
    if not all(part.isidentifier() for part in name.split(".")):
        raise UsageError(f"{name}: neither a file ending in .py nor a module name; expected "
                         "FILE.py:FUNCTION or package.module:FUNCTION")
    directory = os.getcwd()
    sys.path.insert(0, directory)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise UsageError(f"{name}: cannot import module ({exc})") from None
        _import_failed(name, exc, None)        # the module imports something missing
    except BaseException as exc:
        _import_failed(name, exc, None)
    finally:
        sys.path.remove(directory)


def _import_failed(what: str, exc: BaseException, path):
    """Raise the one-line UsageError for a file or module `what` whose import raised `exc`
    (a KeyboardInterrupt goes on)."""
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if isinstance(exc, SyntaxError):
        raise UsageError(f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}") from None
    where = _user_frame(exc.__traceback__, path) or what
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        raise UsageError(f"{where}: importing {what} called sys.exit({code}), so its "
                         "functions are not all defined; sgcompiler imports (runs) the file, "
                         "so put a script's work under if __name__ == '__main__':") from None
    raise UsageError(f"{where}: importing {what} failed: {_one_line(exc)}") from None


def _user_frame(tb, path):
    """file:line of the innermost frame in file `path` (or, for a module, the innermost
    frame that is neither sgcompiler's nor the import machinery's)."""
    package = os.path.dirname(os.path.abspath(__file__))
    found = None
    for frame, line in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if path is not None:
            if os.path.abspath(filename) == os.path.abspath(path):
                found = f"{path}:{line}"
        elif not filename.startswith("<") and \
                not os.path.abspath(filename).startswith(package + os.sep):
            found = f"{filename}:{line}"
    return found


def parse_shapes(fn, text, wrt=()):
    """(Python-number parameters, ((parameter, shape, dtype), ...)) from --shapes; the
    parameters in `wrt` must be floats or float arrays, as `grad` requires."""
    if text is None:
        return frozenset(), ()
    params = list(inspect.signature(fn).parameters)
    scalars, arrays, seen = set(), [], set()
    expected = "expected NAME=2x3, NAME=2x3:float32, NAME=() or NAME=float"
    for item in text.split(","):
        item = item.strip()
        name, equals, spec = item.partition("=")
        name, spec = name.strip(), spec.strip()
        if not equals or not name or not spec:
            raise UsageError(f"--shapes {item}: {expected} (the "
                             f"{'shape' if equals and name else 'NAME='} is missing)")
        if name not in params:
            raise UsageError(f"--shapes {item}: {function_name(fn)} has no parameter "
                             f"'{name}' (its parameters: {', '.join(params)})")
        if name in seen:
            raise UsageError(f"--shapes {item}: '{name}' is given twice")
        seen.add(name)
        if spec in ("float", "int"):
            if spec == "int" and name in wrt:
                raise UsageError(f"--shapes {item}: {function_name(fn)}: cannot differentiate "
                                 f"with respect to '{name}', an int; use {name}=float")
            scalars.add(name)
            continue
        dims, _, dtype = spec.partition(":")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims != "()" else ()
            dtype = np.dtype(dtype or "float64")
            if any(d < 0 for d in shape):
                raise ValueError
        except (ValueError, TypeError):
            raise UsageError(f"--shapes {item}: {expected}") from None
        refusal = dtype_refusal(dtype) if name in wrt else None
        if refusal is not None:
            raise UsageError(f"--shapes {item}: {function_name(fn)}: cannot differentiate with "
                             f"respect to '{name}', {refusal}"
                             + ("" if dtype.kind == "c" else
                                f"; give it a float dtype ({name}={dims}:float32, or "
                                f"{name}={dims} for float64)"))
        arrays.append((name, shape, dtype))
    return frozenset(scalars), tuple(arrays)


def parse_wrt(fn, text) -> tuple[str, ...]:
    """The parameter names --wrt picks (positions or names, comma-separated), checked as
    `grad(fn, wrt=...)` checks them."""
    items = [0] if text is None else [
        int(item) if item.lstrip("-").isdigit() else item
        for item in (part.strip() for part in text.split(","))]
    return wrt_names(fn, items)
