r"""The judge's frequentist estimators with sampling weights (inverse probability weighting).

When the human-labelled items are not a simple random sample (items drawn with known
probabilities :math:`\pi_i`: by stratum, by the judge's score, by prompt category), the labelled
mean and the judge's mean over the items left unlabelled are biased. Each labelled item then
carries the weight :math:`w_i \propto 1/\pi_i` and each unlabelled item :math:`v_i \propto 1/(1 -
\pi_i)` (or weights that take either sample to the population, as in ppi_py's ``w`` and
``w_unlabeled``). Weights are relative: they are rescaled to mean 1 in each sample, and uniform
weights give the unweighted estimators exactly.

Every mean becomes a ratio (Hájek) mean, :math:`\bar x_w = \sum_i w_i x_i / \sum_i w_i`, whose
linearised variance is

.. math:: \widehat{\mathrm{Var}}(\bar x_w) = \frac{1}{n^2}\sum_i \tilde w_i^2(x_i - \bar x_w)^2,
          \qquad \tilde w_i = n\,w_i/\textstyle\sum_j w_j ,

and the estimators of :mod:`bayeval.methods.judge.fast` become

=========================  ====================================================================
estimator                  with weights :math:`w` (labelled :math:`L`, size :math:`m`) and
                           :math:`v` (unlabelled :math:`U`, size :math:`n`)
=========================  ====================================================================
naive                      :math:`\bar{\hat Y}_{U,v}`
classical                  :math:`\bar Y_{L,w}`
ppi, ppi_pp                :math:`\lambda\bar{\hat Y}_{U,v} + \overline{(Y - \lambda\hat Y)}_{L,w}`
                           (Angelopoulos et al. 2023, "PPI++"), ppi_py's weighted
                           :math:`\hat\lambda` (:func:`ppi_pp_lambda`)
eif                        :math:`\sum_k \bar p_k\hat\mu_k` with the weighted cell means
                           :math:`\hat\mu_k = \bar Y_{L \cap k, w}` and the weighted share
                           :math:`\bar p_k` of judge value :math:`k` over all :math:`N` items
                           (:func:`eif_cells`), or a weighted least-squares line
                           (:func:`eif_linear`)
mle                        for a binary judge the pseudo-likelihood estimate, equal to ``eif``
rogan_gladen               :math:`(\hat p + \hat q_0 - 1)/(\hat q_0 + \hat q_1 - 1)` with the
                           weighted rates (:func:`rogan_gladen`)
=========================  ====================================================================

The adjusted Rogan–Gladen estimator smooths counts and has no weighted form.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayeval.methods.judge.fast import Estimate
from bayeval.validation import as_array, describe

__all__ = ["UNWEIGHTED_ONLY", "Sample", "by_name", "eif_cells", "eif_linear", "lambda_terms",
           "ppi_pp", "ppi_pp_lambda", "rogan_gladen", "sampling_weights", "weighted_mean"]

#: estimators without a weighted form
UNWEIGHTED_ONLY = ("rogan_gladen_adjusted",)


def sampling_weights(w, size: int, name: str) -> np.ndarray:
    """Sampling weights checked and rescaled to mean 1, or ones when ``w`` is None.

    Parameters
    ----------
    w : array-like or None
        Non-negative finite weights, one per item, with a positive sum.
    size : int
        The number of items they weight.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    numpy.ndarray
        Shape ``(size,)``, mean 1.

    Raises
    ------
    ValueError
        A length other than ``size``, a negative, NaN or infinite weight, or all weights zero.

    Examples
    --------
    >>> sampling_weights([1, 1, 2], 3, "sample_weight")
    array([0.75, 0.75, 1.5 ])
    """
    if w is None:
        return np.ones(size)
    w = as_array(w, name, dtype=float)
    if w.ndim != 1 or w.size != size:
        raise ValueError(f"{name} must hold one weight per item ({size}), got {describe(w)}.")
    if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        raise ValueError(f"{name} must be finite and non-negative with a positive sum (e.g. "
                         "inverse labelling probabilities 1/pi); got values such as "
                         f"{w[~(np.isfinite(w) & (w >= 0))][:3].tolist() or w[:3].tolist()}.")
    return w * (size / w.sum())


class Sample(NamedTuple):
    """Labelled and unlabelled items with their weights (each rescaled to mean 1).

    Examples
    --------
    >>> s = Sample.of([1, 0, 1], [1, 0, 0], [1, 1], [2, 1, 1], None)
    >>> s.w.tolist(), s.v.tolist()
    ([1.5, 0.75, 0.75], [1.0, 1.0])
    """

    y: np.ndarray
    yhat: np.ndarray
    yhat_u: np.ndarray
    w: np.ndarray
    v: np.ndarray

    @classmethod
    def of(cls, y, yhat, yhat_unlabeled, w=None, v=None) -> Sample:
        """The sample of arrays and weights (None: uniform); weights checked and rescaled."""
        y, yhat, yhat_u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
        return cls(y, yhat, yhat_u, sampling_weights(w, y.size, "sample_weight"),
                   sampling_weights(v, yhat_u.size, "sample_weight_unlabeled"))

    def pooled_mean(self) -> float:
        r"""The judge's weighted mean over all :math:`N` items, :math:`(\sum_L w\hat Y + \sum_U
        v\hat Y)/N` (weights of mean 1 in each sample)."""
        return float((self.w @ self.yhat + self.v @ self.yhat_u) / (self.w.size + self.v.size))


def weighted_mean(x, w) -> Estimate:
    r"""The Hájek mean :math:`\bar x_w = \sum w_i x_i/\sum w_i` and its linearised standard error
    :math:`\sqrt{\sum \tilde w_i^2(x_i - \bar x_w)^2}/n`, :math:`\tilde w` of mean 1.

    Parameters
    ----------
    x, w : numpy.ndarray, shape (n,)
        Values and weights of mean 1 (:func:`sampling_weights`).

    Returns
    -------
    Estimate

    Examples
    --------
    >>> [round(float(v), 4) for v in weighted_mean(np.array([1.0, 0, 1, 1]), np.ones(4))]
    [0.75, 0.2165]
    """
    mean = float(w @ x) / x.size
    return Estimate(mean, float(np.sqrt(np.sum((w * (x - mean)) ** 2))) / x.size)


def ppi_pp_lambda(s: Sample, clip: bool = True) -> float:
    r"""ppi_py's power-tuning :math:`\hat\lambda` of the weighted mean.

    With :math:`\hat\theta_1` the weighted PPI estimate (:math:`\lambda = 1`) and the weighted
    gradients :math:`g_i = w_i(Y_i - \hat\theta_1)`, :math:`h_i = w_i(\hat Y_i - \hat\theta_1)`
    (labelled) and :math:`h'_i = v_i(\hat Y_i - \hat\theta_1)` (unlabelled),

    .. math:: \hat\lambda = \frac{\widehat{\mathrm{Cov}}_L(g, h)}
              {(1 + m/n)\,\widehat{\mathrm{Var}}(h \cup h')},

    the covariance with ``ddof=0``, the variance over all :math:`N` with ``ddof=1``
    (:func:`lambda_terms`); uniform weights give
    :func:`bayeval.methods.judge.fast.ppi_pp_lambda`. Clipped to [0, 1] when ``clip``.

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1])
    >>> round(ppi_pp_lambda(s), 4)
    0.2812
    """
    cov, var = lambda_terms(s)
    lam = cov / var
    return float(np.clip(lam, 0.0, 1.0)) if clip else lam


def lambda_terms(s: Sample) -> tuple[float, float]:
    r"""The numerator :math:`\widehat{\mathrm{Cov}}_L(g, h)` and denominator
    :math:`(1 + m/n)\widehat{\mathrm{Var}}(h \cup h')` of :func:`ppi_pp_lambda`; summed over
    several means (the class indicators of K categories) they give ppi_py's one
    :math:`\hat\lambda` for all of them (``lam_optim_mode="overall"``).

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1])
    >>> [round(v, 4) for v in lambda_terms(s)]
    [0.125, 0.4444]
    """
    theta1 = ppi_pp(s, 1.0).estimate
    g, h = s.w * (s.y - theta1), s.w * (s.yhat - theta1)
    cov = np.mean((g - g.mean()) * (h - h.mean()))
    var = np.var(np.concatenate([h, s.v * (s.yhat_u - theta1)]), ddof=1)
    return float(cov), float((1 + s.y.size / s.yhat_u.size) * var)


def ppi_pp(s: Sample, lam: float) -> Estimate:
    r"""Weighted PPI++ with a given :math:`\lambda`:

    .. math::
        \hat\theta_\lambda = \lambda\bar{\hat Y}_{U,v} + \overline{(Y - \lambda\hat Y)}_{L,w},
        \qquad \widehat{\mathrm{se}}^2 = \lambda^2\widehat{\mathrm{Var}}(\bar{\hat Y}_{U,v})
            + \widehat{\mathrm{Var}}\big(\overline{(Y - \lambda\hat Y)}_{L,w}\big),

    the two Hájek variances of :func:`weighted_mean`. Uniform weights give
    :func:`bayeval.methods.judge.fast.ppi_pp`.

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1])
    >>> [round(float(v), 4) for v in ppi_pp(s, 1.0)]
    [0.9167, 0.2897]
    """
    imputed = weighted_mean(s.yhat_u, s.v)
    rectifier = weighted_mean(s.y - lam * s.yhat, s.w)
    return Estimate(lam * imputed.estimate + rectifier.estimate,
                    float(np.hypot(lam * imputed.se, rectifier.se)))


def eif_cells(s: Sample, k_l, k_u, size: int) -> Estimate:
    r"""Weighted EIF estimator with cell means (post-stratification).

    With :math:`W_k = \sum_{L \cap k} w_i`, the cell means :math:`\hat\mu_k = \sum_{L\cap k}
    w_iY_i/W_k` (the labelled mean :math:`\bar Y_{L,w}` where :math:`W_k = 0`) and the shares
    :math:`\bar p_k = (W_k + \sum_{U \cap k} v_i)/N`,

    .. math::
        \hat\theta = \sum_k\bar p_k\hat\mu_k,\qquad
        \widehat{\mathrm{se}}^2 = \frac{1}{N^2}\sum_{i \le N} \omega_i^2\{\hat\mu(\hat Y_i)
            - \hat\theta\}^2 + \sum_{i \in L}\phi_i^2,
        \quad \phi_i = w_i\Big\{\frac{\bar p_{k_i}(Y_i - \hat\mu_{k_i})}{W_{k_i}}
            + \frac{P_\varnothing (Y_i - \bar Y_{L,w})}{m}\Big\},

    :math:`\omega_i` the item's weight (:math:`w` or :math:`v`), :math:`P_\varnothing` the share
    of the cells without labelled items. Uniform weights give the delta-method variance of
    :func:`bayeval.methods.judge.fast.eif_cells`.

    Parameters
    ----------
    s : Sample
    k_l, k_u : numpy.ndarray of int
        The cell (judge value or score bin) of each labelled and unlabelled item.
    size : int
        Number of cells.

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1, 0, 1])
    >>> [round(float(v), 4) for v in eif_cells(s, s.yhat.astype(int), s.yhat_u.astype(int), 2)]
    [0.8, 0.1612]
    """
    m, n_total = s.y.size, s.y.size + s.yhat_u.size
    big_w = np.bincount(k_l, s.w, size)
    y_bar = float(s.w @ s.y) / m
    seen = big_w > 0
    mu = np.where(seen, np.bincount(k_l, s.w * s.y, size) / np.where(seen, big_w, 1.0), y_bar)
    p_bar = (big_w + np.bincount(k_u, s.v, size)) / n_total
    theta = float(p_bar @ mu)
    empty = float(p_bar[~seen].sum())
    phi = s.w * (p_bar[k_l] * (s.y - mu[k_l]) / np.where(seen, big_w, 1.0)[k_l]
                 + empty * (s.y - y_bar) / m)
    spread = (np.sum((s.w * (mu[k_l] - theta)) ** 2) + np.sum((s.v * (mu[k_u] - theta)) ** 2))
    return Estimate(theta, float(np.sqrt(spread / n_total**2 + np.sum(phi**2))))


def eif_linear(s: Sample) -> Estimate:
    r"""Weighted EIF with a weighted least-squares line :math:`\hat\mu(\hat y) = a + b\hat y` on
    the labelled items:

    .. math::
        \hat\theta = a + b\,\bar{\hat Y}_N, \qquad
        \widehat{\mathrm{se}}^2 = \frac{b^2}{N^2}\sum_{i \le N}\omega_i^2(\hat Y_i
            - \bar{\hat Y}_N)^2 + \frac{1}{m^2}\sum_{i \in L} w_i^2\{Y_i - \hat\mu(\hat Y_i)\}^2,

    :math:`\bar{\hat Y}_N` the judge's weighted mean over all :math:`N` items. Uniform weights
    give :func:`bayeval.methods.judge.fast.eif_linear`.

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4], [0.8, 0.1, 0.3])
    >>> [round(float(v), 4) for v in eif_linear(s)]
    [0.4099, 0.2173]
    """
    m, n_total = s.y.size, s.y.size + s.yhat_u.size
    y_bar, x_bar = float(s.w @ s.y) / m, float(s.w @ s.yhat) / m
    dx = s.yhat - x_bar
    b = float(s.w @ (dx * (s.y - y_bar)) / (s.w @ dx**2))
    pooled = s.pooled_mean()
    resid = s.y - y_bar - b * dx
    spread = np.sum((s.w * (s.yhat - pooled)) ** 2) + np.sum((s.v * (s.yhat_u - pooled)) ** 2)
    var = b**2 * spread / n_total**2 + np.sum((s.w * resid) ** 2) / m**2
    return Estimate(y_bar + b * (pooled - x_bar), float(np.sqrt(var)))


def rogan_gladen(s: Sample) -> Estimate:
    r"""Rogan–Gladen with weighted rates (binary labels and judge).

    :math:`\hat p = \bar{\hat Y}_{U,v}`, :math:`\hat q_1 = \bar{\hat Y}_{L_1,w}` over the
    labelled positives, :math:`\hat q_0 = \overline{(1 - \hat Y)}_{L_0,w}` over the labelled
    negatives, each with its Hájek variance (:func:`weighted_mean`), and

    .. math:: \hat\theta = \frac{\hat p + \hat q_0 - 1}{\hat q_0 + \hat q_1 - 1},\quad
              \widehat{\mathrm{se}}^2 = \frac{\widehat{\mathrm{Var}}(\hat p)
              + (1-\hat\theta)^2\widehat{\mathrm{Var}}(\hat q_0)
              + \hat\theta^2\widehat{\mathrm{Var}}(\hat q_1)}{(\hat q_0 + \hat q_1 - 1)^2};

    uniform weights give :func:`bayeval.methods.judge.fast.rogan_gladen`.

    Examples
    --------
    >>> s = Sample.of([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1], [1, 0, 0, 1])
    >>> [round(float(v), 4) for v in rogan_gladen(s)]
    [0.5, 0.9465]
    """
    pos = s.y == 1
    p = weighted_mean(s.yhat_u, s.v)
    q1 = weighted_mean(s.yhat[pos], s.w[pos] / s.w[pos].mean())
    q0 = weighted_mean(1 - s.yhat[~pos], s.w[~pos] / s.w[~pos].mean())
    kappa = q0.estimate + q1.estimate - 1
    theta = (p.estimate + q0.estimate - 1) / kappa
    var = p.se**2 + (1 - theta) ** 2 * q0.se**2 + theta**2 * q1.se**2
    return Estimate(theta, float(np.sqrt(var)) / abs(kappa))


def by_name(s: Sample, cells) -> dict:
    r"""Every weighted estimator as a thunk returning its :class:`Estimate`, keyed by its name
    (all of :data:`bayeval.methods.judge.fast.ESTIMATORS` but :data:`UNWEIGHTED_ONLY`).

    Parameters
    ----------
    s : Sample
    cells : (k_l, k_u, size) or None
        The cells of :func:`eif_cells`; None for :func:`eif_linear`.

    Examples
    --------
    >>> s = Sample.of([1, 0, 1, 1, 0], [1, 0, 0, 1, 1], [1, 1, 0, 1, 0, 1], [1, 1, 1, 2, 2])
    >>> thunks = by_name(s, (s.yhat.astype(int), s.yhat_u.astype(int), 2))
    >>> {k: round(float(f().estimate), 3) for k, f in thunks.items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'naive': 0.667, 'classical': 0.571, 'ppi': 0.524, 'ppi_pp': 0.571,
     'ppi_pp_unclipped': 0.571, 'eif': 0.569, 'mle': 0.569, 'rogan_gladen': 0.0}
    """
    def eif():
        return eif_linear(s) if cells is None else eif_cells(s, *cells)

    lam = ppi_pp_lambda(s, clip=False)
    return {"naive": lambda: weighted_mean(s.yhat_u, s.v),
            "classical": lambda: weighted_mean(s.y, s.w),
            "ppi": lambda: ppi_pp(s, 1.0),
            "ppi_pp": lambda: ppi_pp(s, float(np.clip(lam, 0.0, 1.0))),
            "ppi_pp_unclipped": lambda: ppi_pp(s, lam),
            "eif": eif, "mle": eif, "rogan_gladen": lambda: rogan_gladen(s)}
