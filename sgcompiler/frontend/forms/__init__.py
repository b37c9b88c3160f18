"""Python as people write it, read as the plainer forms the rest of the front end takes
(part of parsing, before check). Each module is one pass or the helpers one needs; the
front end (frontend/__init__.py) runs the passes in this order:

    contexts.py    with np.errstate(...): read as its body
    statements.py  a, *rest = xs; try blocks whose handlers only raise
    generators.py  g = (... for v in xs) consumed once later: the generator moved there
    sugar.py       generators consumed by sum/max/..., map, * and ** of displays, local
                   partials (dicts.py: dict(a=x), d.get, dict comprehensions)
    varargs.py     a helper with *args/**kwargs: a copy made for each call's arguments
    factories.py   g = make(s), make returning a def: the def it makes
    library_calls.py  np.apply_along_axis(f, ...), np.vectorize(f)(x): loops in Python
    nested.py      nested defs and lambdas lifted; helpers specialised for function arguments
    fields.py      p.w of a local value (a NamedTuple, a dataclass): field(p, 'w')
    powers.py      np.abs(z) ** 2 and z.real ** 2 + z.imag ** 2 (complex mode): abs_squared(z)

and, for the function object itself (source.py, resolve.py, api.py): objects.py (bound
methods, callable objects, partials). How a lambda is found by its code object
(frontend/lambdas.py) and how function objects are made from pieces of the user's source
(frontend/lifted.py) live beside source.py, which reads them; the passes here use both.
"""
