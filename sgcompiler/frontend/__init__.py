"""The front end: a function object in, its normal form out.

    source.py     function -> gast tree with real file names and line numbers
    check.py      refuse what cannot be differentiated, all at once
    resolve.py    what every called name refers to (a rule, stop_gradient, a user function)
    normalize.py  A-normal form: one primitive operation per assignment
    lower.py      structured jumps (break, continue, return) in the normal form
    iteration.py  normal forms of `for` over sequences, enumerate, zip, comprehensions
"""
