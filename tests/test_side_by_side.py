"""The side-by-side view (`sgcompiler FILE.py:FUNC --side-by-side`): each source line beside
the adjoint statements generated for it, and why a line has none.

The strongest check is completeness: every statement of the generated backward sweep (but
`del`) is shown exactly once, beside some line of the function."""
import collections
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import specimens_explain as s
from sgcompiler import grad, stop_gradient
from sgcompiler.explain.side_by_side import (side_by_side_rows, side_by_side_sections,
                                             side_by_side_sections_text, side_by_side_text)

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples"))
import em_gmm  # noqa: E402
import rbm_contrastive_divergence as rbm  # noqa: E402
import stable_softmax  # noqa: E402


def branchy(x, w):
    c = 3.0
    if np.sum(x) > 0:
        y = np.sin(x) * w
    else:
        y = np.cos(x)
    z = stop_gradient(y) * c
    k = 0
    while k < 3:
        y = y * x
        k += 1
    return np.sum(y) + np.sum(z)


def comprehension_in_loop(x):
    a = 0.0
    for v in x[::-1]:
        a = a + np.sum([u * 3.0 for u in (v + x)])
    return a


def nested_loops(x, w):
    acc = 0.0
    for i in range(2):
        for j in range(3):
            acc = acc + np.sum(np.tanh(x * w[j]) * i)
    return acc


FUNCTIONS = [(stable_softmax.softmax_loss_stable, ("x",)), (branchy, ("x", "w")),
             (comprehension_in_loop, ("x",)), (nested_loops, ("x", "w")),
             (rbm.cd_loss, ("W",)), (rbm.cd_loss_without_stop, ("W",)),
             (em_gmm.em_objective, em_gmm.PARAMS), (s.recurrence, ("h", "w")),
             (s.straight_through, ("x", "w"))]


def backward_statements(fn, wrt):
    """The statements of the backward sweep of fn's gradient (the first function in the
    code), but memory management and the `# line` marks."""
    code = grad(fn, wrt=wrt).source.splitlines()
    start = code.index("    # backward") + 1
    found = []
    for line in code[start:]:
        if line.strip() and not line.startswith(" "):
            break
        if line.strip() and not line.lstrip().startswith(("#", "del ")):
            found.append(line.strip())
    return found


