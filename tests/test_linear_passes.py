"""The passes rewritten to take time linear in the function's length give what the
quadratic versions gave: activity's reach (simulated sweeps), the Namer's numbered names,
bound_before, drop-dead, and gradients of long generated programs (benchmarks/
compile_time.py measures the time; no test here compiles more than a few hundred lines).
That the whole compiler's work grows linearly is checked by counting its function calls,
which a loaded machine does not change as it changes seconds."""
import cProfile
import importlib.util
import pathlib
import pstats
import random
import sys
import textwrap

import gast
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import grad
from sgcompiler.analysis.activity import reach
from sgcompiler.analysis.memory import bound_before
from sgcompiler.ir.naming import Namer
from sgcompiler.optimize.tidy.cleanup import drop_dead, propagate_copies
from sgcompiler.backend.codegen import to_source

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import compile_time  # noqa: E402


def _sweeping_reach(seed, edges, by):
    """The definition: sweep the edges in order until a sweep adds nothing."""
    reached, changed = set(seed), True
    while changed:
        changed = False
        for k, (target, sources) in enumerate(edges):
            if target not in reached:
                for source in sources:
                    if source in reached:
                        reached.add(target)
                        by[target] = (source, k)
                        changed = True
                        break
    return reached


def test_reach_is_the_sweeps_with_the_same_first_ways():
    rng = random.Random(5)
    for _ in range(3000):
        names = [f"v{i}" for i in range(rng.randint(1, 7))]
        edges = [(rng.choice(names), rng.sample(names, rng.randint(0, min(3, len(names)))))
                 for _ in range(rng.randint(0, 10))]
        seed = set(rng.sample(names, rng.randint(0, min(2, len(names)))))
        want_by, got_by = {}, {}
        assert reach(seed, edges, got_by) == _sweeping_reach(seed, edges, want_by)
        assert got_by == want_by


def test_reach_of_a_chain_against_the_edges_order():
    edges = [(f"v{k}", [f"v{k + 1}"]) for k in range(2000)]     # one link per sweep
    by = {}
    assert reach({"v2000"}, edges, by) == {f"v{k}" for k in range(2001)}
    assert by["v0"] == ("v1", 0)


def _searching_fresh(taken, base):
    if base not in taken:
        return base
    sep, i = ("_" if base[-1].isdigit() else ""), 2
    while f"{base}{sep}{i}" in taken:
        i += 1
    return f"{base}{sep}{i}"


def test_numbered_names_are_the_first_free_ones():
    rng = random.Random(3)
    namer, taken = Namer({"x", "x_2", "_mul3", "dx_1_3"}), {"x", "x_2", "_mul3", "dx_1_3"}
    for _ in range(400):
        base = rng.choice(["x", "_mul", "dx_1", "y"])
        if rng.random() < 0.5:
            i = 1
            while f"{base}_{i}" in taken:
                i += 1
            want, got = f"{base}_{i}", namer.version(base)
        else:
            want, got = _searching_fresh(taken, base), namer.fresh(base)
        if rng.random() < 0.1:          # names reserved later are skipped too
            extra = f"{base}_{rng.randint(1, 40)}"
            namer.reserve([extra])
            taken.add(extra)
        assert got == want
        taken.add(want)


def _bound_sets(body, params):
    """The definition: a set of the names bound before each statement."""
    out = {}

    def walk(block, bound):
        for stmt in block:
            out[id(stmt)] = frozenset(bound)
            if isinstance(stmt, gast.If):
                then, other = set(bound), set(bound)
                walk(stmt.body, then)
                walk(stmt.orelse, other)
                bound |= then & other
            elif isinstance(stmt, (gast.For, gast.While)):
                walk(stmt.body, set(bound))
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                bound.add(stmt.targets[0].id)
    walk(body, set(params))
    return out


def test_bound_before_is_the_sets_of_bound_names():
    body = gast.parse(
        "a = p\nif a:\n    b = 1\n    c = 2\n    if b:\n        e = 1\n    else:\n"
        "        e = 2\nelse:\n    b = 3\n    e = 4\nfor i in range(3):\n    d = b\n"
        "    a = d\nf = e\n").body
    want = _bound_sets(body, ["p"])
    got = bound_before(body, ["p"])
    assert set(got) == set(want)
    for key, names in want.items():
        assert set(got[key]) == names
        assert all(n in got[key] for n in names) and "zz" not in got[key]


def _function(text):
    return gast.parse(text).body[0]


def test_drop_dead_removes_a_chain_of_dead_values_at_once():
    lines = ["def f(x):", "    y0 = x"] + [f"    y{k + 1} = y{k} * 2" for k in range(300)]
    tree = _function("\n".join(lines + ["    return x"]) + "\n")
    drop_dead(tree, {})
    assert to_source(tree, "h").splitlines()[1:] == ["def f(x):", "    return x"]


