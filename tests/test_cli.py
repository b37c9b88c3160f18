"""The command line: exit codes, one-line errors, the printed code.

Most cases run `cli.main(argv)` in this process (fast); a few run it as a user does, in a
subprocess, to prove that `python -m sgcompiler` and the installed `sgcompiler` script work.
"""
import os
import pathlib
import runpy
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass

import numpy as np
import pytest

from sgcompiler import cli, grad

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = pathlib.Path(__file__).resolve().parent / "data"
GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
SOFTMAX = "samples/stable_softmax.py:softmax_loss_stable"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(capsys, monkeypatch):
    """Run the command line in this process, from the repository root, as a subprocess
    would: the exit status (argparse's SystemExit too), stdout, stderr. The modules it
    imports are forgotten afterwards."""
    monkeypatch.chdir(ROOT)
    before = set(sys.modules)
    path = list(sys.path)

    def run_(*args):
        capsys.readouterr()
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code
        out = capsys.readouterr()
        return Result(code, out.out, out.err)
    yield run_
    for name in set(sys.modules) - before:
        if name.startswith("_sgcompiler_target_"):
            del sys.modules[name]
    assert sys.path == path, "the command line left sys.path changed"


def one_line_error(out, expected, code=1):
    """The run failed with one line on stderr that contains `expected`, and no traceback."""
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.startswith("sgcompiler: ")
    assert expected in out.stderr, out.stderr
    assert out.stdout == ""


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


# --- what it prints for good input -------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax_loss_stable", "softmax_loss_naive",
                                  "softmax_loss_max"])
def test_prints_the_golden_code_of_the_samples(run, name):
    out = run(f"samples/stable_softmax.py:{name}")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout == (GOLDEN / f"{name}.py").read_text()


def test_prints_gradient_of_sample(run):
    out = run(SOFTMAX)
    assert out.returncode == 0, out.stderr
    assert "def softmax_loss_stable_grad(x, w):" in out.stdout
    assert "choose_grad" not in out.stdout and "argmax" not in out.stdout
    compile(out.stdout, "<printed>", "exec")


def test_wrt_option_and_module_path(run):
    out = run(SOFTMAX, "--wrt", "x,w")
    assert out.returncode == 0 and "with respect to x, w" in out.stdout
    out = run("samples.stable_softmax:softmax_loss_naive", "--wrt", "1")
    assert out.returncode == 0, out.stderr
    assert "with respect to w" in out.stdout
    out = run(SOFTMAX, "--wrt", "1, x")
    assert out.returncode == 0 and "with respect to w, x" in out.stdout


def test_stages(run):
    out = run(SOFTMAX, "--stage", "normalize")
    assert out.returncode == 0 and "_max = np.max(x)" in out.stdout
    out = run(SOFTMAX, "--stage", "activity")
    assert out.returncode == 0 and out.stdout.startswith("varied:")


def test_shapes_option_prints_the_code_grad_compiles_for_them(run):
    out = run(SOFTMAX, "--shapes", "x=3x5,w=3x5")
    assert out.returncode == 0, out.stderr
    assert "np.exp(z, out=z)" in out.stdout and "unbroadcast" not in out.stdout
    generic = run(SOFTMAX)
    assert "out=" not in generic.stdout
    # the same text as .source after a call with such arrays
    from samples.stable_softmax import softmax_loss_stable
    g = grad(softmax_loss_stable)
    g(np.ones((3, 5)), np.ones((3, 5)))
    assert g.source.split("\n", 1)[1] == out.stdout.split("\n", 1)[1]


def test_shapes_of_parameters_not_differentiated_may_be_ints(run, tmp_path):
    path = write(tmp_path, "labels.py", "import numpy as np\n"
                                        "def loss(x, y, n):\n"
                                        "    return np.sum(x[y]) * n\n")
    out = run(f"{path}:loss", "--shapes", "x=5,y=3:int64,n=int")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert "def loss_grad(x, y, n):" in out.stdout


def test_version_prints_the_package_version(run):
    import sgcompiler
    out = run("--version")
    assert (out.returncode, out.stdout, out.stderr) == (0, f"sgcompiler {sgcompiler.__version__}\n", "")


def test_help_says_the_file_is_imported_and_run(run):
    out = run("--help")
    assert out.returncode == 0
    assert "imported" in out.stdout and "top-level code runs" in out.stdout
    readme = (ROOT / "README.md").read_text()
    assert "imports the file" in readme and "top-level code runs" in readme


