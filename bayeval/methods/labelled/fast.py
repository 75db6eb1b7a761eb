r"""The closed form of fully labelled evaluation: each rate's conjugate Beta posterior.

With every label known, each proportion metric is a binomial rate: :math:`k` successes out of
:math:`m` trials, where (successes, trials) are

=============  ==================  ==================
metric         successes           trials
=============  ==================  ==================
accuracy       TP + TN             n
precision      TP                  TP + FP
recall         TP                  TP + FN
specificity    TN                  TN + FP
npv            TN                  TN + FN
=============  ==================  ==================

With the prior :math:`\theta_j \sim \mathrm{Beta}(a, b)` and the likelihood
:math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)` of the PyMC model
(:func:`bayeval.methods.labelled.models.model`), conjugacy gives
:math:`\theta_j \mid k_j \sim \mathrm{Beta}(a + k_j, b + m_j - k_j)`.
"""

from __future__ import annotations

import numpy as np
import scipy
import xarray as xr

from bayeval.intervals import beta_interval
from bayeval.metrics import PROPORTIONS

__all__ = ["RATE_METRICS", "counts", "posterior"]

RATE_METRICS = PROPORTIONS
"""The rate metrics: binomial proportions of the rows (:data:`bayeval.metrics.PROPORTIONS`)."""


def counts(tp, fp, fn, tn, metrics) -> tuple[np.ndarray, np.ndarray]:
    """(successes, trials) of each rate metric from the confusion counts.

    The table of the module docstring, e.g. recall: :math:`k=TP`, :math:`m=TP+FN`.

    Parameters
    ----------
    tp, fp, fn, tn : int
        The confusion counts.
    metrics : sequence of str
        Names among :data:`RATE_METRICS`.

    Returns
    -------
    successes, trials : numpy.ndarray
        int64, one per metric.

    Examples
    --------
    >>> counts(3, 1, 1, 2, ["accuracy", "precision", "recall"])
    (array([5, 3, 3]), array([7, 4, 4]))
    """
    table = {
        "accuracy": (tp + tn, tp + fp + fn + tn), "precision": (tp, tp + fp),
        "recall": (tp, tp + fn), "specificity": (tn, tn + fp), "npv": (tn, tn + fn),
    }
    k, m = zip(*(table[name] for name in metrics), strict=True)
    return np.asarray(k, dtype=np.int64), np.asarray(m, dtype=np.int64)


def posterior(successes, trials, *, metrics=RATE_METRICS, prior=(1.0, 1.0), ci_prob=0.95,
              ci_kind="eti") -> xr.Dataset:
    r"""Conjugate posterior :math:`\mathrm{Beta}(a+k, b+m-k)` per metric as a closed-form Dataset.

    Parameters
    ----------
    successes, trials : array of int, one per metric
    metrics : sequence of str
        Names of the rates (the ``metric`` coordinate).
    prior : (a, b)
        Beta prior shared by the rates.
    ci_prob : float
        Probability of the intervals.
    ci_kind : {"eti", "hdi"}
        Equal-tailed or highest-density intervals (:func:`bayeval.intervals.beta_interval`).

    Returns
    -------
    xarray.Dataset
        Over ``metric``: ``mean`` :math:`=\alpha/(\alpha+\beta)`, ``sd``
        :math:`=\sqrt{\alpha\beta/((\alpha+\beta)^2(\alpha+\beta+1))}`, ``lower``/``upper``
        (interval of ``ci_kind``), ``alpha``, ``beta``, ``successes``, ``trials``.

    Examples
    --------
    5 of 6 right and 3 of 3 precise, uniform prior: Beta(6, 2) and Beta(4, 1).

    >>> ds = posterior([5, 3], [6, 3], metrics=["accuracy", "precision"])
    >>> ds["mean"].values, ds["upper"].values.round(4)
    (array([0.75, 0.8 ]), array([0.9633, 0.9937]))
    """
    k, m = np.asarray(successes), np.asarray(trials)
    alpha, beta = prior[0] + k, prior[1] + m - k
    law = scipy.stats.beta(alpha, beta)
    bounds = np.array([beta_interval(a, b, ci_prob, ci_kind) for a, b in zip(alpha, beta,
                                                                               strict=True)])
    dims = ("metric",)
    return xr.Dataset(
        {"mean": (dims, law.mean()), "sd": (dims, law.std()), "lower": (dims, bounds[:, 0]),
         "upper": (dims, bounds[:, 1]), "alpha": (dims, alpha.astype(float)),
         "beta": (dims, beta.astype(float)), "successes": (dims, k), "trials": (dims, m)},
        coords={"metric": list(metrics)},
    )
