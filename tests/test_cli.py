"""The command line, run as a user would: a subprocess, exit codes, one-line errors."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = pathlib.Path(__file__).resolve().parent / "data"


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "sgcompiler", *args], capture_output=True,
                          text=True, env=env, cwd=str(ROOT))


def test_prints_gradient_of_sample():
    out = run("samples/stable_softmax.py:softmax_loss_stable")
    assert out.returncode == 0, out.stderr
    assert "def softmax_loss_stable_grad(x, w):" in out.stdout
    assert "choose_grad" not in out.stdout and "argmax" not in out.stdout
    compile(out.stdout, "<printed>", "exec")


def test_wrt_option_and_module_path():
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--wrt", "x,w")
    assert out.returncode == 0 and "with respect to x, w" in out.stdout
    out = run("samples.stable_softmax:softmax_loss_naive", "--wrt", "1")
    assert out.returncode == 0, out.stderr
    assert "with respect to w" in out.stdout


def test_stages():
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--stage", "normalize")
    assert out.returncode == 0 and "_max = np.max(x)" in out.stdout
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--stage", "activity")
    assert out.returncode == 0 and out.stdout.startswith("varied:")


@pytest.mark.parametrize("target, expected", [
    ("nope.py:f", "nope.py: no such file"),
    (f"{DATA}/bad_construct.py:missing", "no function named 'missing'"),
    (f"{DATA}/syntax_error.py:f", "syntax_error.py:3: syntax error"),
    (f"{DATA}/import_error.py:f", "import_error.py:3: importing the file failed"),
    (f"{DATA}/bad_construct.py:gen", "bad_construct.py:6"),
    (f"{DATA}/bad_construct.py:unknown", "bad_construct.py:20"),
    (f"{DATA}/bad_construct.py:good", None),
    ("no_colon", "expected FILE.py:FUNCTION"),
    ("no.such.module:f", "cannot import module"),
])
def test_errors_are_one_line_without_traceback(target, expected):
    out = run(target, "--wrt", "x") if expected is None else run(target)
    if expected is None:
        assert out.returncode == 0, out.stderr
        return
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert expected in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_all_problems_reported_each_on_its_line():
    out = run(f"{DATA}/bad_construct.py:many")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 3
    assert all("bad_construct.py:" in line for line in lines)
    assert "global" in lines[0] and "try" in lines[1] and "del" in lines[2]


def test_unknown_wrt_name():
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--wrt", "q")
    assert out.returncode != 0 and "no parameter 'q'" in out.stderr


def test_shapes_option_prints_the_code_grad_compiles_for_them():
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--shapes", "x=3x5,w=3x5")
    assert out.returncode == 0, out.stderr
    assert "np.exp(z, out=z)" in out.stdout and "unbroadcast" not in out.stdout
    generic = run("samples/stable_softmax.py:softmax_loss_stable")
    assert "out=" not in generic.stdout
    # the same text as .source after a call with such arrays
    import numpy as np
    sys.path.insert(0, str(ROOT))
    try:
        from samples.stable_softmax import softmax_loss_stable
    finally:
        sys.path.remove(str(ROOT))
    from sgcompiler import grad
    g = grad(softmax_loss_stable)
    g(np.ones((3, 5)), np.ones((3, 5)))
    assert g.source.split("\n", 1)[1] == out.stdout.split("\n", 1)[1]


@pytest.mark.parametrize("spec, message", [
    ("q=3", "has no parameter 'q'"),
    ("x=3xb", "expected NAME=2x3"),
    ("x=3:float99", "expected NAME=2x3"),
])
def test_bad_shapes_are_one_line_errors(spec, message):
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--shapes", spec)
    assert out.returncode == 1 and message in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
