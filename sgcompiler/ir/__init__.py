"""What every stage shares: gast node builders, statement-list walks, naming conventions.

    builders.py  store/load/const/number, products, the generated-comment marker
    blocks.py    the statement lists of a function, without walking expressions
    naming.py    the names of generated code (dx, _t1, f_grad) and the Namer
"""