def test_copies_are_still_propagated_across_a_long_block():
    lines = ["def f(x):", "    _a = x", "    b = x * 2"] + \
        [f"    c{k} = b + {k}" for k in range(200)] + ["    return _a * c199"]
    tree = _function("\n".join(lines) + "\n")
    propagate_copies(tree, frozenset({"b"} | {f"c{k}" for k in range(200)}))
    text = to_source(tree, "h")
    assert "_a" not in text and "return x * c199" in text


def _long_program(tmp_path, lines):
    path = tmp_path / "long_program.py"
    path.write_text("import numpy as np\n\n" + "\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("long_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_long_programs_have_right_gradients(tmp_path, shape):
    lines = ["def f(x, w):", "    a = x", "    b = w"]
    for k in range(60):
        lines += [f"    a = np.sin(a) * 0.5 + b * 0.1 + {k % 3}", "    b = b + a * 0.01"]
    lines += ["    for i in range(2):", "        a = a * 0.5 + b", "    return np.sum(a * b)"]
    f = _long_program(tmp_path, lines)
    rng = np.random.default_rng(1)
    x, w = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape[-1:])      # broadcast
    dx, dw = grad(f, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(dx, numeric_grad(f, (x, w), 0), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(dw, numeric_grad(f, (x, w), 1), rtol=1e-5, atol=1e-8)


def _calls_to_compile(folder, family, n) -> int:
    """Function calls (Python's and C's, as cProfile counts them) made by compiling the
    gradient of benchmarks/compile_time.py's program `family` of `n` statements."""
    lines, args = compile_time.FAMILIES[family](n)
    path = folder / f"{family}_{n}.py"
    path.write_text("import numpy as np\n\n" + "\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(f"{family}_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    arguments = eval(args, {"np": np})
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        grad(module.f)(*arguments)
    finally:
        profiler.disable()
    return pstats.Stats(profiler).total_calls


@pytest.mark.parametrize("family", ["chain", "nested2", "nested4", "helpers"])
def test_compile_work_grows_linearly_with_the_statements(tmp_path, family):
    # a pass that walks the whole function once per statement makes 4 times the
    # statements cost 16 times the work at the sizes where it dominates (a walk per
    # assignment in library_calls made chain's ratio 8.7 at these sizes); linear
    # passes make it 4 times, less where the fixed costs still weigh (helpers: 4
    # times the helpers, each compiled on its own, and 4.1 measured)
    _calls_to_compile(tmp_path, family, 2)      # imports and tables made on first use
    small, large = (_calls_to_compile(tmp_path, family, n) for n in (50, 200))
    assert large / small < 4.6, (family, small, large)


def test_loops_nested_deeper_cost_little_more_work(tmp_path):
    # the same 200 statements inside 1 and 4 loops: passes that walked a loop's body once
    # per loop around it (break/continue search, copy propagation's block index, nest's
    # blocks) made the 3 more loops cost a quarter more work (1.245 before); what is left
    # is the loops' own code and a few walks that still go once per loop (tighten)
    _calls_to_compile(tmp_path, "nested1", 2)
    one, four = (_calls_to_compile(tmp_path, family, 200) for family in ("nested1", "nested4"))
    assert four / one < 1.18, (one, four)


def test_block_index_joins_the_names_of_statements_inside_compound_ones():
    from sgcompiler.optimize.tidy.block_index import _names, forget, names_of
    src = textwrap.dedent("""
        def f(x, n, c):
            y = x
            for i in range(n):
                for j in range(i):
                    y = y * c + x[i]
                    if y > 0:
                        y += c
                    else:
                        del c
                while n > 0:
                    n = n - 1
                    z = y
                else:
                    z = x
            return y
        """)
    tree = gast.parse(src).body[0]
    known = {}
    every = [s for s in gast.walk(tree) if isinstance(s, gast.stmt)]
    for stmt in every:
        assert names_of(stmt, known) == _names(stmt), gast.dump(stmt)
    # a read renamed inside the loop: forgetting the loop forgets what is inside it too
    outer = tree.body[1]
    for node in gast.walk(outer):
        if isinstance(node, gast.Name) and node.id == "x" and isinstance(node.ctx, gast.Load):
            node.id = "w"
    forget(outer, known)
    # (what holds the loop is stale until forgotten too: propagate-copies asks no more
    # about the blocks it has left)
    for stmt in (s for s in gast.walk(outer) if isinstance(s, gast.stmt)):
        assert names_of(stmt, known) == _names(stmt), gast.dump(stmt)
    assert "w" in names_of(outer, known)[1] and "x" not in names_of(outer, known)[1]
