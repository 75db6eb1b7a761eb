r"""The Dirichlet likelihood of MVU's Models B and C, censored near the simplex's boundary.

Models B and C score points :math:`t` of the simplex that may lie on its boundary (classifiers'
probabilities of exactly 0 or 1 in float64). Their likelihood is the Dirichlet's, written by
stick-breaking (Connor and Mosimann 1969): the fractions :math:`V_k = t_k / \sum_{j \ge k} t_j`,
:math:`k < K - 1`, are independent, :math:`V_k \sim \mathrm{Beta}(\alpha_k, \beta_k)` with
:math:`\beta_k = \sum_{j > k}\alpha_j`. A fraction is observed when :math:`c < V_k < 1 - c`
(:math:`c` = :data:`CENSOR`) and censored otherwise: :math:`V_k \le c` contributes
:math:`\log I_c(\alpha_k, \beta_k)`, :math:`V_k \ge 1 - c` contributes
:math:`\log I_c(\beta_k, \alpha_k)` and leaves the later fractions unobserved (:math:`I` is
the regularised incomplete beta function). This is the exact law of the censored fractions;
where none is censored it is the Dirichlet density of :math:`t`, and for two classes it is the
Beta law of :math:`t_0` censored to :math:`[c, 1 - c]`.

Points that share :math:`\alpha` (Model B's draws of one instance) enter through sums
(:func:`sufficient`): per fraction, :math:`\sum\log V_k`, :math:`\sum\log(1 - V_k)` over the
observed points and the numbers observed, censored low and censored high, so that
:math:`\log I_c` is computed once per parameter and only where a point is censored.
:func:`loglik_graph` is the log-likelihood in PyTensor (the models' potentials, with
gradients); :func:`loglik` the same in numpy (the independent posteriors behind ``check()``).
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np
from scipy import special

from bayeval.methods.mvu.estimators import CLIP

__all__ = ["CENSOR", "loglik", "loglik_graph", "simplex", "sufficient"]

#: stick-breaking fractions within this of 0 or 1 are censored (module docstring)
CENSOR = CLIP
#: terms of the series of :math:`\log I_c(p, q)` (ratio at most 1/2 where it is used)
_TERMS = 64
#: below this, :math:`I_c(p, q)` is computed by the series (``betainc`` underflows)
_TINY = 1e-280
#: relative step of the central differences of :math:`\log I_c` in :math:`\log p, \log q`
_STEP = 1e-5


def simplex(phi) -> np.ndarray:
    """Points (n, S, K) (or (S, K): one instance) of the simplex, renormalised to sum to 1.

    Examples
    --------
    >>> simplex([[0.2, 0.6], [1.0, -1e-17]])
    array([[[0.25, 0.75],
            [1.  , 0.  ]]])
    """
    phi = np.clip(np.asarray(phi, dtype=float), 0.0, None)
    phi = phi[None] if phi.ndim == 2 else phi
    return phi / phi.sum(-1, keepdims=True)


def sufficient(t: np.ndarray) -> dict:
    r"""Sums over the points (axis -2) of simplex rows ``t`` (..., S, K), per fraction (..., K-1).

    ``log_v``, ``log_1mv``: :math:`\sum\log V_k`, :math:`\sum\log(1 - V_k)` over the points
    where :math:`V_k` is observed; ``observed``, ``lower`` (:math:`V_k \le c`), ``upper``
    (:math:`V_k \ge 1 - c`): numbers of points (the fractions after an upper-censored one are
    neither: their stick is shorter than :math:`c`); ``log_jacobian`` (...):
    :math:`-\sum\log\sum_{j \ge k} t_j` over the observed :math:`V_k`, :math:`k \ge 1` (the
    change of variables from the fractions to :math:`t`; constant in :math:`\alpha`).

    Examples
    --------
    >>> s = sufficient(np.array([[0.2, 0.8], [0.0, 1.0], [1.0, 0.0]]))
    >>> s["observed"], s["lower"], s["upper"], s["log_v"].round(4)
    (array([1]), array([1]), array([1]), array([-1.6094]))
    """
    tail = np.cumsum(t[..., ::-1], axis=-1)[..., ::-1]
    head, rest = tail[..., :-1], tail[..., 1:]
    upper = rest <= CENSOR * head
    after = (np.cumsum(upper, axis=-1) - upper) > 0
    lower = (t[..., :-1] <= CENSOR * head) & ~after
    upper = upper & ~after
    observed = ~(lower | upper | after)
    head = np.where(observed, head, 1.0)
    with np.errstate(divide="ignore"):
        log_v = np.where(observed, np.log(np.where(observed, t[..., :-1], 1.0) / head), 0.0)
        log_1mv = np.where(observed, np.log(np.where(observed, rest, 1.0) / head), 0.0)
    log_jacobian = -np.where(observed[..., 1:], np.log(head[..., 1:]), 0.0).sum((-2, -1))
    return {"log_v": log_v.sum(-2), "log_1mv": log_1mv.sum(-2), "lower": lower.sum(-2),
            "upper": upper.sum(-2), "observed": observed.sum(-2), "log_jacobian": log_jacobian}


def _stick_shapes(alpha, xp=np):
    r"""Beta shapes :math:`(\alpha_k, \sum_{j > k}\alpha_j)` (..., K - 1) of the fractions."""
    return alpha[..., :-1], xp.cumsum(alpha[..., ::-1], axis=-1)[..., ::-1][..., 1:]


def loglik(alpha, stats: dict) -> np.ndarray:
    r"""The censored log-likelihood (module docstring) in numpy, without its Jacobian (a
    constant), from the sums ``stats`` of :func:`sufficient` (broadcast against ``alpha``'s
    leading axes); summed over the fractions.

    Examples
    --------
    >>> from scipy import stats
    >>> t = np.array([[0.2, 0.3, 0.5]])
    >>> s = sufficient(t)
    >>> a = np.array([1.0, 2.0, 3.0])
    >>> bool(np.isclose(loglik(a, s) + s["log_jacobian"], stats.dirichlet(a).logpdf(t[0])))
    True
    """
    a, b = _stick_shapes(alpha)
    out = ((a - 1) * stats["log_v"] + (b - 1) * stats["log_1mv"]
           - stats["observed"] * special.betaln(a, b))
    for count, p, q in ((stats["lower"], a, b), (stats["upper"], b, a)):
        count, p, q = np.broadcast_arrays(count, p, q)
        if (count > 0).any():
            at = count > 0
            out[at] += count[at] * _log_cdf_numpy(p[at], q[at])
    return out.sum(-1)


def loglik_graph(alpha, stats: dict):
    r"""The censored log-likelihood of :func:`loglik` as a PyTensor graph of ``alpha`` (n, K),
    with its Jacobian: one value per row of ``stats`` (n, K - 1), whose sums are constants.

    :math:`\log I_c` is evaluated at every (row, fraction) and kept where a point is censored
    (elsewhere at the safe shapes (1, 1)), so that the graph does not depend on which points
    are censored (copies of a model built on other data share it).

    Examples
    --------
    >>> import pytensor.tensor as pt
    >>> t = np.array([[[0.2, 0.3, 0.5], [0.0, 0.4, 0.6]]])  # one row, two points
    >>> a = np.array([[1.0, 2.0, 3.0]])
    >>> s = sufficient(t)
    >>> got = loglik_graph(pt.as_tensor(a), s).eval()
    >>> bool(np.allclose(got, loglik(a, s) + s["log_jacobian"]))
    True
    """
    import pytensor.tensor as pt

    a, b = _stick_shapes(alpha, pt)
    terms = ((a - 1) * stats["log_v"] + (b - 1) * stats["log_1mv"]
             - stats["observed"] * (pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)))
    for count, p, q in ((stats["lower"], a, b), (stats["upper"], b, a)):
        censored = np.asarray(count) > 0
        p, q = pt.where(censored, p, 1.0), pt.where(censored, q, 1.0)
        terms = terms + pt.where(censored, count * _log_cdf(p, q), 0.0)
    return terms.sum(-1) + stats["log_jacobian"]


def _log_cdf(p, q):
    r""":math:`\log I_c(p, q)` at :math:`c` = :data:`CENSOR` (pytensor, with gradients).

    Where :math:`qc \le 1/2` or ``betainc`` underflows, the series
    :math:`I_c(p, q) = \frac{c^p(1-c)^q}{p\,B(p, q)}\sum_{n \ge 0}\prod_{j < n}
    \frac{c\,(p + q + j)}{p + 1 + j}` (positive terms; :func:`_series`), differentiated
    exactly; elsewhere (q above :math:`1/(2c)`, :math:`I_c` not tiny) ``betainc`` with central
    differences in :math:`\log p` and :math:`\log q` as gradient. Each branch sees safe inputs
    (1) where the other is used, so that neither gives NaN gradients.
    """
    import pytensor.tensor as pt

    held = _held()
    series = (q * CENSOR <= 0.5) | (pt.betainc(p, q, CENSOR) <= _TINY)
    one = pt.ones_like(p)
    sp, sq = pt.where(series, p, one), pt.where(series, q, one)
    by_series = (sp * np.log(CENSOR) + sq * np.log1p(-CENSOR) - pt.log(sp) - pt.gammaln(sp)
                 - pt.gammaln(sq) + pt.gammaln(sp + sq) + _log_series()(sp, sq))
    dp, dq = pt.where(series, one, p), pt.where(series, one, q)
    fp, fq = held(dp), held(dq)

    def log_i(a, b):
        return pt.log(pt.betainc(a, b, CENSOR))

    step = np.exp(_STEP)
    grad_p = (log_i(fp * step, fq) - log_i(fp / step, fq)) / (2 * _STEP)
    grad_q = (log_i(fp, fq * step) - log_i(fp, fq / step)) / (2 * _STEP)
    direct = (held(log_i(fp, fq)) + held(grad_p) * (pt.log(dp) - pt.log(fp))
              + held(grad_q) * (pt.log(dq) - pt.log(fq)))
    return pt.where(series, by_series, direct)


@functools.cache
def _held():
    """Elementwise identity with zero gradient, disconnected (no gradient graph is built
    through it); a scalar op, so that graphs vectorise; its class is this module's ``_Held``,
    pickled by name in pytensor's C cache."""
    from pytensor.gradient import disconnected_type
    from pytensor.scalar.basic import UnaryScalarOp, upgrade_to_float
    from pytensor.tensor.elemwise import Elemwise

    class Held(UnaryScalarOp):
        nfunc_spec = ("positive", 1, 1)  # the numba backend's implementation

        def impl(self, x):
            return x

        def connection_pattern(self, node):
            return [[False]]

        def pullback(self, inputs, outputs, gout):
            return [disconnected_type()]

        def c_code(self, node, name, inputs, outputs, sub):
            return f"{outputs[0]} = {inputs[0]};"

        def c_code_cache_version(self):
            return (1,)

    Held.__module__, Held.__qualname__ = __name__, "_Held"
    return Elemwise(Held(upgrade_to_float, name="held"))


