"""The reading view of generated code: the code as printed for a person, without the
`del` statements that free memory early (the executed code keeps them).

    z = x - _max                      z = x - _max
    e = np.exp(z)             ->      e = np.exp(z)
    del z                             _sum = np.sum(e)
    _sum = np.sum(e)

A block left with nothing but its frees gets `pass`. The header says that the view leaves
them out, so nobody takes it for the code that runs (`grad(f).source` is that code).
"""
from __future__ import annotations

NOTE = "# reading view: the `del` statements that free memory early are left out\n"


def reading_view(source: str) -> str:
    """`source` (generated code, as `to_source` prints it) without its `del` statements."""
    kept = [line for line in source.splitlines() if not line.lstrip().startswith("del ")]
    out = []
    for k, line in enumerate(kept):
        out.append(line)
        if line.rstrip().endswith(":") and not line.lstrip().startswith("#"):
            depth = indent(line)
            following = next((n for n in kept[k + 1:] if n.strip()), "")
            if not following or indent(following) <= depth:
                out.append(" " * (depth + 4) + "pass")
    text = "\n".join(out) + ("\n" if source.endswith("\n") else "")
    return _note(text)


def _note(text: str) -> str:
    """The note after each header comment (the line before each top-level def)."""
    lines = text.splitlines(keepends=True)
    out = []
    for k, line in enumerate(lines):
        out.append(line)
        if line.startswith("# ") and k + 1 < len(lines) and lines[k + 1].startswith("def "):
            out.append(NOTE)
    return "".join(out)


def indent(line: str) -> int:
    """The number of spaces `line` starts with."""
    return len(line) - len(line.lstrip(" "))