@pytest.mark.parametrize("fn, wrt", FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_adjoint_statement_is_shown_once(fn, wrt):
    rows = side_by_side_rows(fn, wrt)
    shown = [text.strip() for row in rows for text in row.adjoint]
    assert collections.Counter(shown) == collections.Counter(backward_statements(fn, wrt))
    assert [r.number for r in rows] == list(range(rows[0].number, rows[-1].number + 1))


def row(rows, source):
    found = [r for r in rows if r.text.strip() == source]
    assert len(found) == 1, (source, [r.text for r in rows])
    return found[0]


def test_the_stable_softmax():
    rows = side_by_side_rows(stable_softmax.softmax_loss_stable, ("x",))
    assert row(rows, "e = np.exp(z)").adjoint == ("dx = de * e",)
    assert row(rows, "return np.sum(s * w)").adjoint == ("ds = unbroadcast(w, x)",)
    assert "de = ds / _sum" in row(rows, "s = e / np.sum(e)").adjoint
    stopped = row(rows, "z = x - stop_gradient(np.max(x))")   # the identity to x, folded
    assert not stopped.adjoint and "of its own" in stopped.why_none


def test_branches_loops_and_reasons():
    rows = side_by_side_rows(branchy, ("x", "w"))
    assert row(rows, "c = 3.0").why_none == "no adjoint: inactive"
    assert row(rows, "k += 1").why_none == "no adjoint: inactive"
    assert row(rows, "z = stop_gradient(y) * c").why_none == "no adjoint: stop_gradient"
    assert row(rows, "if np.sum(x) > 0:").adjoint == ("if _cmp:", "else:")
    assert row(rows, "while k < 3:").adjoint == ("for _ in range(_trips):",)
    assert any("dx +=" in t for t in row(rows, "y = y * x").adjoint)
    assert row(rows, "else:").why_none == ""            # no statement starts there


def test_a_comprehension_keeps_its_loop_on_its_line():
    rows = side_by_side_rows(comprehension_in_loop, ("x",))
    inner = row(rows, "a = a + np.sum([u * 3.0 for u in (v + x)])").adjoint
    assert any(t.strip().startswith("for _2 in range(") for t in inner)
    outer = row(rows, "for v in x[::-1]:").adjoint
    assert outer[0] == "for _ in range(_trips):" and any("d_x_slice" in t for t in outer)


def test_the_gibbs_chain_of_contrastive_divergence_is_cut():
    rows = side_by_side_rows(rbm.cd_loss, ("W",))
    stop = [r for r in rows if "stop_gradient(p_v)" in r.text]
    assert len(stop) == 1 and stop[0].why_none == "no adjoint: stop_gradient"
    chain = [r for r in rows if r.text.strip().startswith(("p_h =", "h =", "p_v =", "v ="))]
    assert chain and all(not r.adjoint and r.why_none.startswith("no adjoint") for r in chain)
    assert {r.why_none for r in chain} <= {"no adjoint: stop_gradient", "no adjoint: inactive"}
    (loop,) = [r for r in rows if r.text.strip().startswith("for _ in range(k)")]
    assert loop.why_none == "no adjoint: nothing in the loop is active"
    assert row(side_by_side_rows(branchy, ("x", "w")), "while k < 3:").why_none == ""


def test_text_is_plain_unless_coloured():
    rows = side_by_side_rows(stable_softmax.softmax_loss_stable, ("x",))
    plain, coloured = side_by_side_text(rows), side_by_side_text(rows, color=True)
    assert "\033[" not in plain and "\033[" in coloured
    assert re.sub("\033\\[[0-9;]*m", "", coloured) == plain
    assert "  24      e = np.exp(z)" in plain and "| dx = de * e" in plain


def run(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "sgcompiler", *args], capture_output=True,
                          text=True, env=env, cwd=str(ROOT))


def test_cli_as_a_subprocess_is_plain_when_piped():
    out = run("samples/stable_softmax.py:softmax_loss_stable", "--side-by-side")
    assert out.returncode == 0, out.stderr
    rows = side_by_side_rows(stable_softmax.softmax_loss_stable, ("x",))
    assert out.stdout == side_by_side_text(rows)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_cli_on_a_terminal_is_coloured():
    # stdout a pseudo-terminal, as in a shell: --color auto (the default) colours
    leader, follower = os.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with subprocess.Popen([sys.executable, "-m", "sgcompiler", SOFTMAX_TARGET,
                           "--side-by-side"], stdout=follower, stderr=subprocess.PIPE,
                          env=env, cwd=str(ROOT)) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:          # the terminal closed with the process (Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=120) == 0, process.stderr.read()
    os.close(leader)
    shown = b"".join(chunks).decode()
    rows = side_by_side_rows(stable_softmax.softmax_loss_stable, ("x",))
    assert "\033[" in shown
    assert re.sub("\033\\[[0-9;]*m", "", shown).replace("\r\n", "\n") == \
        side_by_side_text(rows)


SOFTMAX_TARGET = "samples/stable_softmax.py:softmax_loss_stable"


def test_color_always_colors_output_that_is_not_a_terminal(capsys, monkeypatch):
    from sgcompiler import cli
    monkeypatch.chdir(ROOT)
    assert cli.main(["samples/stable_softmax.py:softmax_loss_stable", "--side-by-side",
                     "--color", "always"]) == 0
    assert "\033[" in capsys.readouterr().out


