"""Command line: print the generated gradient code of a function in a file or module.

    sgcompiler samples/stable_softmax.py:softmax_loss_stable [--wrt x,w] [--stage grad]
    sgcompiler mypackage.model:loss
    sgcompiler model.py:loss --shapes W=784x256,b=256,X=128x784,lam=float

Without --shapes the code is for arguments of any shape; with it, for those shapes (and
dtypes: `x=3x4:float32`), as `grad(f)` compiles it for a call with such arguments.

Errors are one line on stderr (file:line where there is one) and a non-zero exit; never a
traceback.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from .errors import SGCompilerError
from .pipeline import STAGES, dump_stage


class UsageError(Exception):
    """Bad command-line input: a missing file or function, a file that does not run."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="sgcompiler",
        description="Print the gradient code sgcompiler generates for a Python function.")
    parser.add_argument("target", help="FILE.py:FUNCTION or package.module:FUNCTION")
    parser.add_argument("--wrt", default=None,
                        help="comma-separated parameter names or positions (default: the "
                             "first parameter)")
    parser.add_argument("--stage", choices=STAGES, default="grad",
                        help="print an intermediate stage instead of the final code")
    parser.add_argument("--shapes", default=None,
                        help="the code for arguments of these shapes, as grad(f) compiles "
                             "it for a call: NAME=2x3 (a float64 array), NAME=2x3:float32, "
                             "NAME=float (a Python float), comma-separated")
    args = parser.parse_args(argv)
    try:
        fn = load_target(args.target)
        wrt = parse_wrt(fn, args.wrt)
        scalars, arrays = parse_shapes(fn, args.shapes)
        sys.stdout.write(dump_stage(fn, wrt, args.stage, scalars, arrays))
    except (SGCompilerError, UsageError) as exc:
        for line in str(exc).splitlines():
            print(f"sgcompiler: {line}", file=sys.stderr)
        return 1
    return 0


def load_target(target: str):
    """The function named by FILE.py:FUNCTION or module.path:FUNCTION."""
    if ":" not in target:
        raise UsageError(f"{target}: expected FILE.py:FUNCTION or module:FUNCTION")
    where, _, name = target.rpartition(":")
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
    if not callable(obj) or not hasattr(obj, "__code__"):
        raise UsageError(f"{where}: '{name}' is not a Python function")
    return obj


def _load_file(path: str):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    name = "_sgcompiler_target_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise UsageError(f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}") from None
    except SystemExit:
        pass
    except Exception as exc:  # the user's module failed to import: say where, briefly
        tb = exc.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == os.path.abspath(path) or \
                    tb.tb_frame.f_code.co_filename == path:
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"{path}:{line}" if line else path
        raise UsageError(f"{where}: importing the file failed: "
                         f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(directory)
    return module


def _import(name: str):
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UsageError(f"{name}: cannot import module ({exc})") from None
    except SyntaxError as exc:
        raise UsageError(f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}") from None
    finally:
        sys.path.pop(0)


def parse_shapes(fn, text):
    """(Python-number parameters, ((parameter, shape, dtype), ...)) from --shapes."""
    import inspect

    import numpy as np
    if text is None:
        return frozenset(), ()
    params = list(inspect.signature(fn).parameters)
    scalars, arrays = set(), []
    for item in text.split(","):
        name, _, spec = item.strip().partition("=")
        name, spec = name.strip(), spec.strip()
        if name not in params:
            raise UsageError(f"--shapes {item.strip()}: {fn.__name__} has no parameter "
                             f"'{name}' (its parameters: {', '.join(params)})")
        if spec in ("float", "int"):
            scalars.add(name)
            continue
        dims, _, dtype = spec.partition(":")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims not in ("", "()") else ()
            dtype = np.dtype(dtype or "float64")
            if any(d < 0 for d in shape):
                raise ValueError
        except (ValueError, TypeError):
            raise UsageError(f"--shapes {item.strip()}: expected NAME=2x3, NAME=2x3:float32 "
                             "or NAME=float") from None
        arrays.append((name, shape, dtype))
    return frozenset(scalars), tuple(arrays)


def parse_wrt(fn, text) -> tuple[str, ...]:
    import inspect
    params = list(inspect.signature(fn).parameters)
    if not params:
        raise UsageError(f"{fn.__name__} has no parameters to differentiate with respect to")
    if text is None:
        return (params[0],)
    out = []
    for item in text.split(","):
        item = item.strip()
        if item.isdigit() and int(item) < len(params):
            out.append(params[int(item)])
        elif item in params:
            out.append(item)
        else:
            raise UsageError(f"--wrt {item}: {fn.__name__} has no parameter '{item}' "
                             f"(its parameters: {', '.join(params)})")
    return tuple(out)
