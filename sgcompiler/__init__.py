"""sgcompiler: source-to-source reverse-mode differentiation of Python and NumPy code.

    from sgcompiler import grad, stop_gradient

    @grad
    def loss(x, w):
        z = x - stop_gradient(np.max(x))
        ...
    loss(x, w)          # d loss / d x, computed by generated code
    print(loss.source)  # the generated code

Functions without a built-in derivative rule get one from the user:

    @sgcompiler.adjoint(scipy.special.gammaln)
    def gammaln(g, ans, x):
        return g * scipy.special.digamma(x)

    sgcompiler.nondifferentiable(my_bucketize)   # its results are constants
"""
from .api import grad, value_and_grad
from .backend.jit import JitFallbackWarning
from .checks import check_grads
from .derivatives import hessian, hvp, jacobian, jvp
from .reverse_api import vjp
from .errors import SGCompilerError
from .forward.batch import PerColumnWarning
from .explain import ZeroGradientWarning
from .records import register_tree
from .rules.custom import adjoint, differentiate_module, nondifferentiable, tangent
from .runtime import checkpoint, stop_gradient

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacobian", "hessian", "hvp",
           "check_grads", "stop_gradient", "adjoint", "tangent", "nondifferentiable",
           "differentiate_module", "register_tree", "SGCompilerError", "ZeroGradientWarning",
           "JitFallbackWarning", "PerColumnWarning", "checkpoint"]
__version__ = "0.1.0"