def test_cli_in_process_takes_wrt_and_refuses_other_modes(capsys, monkeypatch):
    from sgcompiler import cli
    monkeypatch.chdir(ROOT)
    assert cli.main(["tests/test_side_by_side.py:branchy", "--side-by-side", "--wrt", "w"]) \
        == 0
    out = capsys.readouterr().out
    assert "y = np.sin(x) * w" in out and "dw" in out
    assert cli.main([SOFTMAX := "samples/stable_softmax.py:softmax_loss_stable",
                     "--side-by-side", "--mode", "forward"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--side-by-side" in err and SOFTMAX


def test_the_readme_shows_what_it_prints():
    rows = side_by_side_rows(stable_softmax.softmax_loss_stable, ("x",))
    assert side_by_side_text(rows) in (ROOT / "README.md").read_text()


def _scaled(v, w):
    return np.tanh(v * w)


def _inner(u, w):
    t = _scaled(u, w) * 2.0
    return np.sum(t * t)


def with_helpers(x, w):
    a = _inner(x, w)
    b = _inner(np.sin(x), stop_gradient(w))
    return a + b + np.sum(_scaled(x, w))


def _backward_functions(code):
    """{what a piece's header says it is for: the statements of its backward function},
    but del and the # line marks."""
    found, piece, inside = {}, None, False
    for line in code.splitlines():
        if line.startswith("# forward and backward of "):
            piece = line[len("# forward and backward of "):].split(", generated")[0]
        elif line.startswith("def "):
            inside = piece is not None and "_backward(" in line
            if inside:
                found[piece] = []
        elif inside and line.strip() and not line.lstrip().startswith(("#", "del ")):
            found[piece].append(line.strip())
    return found


@pytest.mark.parametrize("fn, wrt", [(with_helpers, ("x", "w")), (with_helpers, ("w",)),
                                     (rbm.cd_loss, ("W",))],
                         ids=["helpers", "helpers-w", "cd_loss"])
def test_each_helper_is_shown_beside_its_backward_function(fn, wrt):
    # it showed the function alone: the helpers' backward code was nowhere beside its source
    sections = side_by_side_sections(fn, wrt)
    assert sections[0].rows == side_by_side_rows(fn, wrt)
    backward = _backward_functions(grad(fn, wrt=wrt).source)
    assert len(sections) - 1 == len(backward) >= 1
    for section in sections[1:]:
        piece = section.title.split("through: ")[1].split(", beside")[0]
        shown = [text.strip() for r in section.rows for text in r.adjoint]
        assert collections.Counter(shown) == collections.Counter(backward[piece])
        numbers = [r.number for r in section.rows]
        assert numbers == list(range(numbers[0], numbers[-1] + 1))


def test_a_helper_section_names_its_lines_and_the_cli_prints_it(capsys, monkeypatch):
    sections = side_by_side_sections(with_helpers, ("x", "w"))
    titles = [s.title for s in sections[1:]]
    assert titles[0].startswith("differentiated through: _inner (test_side_by_side.py:")
    assert any(t.startswith("differentiated through: _scaled") for t in titles)
    inner = sections[1].rows
    assert row(inner, "t = _scaled(u, w) * 2.0").adjoint
    assert row(inner, "return np.sum(t * t)").adjoint
    text = side_by_side_sections_text(sections)
    assert text.startswith(side_by_side_text(sections[0].rows))
    assert all(s.title in text for s in sections[1:])
    from sgcompiler import cli
    monkeypatch.chdir(ROOT)
    assert cli.main(["samples/rbm_contrastive_divergence.py:cd_loss", "--side-by-side"]) == 0
    out = capsys.readouterr().out
    assert out == side_by_side_sections_text(side_by_side_sections(rbm.cd_loss, ("W",)))
    readme = (ROOT / "README.md").read_text()
    for line in out.split("differentiated through: free_energy", 1)[1].splitlines()[1:6]:
        assert line.rstrip() in readme
