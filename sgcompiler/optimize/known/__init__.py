"""What the steps know about the code they rewrite: specialisation.py (`Specialisation`,
made once per generated function by the recipes) and code_shapes.py (the shapes and
dtypes of the generated code's values, for code specialised for shapes).
"""