# --- one-line errors ----------------------------------------------------------------------

@pytest.mark.parametrize("target, expected", [
    ("nope.py:f", "nope.py: no such file"),
    (f"{DATA}/bad_construct.py:missing", "no function named 'missing'"),
    (f"{DATA}/syntax_error.py:f", "syntax_error.py:3: syntax error"),
    (f"{DATA}/import_error.py:f", "import_error.py:3: importing"),
    (f"{DATA}/bad_construct.py:gen", "bad_construct.py:6"),
    (f"{DATA}/bad_construct.py:unknown", "bad_construct.py:20"),
    ("no_colon", "expected FILE.py:FUNCTION"),
    ("no.such.module:f", "cannot import module"),
    (":f", "the file or module before ':' is missing"),
    ("samples/stable_softmax.py:", "the function after ':' is missing"),
    (".relative:f", "neither a file ending in .py nor a module name"),
    ("my-file:f", "neither a file ending in .py nor a module name"),
])
def test_errors_are_one_line_without_traceback(run, target, expected):
    one_line_error(run(target), expected)


def test_good_function_next_to_bad_ones(run):
    out = run(f"{DATA}/bad_construct.py:good", "--wrt", "x")
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_all_problems_reported_each_on_its_line(run):
    out = run(f"{DATA}/bad_construct.py:many")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 3
    assert all("bad_construct.py:" in line for line in lines)
    assert "global" in lines[0] and "try" in lines[1] and "del" in lines[2]


@pytest.mark.parametrize("code, shown", [("sys.exit(3)", "sys.exit(3)"),
                                         ("sys.exit(0)", "sys.exit(0)"),
                                         ("sys.exit()", "sys.exit()"),
                                         ("raise SystemExit('usage: x')", "usage: x")])
def test_a_file_that_exits_at_import_is_an_error(run, tmp_path, code, shown):
    path = write(tmp_path, "script.py", f"import sys\n\ndef f(x):\n    return x * x\n\n{code}\n")
    out = run(f"{path}:f")
    one_line_error(out, "script.py:6: importing")
    assert shown in out.stderr and "if __name__ == '__main__'" in out.stderr


def test_a_file_that_raises_at_import_shows_its_error_and_line(run, tmp_path):
    path = write(tmp_path, "broken.py", "import numpy as np\n\ndef f(x):\n    return x\n\n"
                                        "W = np.load('no-such-weights.npy')\n")
    out = run(f"{path}:f")
    one_line_error(out, "broken.py:6: importing")
    assert "FileNotFoundError" in out.stderr and "no-such-weights.npy" in out.stderr


def test_a_module_that_fails_at_import(run, tmp_path, monkeypatch):
    write(tmp_path, "needs_dep.py", "import not_installed_dep_xyz\n\ndef f(x):\n    return x\n")
    write(tmp_path, "exits_mod.py", "import sys\ndef f(x):\n    return x\nsys.exit(4)\n")
    monkeypatch.chdir(tmp_path)
    out = run("needs_dep:f")
    one_line_error(out, "needs_dep.py:1: importing needs_dep failed: ModuleNotFoundError")
    assert "not_installed_dep_xyz" in out.stderr
    one_line_error(run("exits_mod:f"), "exits_mod.py:4: importing exits_mod called sys.exit(4)")
    for name in ("needs_dep", "exits_mod"):
        sys.modules.pop(name, None)


def test_a_directory_is_not_no_such_file(run, tmp_path):
    (tmp_path / "adir.py").mkdir()
    one_line_error(run(f"{tmp_path / 'adir.py'}:f"), "adir.py: is a directory")


def test_a_file_without_the_py_suffix(run, tmp_path):
    path = write(tmp_path, "model", "def f(x):\n    return x * x\n")
    out = run(f"{path}:f")
    assert out.returncode == 0 and "def f_grad(x):" in out.stdout


@pytest.mark.parametrize("name, data", [
    ("latin1.py", b"# -*- coding: latin-1 -*-\ndef f(x):\n    s = 'caf\xe9'\n"
                  b"    return x * x  # \xe9\n"),
    ("bom.py", b"\xef\xbb\xbf# caf\xc3\xa9\ndef f(x):\n    return x * x  # \xc3\xa9\n"),
])
def test_files_in_other_encodings(run, tmp_path, name, data):
    out = run(f"{write(tmp_path, name, data)}:f")
    assert out.returncode == 0, out.stderr
    assert "dx = x * 2" in out.stdout and "# \xe9" in out.stdout