def _series(p: float, q: float, which: int) -> float:
    r"""The series of :func:`_log_cdf`, :math:`S = \sum_{n < N} t_n` with :math:`t_0 = 1`,
    :math:`t_{n+1} = t_n\,c\,(p + q + n)/(p + 1 + n)`, summed until a term falls below
    :math:`10^{-18} S` (:math:`N \le` :data:`_TERMS`): ``which`` 0 gives :math:`\log S`, 1
    :math:`\partial_p \log S = \sum_n t_n A_n / S` and 2 :math:`\partial_q \log S = \sum_n t_n
    B_n / S`, with :math:`B_n = \sum_{j < n} \frac1{p + q + j}` and :math:`A_n = B_n -
    \sum_{j < n}\frac1{p + 1 + j}`; NaN where :math:`p + q` is 0 (shapes underflowed). A
    scalar loop, compiled by numba (or C) in the models.

    Examples
    --------
    >>> from scipy import special
    >>> p, q = 0.7, 3.0  # I_c(p, q) = c^p (1 - c)^q S / (p B(p, q))
    >>> log_i = (p * np.log(CENSOR) + q * np.log1p(-CENSOR) - np.log(p) - special.betaln(p, q)
    ...          + _series(p, q, 0))
    >>> bool(np.isclose(log_i, np.log(special.betainc(p, q, CENSOR)), rtol=1e-12))
    True
    >>> import pytensor, pytensor.tensor as pt  # compiled, where alpha underflowed to 0
    >>> x = pt.dvector("x")
    >>> np.isnan(pytensor.function([x], _log_series()(x, x))(np.array([0.0, 1.0])))
    array([ True, False])
    """
    if not p + q > 0.0:  # shapes underflowed to 0 (or NaN): no finite density, no exception
        return math.nan
    t, s, sa, sb, a, b = 1.0, 1.0, 0.0, 0.0, 0.0, 0.0
    for n in range(_TERMS - 1):
        u = 1.0 / (p + q + n)
        a += u - 1.0 / (p + 1.0 + n)
        b += u
        t *= CENSOR * (p + q + n) / (p + 1.0 + n)
        s += t
        sa += t * a
        sb += t * b
        if t < 1e-18 * s:
            break
    if which == 0:
        return math.log(s)
    return (sa if which == 1 else sb) / s


