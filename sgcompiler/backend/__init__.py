"""The back end: the final tree as source text, and the text as live functions.

    codegen.py  gast -> ast -> text with ast.unparse, comments and the header
    loader.py   compile the text (registered in linecache) and bind closures
    jit.py      backend="numba": the code numba compiles, and the fallback to NumPy
"""
