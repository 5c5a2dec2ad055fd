"""The VJP rule of the ``linalg`` op: each factorization's, solve's and determinant's.

The autodiff table (``minilazy.autodiff.vjps``) takes it from here, as it takes the FFT's from
``minilazy.fft``: the matrix calculus lives beside the functions it differentiates. Each rule
records its cotangents with ops already in the tables. Never imports jax.
"""

from __future__ import annotations

from minilazy.api.creation import eye, zeros_like
from minilazy.api.elementwise import where
from minilazy.api.shaping import tril
from minilazy.api.tensor import Tensor, record
from minilazy.core import dtypes
from minilazy.core.attrs import NONE, NoAttrs, Reduce, mismatch
from minilazy.core.ir import Node, Op
from minilazy.ops.linalg import Fn, Linalg


def _op(op: Op, *xs: Tensor, attrs: Linalg | Reduce | NoAttrs = NONE) -> Tensor:
    return record(op, tuple(x._node for x in xs), attrs, xs[0].device)


def _conj(x: Tensor) -> Tensor:
    return _op(Op.CONJ, x) if x.dtype in dtypes.COMPLEX else x


def _fn(fn: Fn, *xs: Tensor, full: bool = False) -> Tensor:
    return _op(Op.LINALG, *xs, attrs=Linalg(int(fn), full))


def _adjoint(x: Tensor) -> Tensor:
    return _conj(x).mT  # Xᴴ (Xᵀ for real X)


def _symmetric(a: Tensor) -> Tensor:
    # cholesky and eigh read only the Hermitian part of A (jax.numpy symmetrizes its input), so
    # A's cotangent is Hermitian too: the one jax.grad gives.
    return 0.5 * (a + _adjoint(a))


def _eye(a: Tensor) -> Tensor:
    return eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _eigh(fn: Fn, g: Tensor, y: Tensor, a: Tensor) -> Tensor:
    # A = V diag(w) Vᴴ: dw = Re diag(Vᴴ dA V), dV = V (F ∘ Vᴴ dA V) with F_ij = 1 / (w_j - w_i)
    # off the diagonal, 0 on it; transposed, A's cotangent is V (...) Vᴴ (eigenvalues distinct).
    # g is conjugated and so is the result (for complex A: see _linalg).
    v = y if fn is Fn.EIGH_VECTORS else _fn(Fn.EIGH_VECTORS, a)
    if fn is Fn.EIGH_VALUES:
        return _symmetric((v * g[..., None, :]) @ _adjoint(v))
    w = _fn(Fn.EIGH_VALUES, a)
    on = _eye(w) == 1.0
    gaps = w[..., None, :] - w[..., :, None]
    f = where(on, 0.0, 1.0 / where(on, 1.0, gaps))
    return _symmetric(v @ (f * (_adjoint(v) @ g)) @ _adjoint(v))


def _cofactors(a: Tensor) -> Tensor:
    """The cofactor matrix of real ``a``, det(A) A⁻ᵀ, also where ``a`` is singular.

    det is a polynomial, smooth everywhere (JAX's gradient is finite there too): from A = U S Vᵀ,
    cof(A) = det(U) det(V) U diag(the product of the other singular values) Vᵀ, no division.
    """
    u, s, vt = _fn(Fn.SVD_U, a), _fn(Fn.SVD_S, a), _fn(Fn.SVD_VT, a)
    ones_on_diagonal = where(_eye(a) == 1.0, 1.0, s[..., None, :])
    others = _op(Op.PROD, ones_on_diagonal, attrs=Reduce((a.ndim - 1,), False))
    sign = _fn(Fn.DET, u) * _fn(Fn.DET, vt)
    return sign[..., None, None] * ((u * others[..., None, :]) @ vt)


def linalg_vjp(g: Tensor, y: Tensor, xs: tuple[Tensor, ...], n: Node
               ) -> tuple[Tensor | None, ...]:
    """The cotangents of a ``LINALG`` node's operands (JAX's convention for complex ones).

    Example:
        >>> import minilazy as ml
        >>> a = ml.asarray([[2.0, 0.0], [0.0, 4.0]])
        >>> ml.grad(lambda a: ml.linalg.det(a))(a).tolist()  # the cofactors
        [[4.0, 0.0], [0.0, 2.0]]
    """
    match n.attrs:
        case Linalg(code, _):
            fn, a = Fn(code), xs[0]
        case _:
            raise mismatch(n.op, n.attrs)
    if fn is Fn.INV:  # d(A⁻¹) = -A⁻¹ dA A⁻¹
        return (-(y.mT @ g @ y.mT),)
    if fn is Fn.SOLVE:  # X = A⁻¹ B: B's cotangent solves Aᵀ, A's is minus that times Xᵀ
        gb = _fn(Fn.SOLVE, a.mT, g)
        return -(gb @ y.mT), gb
    if fn is Fn.DET and a.dtype not in dtypes.COMPLEX:  # d det A = tr(cof(A)ᵀ dA)
        return (g[..., None, None] * _cofactors(a),)
    if fn in (Fn.DET, Fn.SLOGDET_LOGABS):  # d det A = det A tr(A⁻¹ dA); log|det A|: without det
        scale = g * y if fn is Fn.DET else g
        return (scale[..., None, None] * _fn(Fn.INV, a).mT,)
    if fn is Fn.SLOGDET_SIGN:  # real: piecewise constant; complex: d sign = i Im tr(A⁻¹ dA) sign
        if a.dtype not in dtypes.COMPLEX:
            return (zeros_like(a),)
        return ((_op(Op.IMAG, g * y) * 1j)[..., None, None] * _fn(Fn.INV, a).mT,)
    # The rest are not holomorphic (they conjugate A). In JAX's convention, A's cotangent is the
    # conjugate of the real rule's, written with conjugate transposes, given the conjugate of g.
    g = _conj(g)
    if fn is Fn.CHOLESKY:  # L = chol(A): A's cotangent is L⁻ᴴ Φ(Lᴴ Ḡ) L⁻¹ (Murray 2016), Φ
        inv = _fn(Fn.INV, y)  # the lower triangle with its diagonal halved
        inner = _adjoint(y) @ g
        return (_conj(_symmetric(_adjoint(inv) @ (tril(inner) - 0.5 * _eye(a) * inner) @ inv)),)
    if fn in (Fn.EIGH_VALUES, Fn.EIGH_VECTORS):
        return (_conj(_eigh(fn, g, y, a)),)
    if fn is Fn.SVD_S:  # A = U diag(s) Vᴴ: ds = Re diag(Uᴴ dA V)
        u, vt = _fn(Fn.SVD_U, a), _fn(Fn.SVD_VT, a)
        return (_conj((u * g[..., None, :]) @ vt),)
    raise TypeError(f"grad: linalg.{fn.name.lower()} is not differentiable in minilazy (qr's "
                    "factors and svd's singular vectors have no VJP rule yet)")