def test_a_file_that_is_not_valid_text(run, tmp_path):
    # Python 3.11 runs it (bytes in comments are not decoded) but cannot show its source
    path = write(tmp_path, "notutf8.py", b"def f(x):\n    # caf\xe9\n    return x * x\n")
    out = run(f"{path}:f")
    if sys.version_info < (3, 12):
        one_line_error(out, "notutf8.py:2): the file is not valid utf-8 text (byte 0xe9 on "
                            "line 2)")
        assert "coding: latin-1" in out.stderr
    else:
        one_line_error(out, "notutf8.py:2")


@pytest.mark.parametrize("wrt, expected", [
    ("q", "wrt='q' is not a parameter of softmax_loss_stable (x, w)"),
    ("5", "wrt=5 is not a parameter position of softmax_loss_stable, whose 2 parameters "
          "(x, w) are at positions 0 to 1"),
    ("-1", "wrt=-1 is not a parameter position"),
    ("x,x", "picks parameter 'x' twice"),
    ("0,x", "picks parameter 'x' twice"),
])
def test_bad_wrt_is_the_api_message(run, wrt, expected):
    out = run(SOFTMAX, "--wrt", wrt)
    one_line_error(out, expected)
    from samples.stable_softmax import softmax_loss_stable
    with pytest.raises(Exception) as api:
        items = [int(w) if w.lstrip("-").isdigit() else w for w in wrt.split(",")]
        grad(softmax_loss_stable, wrt=tuple(items) if len(items) > 1 else items[0])
    assert out.stderr.strip() == f"sgcompiler: {api.value}"


def test_no_parameters(run, tmp_path):
    path = write(tmp_path, "const.py", "def f():\n    return 1.0\n")
    one_line_error(run(f"{path}:f"), "f has no parameters to differentiate")


@pytest.mark.parametrize("spec, message", [
    ("q=3", "has no parameter 'q'"),
    ("x=3xb", "expected NAME=2x3"),
    ("x=3:float99", "expected NAME=2x3"),
    ("x", "--shapes x: expected NAME=2x3"),
    ("x=,w=", "--shapes x=: expected NAME=2x3"),
    ("=3", "--shapes =3: expected NAME=2x3"),
    ("x=3,x=4", "'x' is given twice"),
    ("x=3x4:int64", "cannot differentiate with respect to 'x', an array of dtype int64; "
                    "give it a float dtype (x=3x4:float32"),
    ("x=3x4:bool", "an array of dtype bool"),
    ("x=3x4:object", "an array of dtype object"),
    ("x=3x4:U3", "an array of dtype <U3"),
    ("x=int", "cannot differentiate with respect to 'x', an int; use x=float"),
])
def test_bad_shapes_are_one_line_errors(run, spec, message):
    one_line_error(run(SOFTMAX, "--shapes", spec), message)


@pytest.mark.parametrize("dtype", ["int64", "object", "<U3", "bool"])
def test_shapes_refuse_the_dtypes_grad_refuses(run, dtype):
    from samples.stable_softmax import softmax_loss_stable
    with pytest.raises(TypeError) as api:
        grad(softmax_loss_stable)(np.zeros(3, dtype=dtype), np.ones(3))
    out = run(SOFTMAX, "--shapes", f"x=3:{dtype}")
    # the same words as grad's refusal, up to the advice
    refusal = str(api.value).split("; convert")[0]
    one_line_error(out, refusal)


def test_a_result_the_shapes_prove_is_not_a_scalar(run):
    out = run(f"{DATA}/bad_construct.py:vector", "--shapes", "x=3")
    one_line_error(out, "vector must return a scalar to be differentiated, but for these "
                        "--shapes it returns an array of shape (3,)")
    for shape in ("()", "1", "1x1"):
        out = run(f"{DATA}/bad_construct.py:vector", "--shapes", f"x={shape}")
        assert out.returncode == 0 and out.stderr == "", out.stderr


def test_a_result_that_may_not_be_a_scalar_is_noted(run):
    out = run(f"{DATA}/bad_construct.py:vector")
    assert out.returncode == 0
    assert "def vector_grad(x):" in out.stdout
    assert out.stderr.startswith("sgcompiler: note: vector's result is not known to be a "
                                 "scalar") and len(out.stderr.splitlines()) == 1


