"""Python operator overloads and methods of tensors, built from ops.py."""

from __future__ import annotations

from . import ops
from .tensor import TensorLike


def _install() -> None:
    T = TensorLike
    T.__add__ = lambda a, b: ops.add(a, b)
    T.__radd__ = lambda a, b: ops.add(b, a)
    T.__sub__ = lambda a, b: ops.sub(a, b)
    T.__rsub__ = lambda a, b: ops.sub(b, a)
    T.__mul__ = lambda a, b: ops.mul(a, b)
    T.__rmul__ = lambda a, b: ops.mul(b, a)
    T.__truediv__ = lambda a, b: ops.div(a, b)
    T.__rtruediv__ = lambda a, b: ops.div(b, a)
    T.__floordiv__ = lambda a, b: ops.floordiv(a, b)
    T.__mod__ = lambda a, b: ops.mod(a, b)
    T.__pow__ = lambda a, b: ops.power(a, b)
    T.__neg__ = lambda a: ops.neg(a)
    T.__matmul__ = lambda a, b: ops.matmul(a, b)
    T.__rmatmul__ = lambda a, b: ops.matmul(b, a)
    T.__lt__ = lambda a, b: ops.compare("lt", a, b)
    T.__le__ = lambda a, b: ops.compare("le", a, b)
    T.__gt__ = lambda a, b: ops.compare("gt", a, b)
    T.__ge__ = lambda a, b: ops.compare("ge", a, b)
    T.__and__ = lambda a, b: ops.logical("and", a, b)
    T.__or__ = lambda a, b: ops.logical("or", a, b)
    T.__xor__ = lambda a, b: ops.logical("xor", a, b)
    T.__invert__ = lambda a: ops.logical_not(a)
    # `==` keeps object identity semantics (tensors are dict keys inside the
    # compiler); use .eq()/.ne() for elementwise equality.
    T.eq = lambda a, b: ops.compare("eq", a, b)
    T.ne = lambda a, b: ops.compare("ne", a, b)
    T.astype = lambda a, dtype: ops.cast_to(a, dtype)
    T.sum = lambda a, axis=None, keepdims=False: ops.sum(a, axis, keepdims)
    T.mean = lambda a, axis=None, keepdims=False: ops.mean(a, axis, keepdims)
    T.max = lambda a, axis=None, keepdims=False: ops.max(a, axis, keepdims)
    T.min = lambda a, axis=None, keepdims=False: ops.min(a, axis, keepdims)
    T.argmax = lambda a, axis=-1: ops.argmax(a, axis)
    T.reshape = lambda a, *shape: ops.reshape(
        a, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    )
    T.permute = lambda a, *perm: ops.permute(
        a, perm[0] if len(perm) == 1 and isinstance(perm[0], (tuple, list)) else perm
    )
    T.T = property(lambda a: ops.transpose(a))
    T.exp = lambda a: ops.exp(a)
    T.log = lambda a: ops.log(a)
    T.tanh = lambda a: ops.tanh(a)
    T.sqrt = lambda a: ops.sqrt(a)
    T.softmax = lambda a, axis=-1: ops.softmax(a, axis)
    T.log_softmax = lambda a, axis=-1: ops.log_softmax(a, axis)


_install()
