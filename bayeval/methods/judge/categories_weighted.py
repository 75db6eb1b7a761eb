r"""Class prevalences with sampling weights, and with the cross-fitted curves of a scored judge.

Each prevalence :math:`\pi_k = P(Y = k)` is the mean of the indicator :math:`Y_k = 1\{Y = k\}`,
so the weighted estimators of a mean (:mod:`bayeval.methods.judge.weighted`: labelled items of
weight :math:`w_i \propto 1/\pi_i`, unlabelled ones :math:`v_i \propto 1/(1 - \pi_i)`, Hájek
means) give it class by class, with the judge's indicator :math:`\hat Y_k = 1\{\hat Y = k\}`:

=================  ===========================================================================
estimator          class :math:`k` with weights
=================  ===========================================================================
naive              :math:`\bar{\hat Y}_{k,U,v}`
classical          :math:`\bar Y_{k,L,w}`
ppi, ppi_pp        :math:`\lambda\bar{\hat Y}_{k,U,v} + \overline{(Y_k - \lambda\hat Y_k)}_{L,w}`,
                   one :math:`\hat\lambda = \sum_k c_k/\sum_k d_k` for all classes from the
                   terms :math:`c_k/d_k` of each class's weighted :math:`\hat\lambda`
                   (:func:`~bayeval.methods.judge.weighted.lambda_terms`; ppi_py's ``"overall"``)
eif, mle           :func:`~bayeval.methods.judge.weighted.eif_cells` of :math:`Y_k` with the
                   cells the judge's K labels (the weighted post-stratification; the
                   pseudo-likelihood estimate of the saturated model is the same)
rogan_gladen       :math:`\hat\pi = (\hat M_w^\top)^{-1}\hat p_v` (:func:`rogan_gladen`)
=================  ===========================================================================

With a judge that gives a score :math:`s` instead of a label, the EIF takes the cross-fitted
curve :math:`\tilde\mu_k(s) \approx E[Y_k \mid s]` of each class
(:func:`~bayeval.methods.judge.curves.cross_fitted`), the K curves divided by their sum at each
score, and :func:`~bayeval.methods.judge.curves.eif_from_curve` (:func:`curve_by_name`); with
curves summing to 1 the prevalences do, since :math:`\sum_k Y_k = 1`.

Every estimator above but Rogan–Gladen is linear in the outcome columns (given
:math:`\lambda`, the cells or the curves) and its variance is a quadratic form in them, so the
covariance across classes follows by polarisation (:func:`by_class`),

.. math:: \hat\Sigma_{kl} = \tfrac12\{\widehat{\mathrm{Var}}(T[Y_k + Y_l])
          - \widehat{\mathrm{Var}}(T[Y_k]) - \widehat{\mathrm{Var}}(T[Y_l])\},

and a score :math:`\sum_k c_k\pi_k` (a win rate counting a tie as half) has the variance
:math:`c^\top\hat\Sigma c`, that of the same estimator of the mean of :math:`\sum_k c_kY_k`.
Uniform weights give the estimators of :mod:`bayeval.methods.judge.categories`.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from bayeval.methods.judge.categories import ClassEstimate
from bayeval.methods.judge.curves import cross_fitted, eif_from_curve
from bayeval.methods.judge.weighted import (
    Sample,
    eif_cells,
    lambda_terms,
    ppi_pp,
    sampling_weights,
    weighted_mean,
)

__all__ = ["by_class", "curve_by_name", "misclassification", "one_hot", "overall_lambda",
           "rogan_gladen", "weighted_by_name"]


def one_hot(codes, n_classes: int) -> np.ndarray:
    """The class indicators of codes 0..K-1, shape ``(n, K)``.

    Examples
    --------
    >>> one_hot([0, 2], 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    return (np.asarray(codes)[:, None] == np.arange(n_classes)).astype(float)


def by_class(fn, *columns) -> ClassEstimate:
    r"""A mean's estimator applied to each class's columns, with the covariance across classes.

    ``fn(*arrays)`` returns an :class:`~bayeval.methods.judge.fast.Estimate` linear in its
    arrays with a variance quadratic in them; column :math:`k` of each of ``columns`` (shape
    ``(n_i, K)``) gives class :math:`k`, and :math:`\hat\Sigma_{kl}` is the polarisation of the
    variances of classes :math:`k`, :math:`l` and of their sum (module docstring).

    Examples
    --------
    The Hájek means of three class indicators: the multinomial covariance
    :math:`(\mathrm{diag}\,\bar y - \bar y\bar y^\top)/m`.

    >>> y = one_hot([0, 0, 1, 2], 3)
    >>> est = by_class(lambda a: weighted_mean(a, np.ones(4)), y)
    >>> est.estimate.tolist(), (est.cov * 64).round(6).tolist()
    ([0.5, 0.25, 0.25], [[4.0, -2.0, -2.0], [-2.0, 3.0, -1.0], [-2.0, -1.0, 3.0]])
    """
    k = columns[0].shape[1]
    single = [fn(*(c[:, j] for c in columns)) for j in range(k)]
    var = np.array([float(e.se) ** 2 for e in single])
    cov = np.diag(var)
    for i, j in combinations(range(k), 2):
        both = float(fn(*(c[:, i] + c[:, j] for c in columns)).se) ** 2
        cov[i, j] = cov[j, i] = (both - var[i] - var[j]) / 2
    return ClassEstimate(np.array([float(e.estimate) for e in single]), cov)


def misclassification(y, yhat, n_classes: int, w) -> np.ndarray:
    r"""The weighted misclassification matrix :math:`\hat M_{kj} = \sum_{L, Y = k} w_i
    1\{\hat Y_i = j\}/\sum_{L, Y = k} w_i` (NaN rows for a class no labelled item has).

    Examples
    --------
    >>> misclassification([0, 0, 1, 1], [0, 1, 1, 1], 2, np.array([3.0, 1, 1, 1])).tolist()
    [[0.75, 0.25], [0.0, 1.0]]
    """
    rows = one_hot(y, n_classes) * np.asarray(w, float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return rows.T @ one_hot(yhat, n_classes) / rows.sum(axis=0)[:, None]


def rogan_gladen(y, yhat, yhat_u, n_classes: int, w, v) -> ClassEstimate:
    r"""Rogan–Gladen with weighted rates: :math:`\hat\pi = A\hat p_v`, :math:`A = (\hat
    M_w^\top)^{-1}`, with :math:`\hat M_w` of :func:`misclassification` and :math:`\hat p_v` the
    judge's weighted shares on the unlabelled items. Delta method with the Hájek covariances,

    .. math::
        \hat\Sigma = A\Big[\frac{1}{n^2}\sum_{U}v_i^2(e_{\hat Y_i} - \hat p_v)(\cdot)^\top
            + \sum_k\frac{\hat\pi_k^2}{W_k^2}\sum_{L, Y = k}w_i^2(e_{\hat Y_i} - \hat M_{k\cdot})
            (\cdot)^\top\Big]A^\top,

    :math:`W_k = \sum_{L, Y = k} w_i`, :math:`e_j` the indicator vector of label :math:`j`;
    uniform weights give :func:`bayeval.methods.judge.categories.rogan_gladen`.

    Parameters
    ----------
    y, yhat : array of int, shape (m,)
        Class codes of the human and judge labels of the labelled items.
    yhat_u : array of int, shape (n,)
        The judge's codes of the unlabelled items.
    n_classes : int
    w, v : numpy.ndarray
        Sampling weights of mean 1 of the labelled and unlabelled items.

    Examples
    --------
    >>> y, yh = [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 0]
    >>> est = rogan_gladen(y, yh, [0, 1, 1, 1], 2, np.ones(6), np.ones(4))
    >>> est.estimate.round(4).tolist()  # (p + q0 - 1)/(q0 + q1 - 1) = (0.75 - 1/3)/(1/3)
    [-0.25, 1.25]
    """
    w, v = np.asarray(w, float), np.asarray(v, float)
    hits, hits_u = one_hot(yhat, n_classes), one_hot(yhat_u, n_classes)
    mm = misclassification(y, yhat, n_classes, w)
    p = v @ hits_u / v.size
    a = np.linalg.inv(mm.T)
    pi = a @ p
    dev = v[:, None] * (hits_u - p)
    inner = dev.T @ dev / v.size**2
    y = np.asarray(y)
    for k in range(n_classes):
        dev = w[y == k, None] * (hits[y == k] - mm[k])
        inner += pi[k] ** 2 * dev.T @ dev / w[y == k].sum() ** 2
    return ClassEstimate(pi, a @ inner @ a.T)


def weighted_by_name(y, yhat, yhat_u, n_classes: int, w=None, v=None) -> dict:
    r"""The weighted estimators of the class prevalences (module docstring) as thunks returning
    their :class:`~bayeval.methods.judge.categories.ClassEstimate`, by name.

    Parameters
    ----------
    y, yhat, yhat_u, n_classes
        As :func:`rogan_gladen`.
    w, v : array-like, optional
        Sampling weights of the labelled and unlabelled items (checked and rescaled by
        :func:`~bayeval.methods.judge.weighted.sampling_weights`; default uniform).

    Examples
    --------
    >>> y, yh = [0, 0, 1, 1, 2, 2, 0], [0, 1, 1, 1, 2, 0, 0]
    >>> fns = weighted_by_name(y, yh, [0, 1, 2, 2, 0], 3, w=[1, 1, 1, 1, 2, 2, 1])
    >>> fns["classical"]().estimate.round(4).tolist()  # weights 3, 2, 4 of 9
    [0.3333, 0.2222, 0.4444]
    >>> round(float(fns["eif"]().estimate.sum()), 12)
    1.0
    """
    y_l, h_l, h_u = (one_hot(a, n_classes) for a in (y, yhat, yhat_u))
    w = sampling_weights(w, h_l.shape[0], "sample_weight")
    v = sampling_weights(v, h_u.shape[0], "sample_weight_unlabeled")

    def sample(a, b, c) -> Sample:
        return Sample(a, b, c, w, v)

    lam = overall_lambda(y, yhat, yhat_u, n_classes, w, v)
    cells = (np.asarray(yhat), np.asarray(yhat_u), n_classes)

    def ppi(lam_: float):
        return lambda: by_class(lambda a, b, c: ppi_pp(sample(a, b, c), lam_), y_l, h_l, h_u)

    def eif():
        return by_class(lambda a, b, c: eif_cells(sample(a, b, c), *cells), y_l, h_l, h_u)

    return {"naive": lambda: by_class(lambda c: weighted_mean(c, v), h_u),
            "classical": lambda: by_class(lambda a: weighted_mean(a, w), y_l),
            "rogan_gladen": lambda: rogan_gladen(y, yhat, yhat_u, n_classes, w, v),
            "ppi": ppi(1.0), "ppi_pp": ppi(float(np.clip(lam, 0.0, 1.0))),
            "ppi_pp_unclipped": ppi(lam), "eif": eif, "mle": eif}


def _normalised(mu: np.ndarray) -> np.ndarray:
    """Rows divided by their sum (uniform where a row is all 0)."""
    total = mu.sum(axis=1, keepdims=True)
    return np.where(total > 0, mu / np.where(total > 0, total, 1.0), 1.0 / mu.shape[1])


def overall_lambda(y, yhat, yhat_u, n_classes: int, w, v) -> float:
    r"""One power-tuning :math:`\hat\lambda = \sum_k c_k/\sum_k d_k` for all class indicators,
    :math:`c_k, d_k` the terms of each class's weighted :math:`\hat\lambda`
    (:func:`~bayeval.methods.judge.weighted.lambda_terms`), not clipped; uniform weights give
    :func:`bayeval.methods.judge.categories.ppi_pp_lambda`.

    Parameters
    ----------
    y, yhat, yhat_u, n_classes, w, v
        As :func:`rogan_gladen`.

    Examples
    --------
    >>> y, yh = [0, 0, 1, 1, 2, 2, 0], [0, 1, 1, 1, 2, 0, 0]
    >>> round(overall_lambda(y, yh, [0, 1, 2, 2, 0], 3, np.ones(7), np.ones(5)), 4)
    0.2149
    """
    y_l, h_l, h_u = (one_hot(a, n_classes) for a in (y, yhat, yhat_u))
    terms = np.sum([lambda_terms(Sample(y_l[:, k], h_l[:, k], h_u[:, k], w, v))
                    for k in range(n_classes)], axis=0)
    return float(terms[0] / terms[1])


def curve_by_name(y, s, s_u, n_classes: int, fold, curve: str, w=None, v=None) -> dict:
    r"""``classical`` and the ``eif`` with the cross-fitted curves :math:`\tilde\mu_k(s)` of
    each class indicator on a judge's score (module docstring), as thunks.

    Parameters
    ----------
    y : array of int, shape (m,)
        Class codes of the labelled items.
    s, s_u : numpy.ndarray
        The judge's scores of the labelled and unlabelled items.
    n_classes : int
    fold : array of int, shape (m,)
        The cross-fitting fold of each labelled item
        (:func:`~bayeval.methods.judge.curves.fold_ids`), the same for every class.
    curve : {"isotonic", "spline"}
    w, v : array-like, optional
        Sampling weights (default uniform), as :func:`weighted_by_name`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> score = rng.normal(size=600)
    >>> y = np.digitize(score + rng.normal(size=600), [-0.5, 0.5])  # 0, 1, 2 by a noisy score
    >>> fold = np.arange(100) % 5
    >>> est = curve_by_name(y[:100], score[:100], score[100:], 3, fold, "spline")["eif"]()
    >>> est.estimate.round(3).tolist(), round(float(est.estimate.sum()), 12)
    ([0.325, 0.278, 0.397], 1.0)
    """
    y_l = one_hot(y, n_classes)
    w = sampling_weights(w, y_l.shape[0], "sample_weight")
    v = sampling_weights(v, np.size(s_u), "sample_weight_unlabeled")
    fits = [cross_fitted(y_l[:, k], s, s_u, fold, curve) for k in range(n_classes)]
    mu_l, mu_u = (_normalised(np.column_stack([f[i] for f in fits])) for i in (0, 1))
    return {"classical": lambda: by_class(lambda a: weighted_mean(a, w), y_l),
            "eif": lambda: by_class(lambda a, b, c: eif_from_curve(a, b, c, w, v),
                                    y_l, mu_l, mu_u)}