#: C body of :func:`_series` (the same loop)
_SERIES_C = ("{{ double t = 1, s = 1, sa = 0, sb = 0, a = 0, b = 0, u;\n"
             "if (!({p} + {q} > 0)) {{ {z} = NAN; }} else {{\n"
             f"for (int n = 0; n < {_TERMS - 1}; n++) {{{{ u = 1.0 / ({{p}} + {{q}} + n);\n"
             "a += u - 1.0 / ({p} + 1.0 + n); b += u;\n"
             f"t *= {CENSOR!r} * ({{p}} + {{q}} + n) / ({{p}} + 1.0 + n);\n"
             "s += t; sa += t * a; sb += t * b; if (t < 1e-18 * s) break; }}\n"
             "{z} = {out}; }} }}")


_SERIES_CLASSES = ("_LogSeries", "_LogSeriesDp", "_LogSeriesDq")


def _log_series():
    r""":math:`\log S(p, q)` (:func:`_series`) elementwise, with its gradient."""
    from pytensor.tensor.elemwise import Elemwise

    return Elemwise(_series_ops()[0])


@functools.cache
def _series_ops() -> tuple:
    r"""Scalar ops of :func:`_series`: :math:`\log S`, whose gradient is the other two,
    :math:`\partial_p \log S` and :math:`\partial_q \log S`; their classes are this module's
    ``_LogSeries``, ``_LogSeriesDp`` and ``_LogSeriesDq`` (pickled by name)."""
    from pytensor.gradient import grad_not_implemented
    from pytensor.scalar.basic import ScalarOp, upgrade_to_float

    class Series(ScalarOp):
        nin, which = 2, 0

        def impl(self, p, q):
            return _series(float(p), float(q), self.which)

        def pullback(self, inputs, outputs, gout):
            if self.which:
                return [grad_not_implemented(self, i, x) for i, x in enumerate(inputs)]
            return [gout[0] * ops[1](*inputs), gout[0] * ops[2](*inputs)]

        def c_code(self, node, name, inputs, outputs, sub):
            out = ("log(s)", "sa / s", "sb / s")[self.which]
            return _SERIES_C.format(p=inputs[0], q=inputs[1], z=outputs[0], out=out)

        def c_code_cache_version(self):
            return (1,)

    ops = []
    for which, qualname in enumerate(_SERIES_CLASSES):
        cls = type(qualname[1:], (Series,), {"which": which})
        cls.__module__, cls.__qualname__ = __name__, qualname
        ops.append(cls(upgrade_to_float, name=qualname[1:].lower()))
    try:
        _register_numba(Series)
    except ImportError:  # pragma: no cover - numba is optional in pytensor
        pass
    return tuple(ops)