def test_an_internal_error_is_one_line(run, monkeypatch):
    monkeypatch.setattr(cli, "compile_gradient", None)      # a bug of ours
    out = run(SOFTMAX)
    one_line_error(out, "internal error: TypeError: 'NoneType' object is not callable (at "
                        "sgcompiler/cli.py:", code=cli.INTERNAL_ERROR)
    assert "please report" in out.stderr
    monkeypatch.setenv("SGCOMPILER_TRACEBACK", "1")
    with pytest.raises(TypeError):
        cli.main([SOFTMAX])


def test_an_error_of_the_users_code_run_by_us_is_one_line(run, tmp_path):
    path = write(tmp_path, "lazy.py", "def f(x):\n    return x\n\ndef __getattr__(name):\n"
                                      "    raise RuntimeError('no ' + name)\n")
    out = run(f"{path}:g")
    one_line_error(out, "lazy.py:5: RuntimeError: no g (raised by your code, which "
                        "sgcompiler ran at sgcompiler/cli.py:")


def test_an_interrupt_is_one_line(run, tmp_path):
    path = write(tmp_path, "slow.py", "def f(x):\n    return x\n\nraise KeyboardInterrupt\n")
    one_line_error(run(f"{path}:f"), "interrupted", code=130)


# --- as a user runs it --------------------------------------------------------------------

def subprocess_run(command, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SGCOMPILER_TRACEBACK", None)
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(ROOT),
                          **kwargs)


def test_python_dash_m_prints_the_code():
    out = subprocess_run([sys.executable, "-m", "sgcompiler", SOFTMAX])
    assert out.returncode == 0, out.stderr
    assert out.stdout == (GOLDEN / "softmax_loss_stable.py").read_text()


def test_python_dash_m_error_exit_status(capsys, monkeypatch):
    """__main__.py exits with the status cli.main gives, run in this process as `python -m`
    runs it (test_installed_script sees a real process exit with it)."""
    monkeypatch.delenv("SGCOMPILER_TRACEBACK", raising=False)
    monkeypatch.setattr(sys, "argv", ["sgcompiler", ":f"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module("sgcompiler", run_name="__main__")
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        "sgcompiler: :f: expected FILE.py:FUNCTION or module:FUNCTION (the file or module "
        "before ':' is missing)"]


def _installed_script():
    script = os.path.join(sysconfig.get_path("scripts"), "sgcompiler")
    return script if os.path.exists(script) else shutil.which("sgcompiler")


@pytest.mark.skipif(_installed_script() is None,
                    reason="the sgcompiler script is not installed (pip install -e .)")
def test_installed_script(tmp_path):
    script = _installed_script()
    out = subprocess_run([script, "samples/stable_softmax.py:softmax_loss_naive", "--wrt",
                          "w"])
    assert out.returncode == 0, out.stderr
    assert "with respect to w" in out.stdout
    path = write(tmp_path, "exits.py", "import sys\ndef f(x):\n    return x\nsys.exit(3)\n")
    out = subprocess_run([script, f"{path}:f"])
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "exits.py:4: importing" in out.stderr and len(out.stderr.splitlines()) == 1


def test_lambda_and_bound_method_targets(run):
    # FILE.py:name where name = lambda ...; FILE.py:OBJECT.method
    result = run("tests/specimens_forms.py:square_sum")
    assert result.returncode == 0, result.stderr
    assert "def square_sum_lambda_9_grad(x):" in result.stdout and "dx = 2.0 * x" in result.stdout
    result = run("tests/specimens_forms.py:MODEL.loss", "--shapes", "w=3")
    assert result.returncode == 0, result.stderr
    assert "def Model_loss_grad(w):" in result.stdout and "self.scale" in result.stdout


def test_checkpoint_prints_the_segmented_code(run):
    out = run("tests/specimens_control.py:rnn", "--wrt", "W,U", "--checkpoint", "sqrt")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (GOLDEN / "checkpointed_rnn_loop.py").read_text()
    shaped = run("tests/specimens_control.py:rnn", "--wrt", "W", "--checkpoint", "3",
                 "--shapes", "x=5x2,W=3x3,U=3x2")
    assert shaped.returncode == 0, shaped.stderr
    assert "rnn_segment8" in shaped.stdout and "_every = 3" in shaped.stdout
    one_line_error(run("tests/specimens_control.py:rnn", "--checkpoint", "binomial"),
                   "checkpoint must be", code=1)
    one_line_error(run("tests/specimens_control.py:rnn", "--checkpoint", "sqrt", "--stage",
                       "parse"), "--checkpoint shows", code=1)
