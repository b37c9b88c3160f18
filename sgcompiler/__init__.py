"""sgcompiler: source-to-source reverse-mode differentiation of Python and NumPy code.

    from sgcompiler import grad, stop_gradient

    @grad
    def loss(x, w):
        z = x - stop_gradient(np.max(x))
        ...
    loss(x, w)          # d loss / d x, computed by generated code
    print(loss.source)  # the generated code
"""
from .api import grad, value_and_grad
from .errors import SGCompilerError
from .runtime import stop_gradient

__all__ = ["grad", "value_and_grad", "stop_gradient", "SGCompilerError"]
__version__ = "0.1.0"