def _register_numba(op_type) -> None:
    """The numba backend's implementation of the :func:`_log_series` ops (:func:`_series`)."""
    from hashlib import sha256

    from pytensor.link.numba.dispatch import basic as numba_basic
    from pytensor.link.numba.dispatch.scalar import register_scalar_funcify

    kernel = numba_basic.numba_njit(_series)
    # the cache key of the compiled ops: the kernel's source and constants
    source = f"{inspect.getsource(_series)}:{_TERMS}:{CENSOR!r}"

    @register_scalar_funcify(op_type)
    def funcify(op, node, **kwargs):
        which = op.which

        @numba_basic.numba_njit
        def series(p, q):
            return kernel(p, q, which)

        return series, sha256(f"{source}:{which}".encode()).hexdigest()


def __getattr__(name: str):
    if name == "_Held":  # pytensor stays unimported until a model needs it
        return type(_held().scalar_op)
    if name in _SERIES_CLASSES:
        return type(_series_ops()[_SERIES_CLASSES.index(name)])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _log_cdf_numpy(p, q) -> np.ndarray:
    r""":math:`\log I_c(p, q)` in numpy: ``betainc``, or the series of :func:`_log_cdf` where
    it underflows."""
    p, q = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(q, dtype=float))
    with np.errstate(divide="ignore"):
        out = np.log(special.betainc(p, q, CENSOR))
    tiny = ~(out > np.log(_TINY))
    sp, sq = p[tiny, None], q[tiny, None]
    j = np.arange(_TERMS - 1, dtype=float)
    terms = np.cumsum(np.log(CENSOR) + np.log(sp + sq + j) - np.log(sp + 1 + j), axis=-1)
    out[tiny] = (sp[:, 0] * np.log(CENSOR) + sq[:, 0] * np.log1p(-CENSOR) - np.log(sp[:, 0])
                 - special.betaln(sp[:, 0], sq[:, 0])
                 + np.logaddexp(0.0, special.logsumexp(terms, axis=-1)))
    return out
