"""Steps that rewrite loops: nest.py (a number computed for one use goes back into that use),
hoisting.py (hoist-row-products) and stacking.py (stack-tangent-products) in tangent code,
batching.py (batch-outer-products: outer products summed over a loop, one matrix product).
"""
