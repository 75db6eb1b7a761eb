r"""Fully labelled evaluation: the posterior of a classifier's population rates.

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

Model (``model``): :math:`\theta_j \sim \mathrm{Beta}(a, b)`,
:math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`, independently per metric :math:`j` (the
likelihood of each rate is its own binomial; the joint law of the counts is not used).
Fast path (conjugacy): :math:`\theta_j \mid k_j \sim \mathrm{Beta}(a + k_j, b + m_j - k_j)`.
This is the baseline that the other methods reduce to when all labels are present, and the
reference model of the catalogue (``models/labelled_beta_binomial``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from bayeval import metrics as M
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.intervals import beta_interval
from bayeval.sampling import sample
from bayeval.validation import (
    as_binary,
    as_choice,
    as_ci_prob,
    as_scores,
    check_same_length,
)

__all__ = ["RATE_METRICS", "counts", "labelled", "model", "posterior"]

RATE_METRICS = ("accuracy", "precision", "recall", "specificity", "npv")
METHODS = ("exact", "pymc", "both")
ASSUMPTIONS = ("The labelled rows are a random sample of the population the model is used on, "
               "and the labels are correct. Each rate gets a Beta prior and a binomial "
               "likelihood; intervals are credible intervals for the population rate.")


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


def model(successes, trials, *, metrics=RATE_METRICS, prior=(1.0, 1.0)):
    r"""The PyMC model: independent Beta–Binomial rates, one per metric.

    :math:`\theta_j \sim \mathrm{Beta}(a, b)`, :math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`.

    Parameters
    ----------
    successes, trials : array of int, one per metric
    metrics : sequence of str
        Names of the rates (the ``metric`` coordinate).
    prior : (a, b)
        Beta prior shared by the rates.

    Returns
    -------
    pymc.Model
        Free variable ``theta`` (dim ``metric``), observed ``successes``.

    Examples
    --------
    >>> m = model([5, 3], [7, 4], metrics=["accuracy", "recall"], prior=(2, 2))
    >>> [rv.name for rv in m.free_RVs], [rv.name for rv in m.observed_RVs]
    (['theta'], ['successes'])
    >>> m.named_vars_to_dims["theta"], m.coords["metric"]
    (('metric',), ('accuracy', 'recall'))
    """
    import pymc as pm

    with pm.Model(coords={"metric": list(metrics)}) as m:
        theta = pm.Beta("theta", alpha=prior[0], beta=prior[1], dims="metric")
        pm.Binomial("successes", n=np.asarray(trials), p=theta, observed=np.asarray(successes),
                    dims="metric")
    return m


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
    law = stats.beta(alpha, beta)
    bounds = np.array([beta_interval(a, b, ci_prob, ci_kind) for a, b in zip(alpha, beta,
                                                                               strict=True)])
    dims = ("metric",)
    return xr.Dataset(
        {"mean": (dims, law.mean()), "sd": (dims, law.std()), "lower": (dims, bounds[:, 0]),
         "upper": (dims, bounds[:, 1]), "alpha": (dims, alpha.astype(float)),
         "beta": (dims, beta.astype(float)), "successes": (dims, k), "trials": (dims, m)},
        coords={"metric": list(metrics)},
    )


def labelled(scores=None, labels=None, *, y_pred=None, threshold: float = 0.5, metrics=None,
             prior=(1.0, 1.0), method: str = "exact", ci_prob: float = 0.95,
             ci_kind: str = "eti", random_seed: int | None = None,
             sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""Posterior of accuracy, precision, recall, specificity and NPV from labelled data.

    Parameters
    ----------
    scores : array-like of float in [0, 1], optional
        Scores of the positive class; ``y_pred = scores >= threshold`` unless ``y_pred`` given.
    labels : array-like of 0/1
        The true labels.
    y_pred : array-like of 0/1, optional
        The predictions (needed when ``scores`` is None).
    metrics : sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``specificity``, ``npv`` (default: all).
    prior : (a, b)
        Beta prior of every rate (default uniform).
    method : {"exact", "pymc", "both"}
        Conjugate closed form, NUTS on :func:`model`, or both with :meth:`Evaluation.check`.
    sample_kwargs : dict, optional
        Passed to ``pm.sample`` (draws, tune, chains...).

    Returns
    -------
    Evaluation
        With ``closed_form`` (:func:`posterior`) and/or ``posterior`` (variable ``theta``, dim
        ``metric``).

    Raises
    ------
    ValueError
        For invalid labels, scores or predictions, a length mismatch, an unknown metric or
        method, or a prior that is not two positive numbers.

    Examples
    --------
    >>> import bayeval as be
    >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    >>> round(float(ev.summary().loc["accuracy", "mean"]), 4)  # Beta(1 + 5, 1 + 1)
    0.75
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = tuple(RATE_METRICS if metrics is None else
                    [as_choice(m, "metrics", RATE_METRICS) for m in np.atleast_1d(metrics)])
    a, b = (float(v) for v in prior)
    if not (a > 0 and b > 0):
        raise ValueError(f"prior must be two positive Beta parameters (a, b), got {prior!r}.")
    labels = as_binary(labels, "labels")
    if y_pred is None:
        if scores is None:
            raise ValueError("give scores (with threshold) or y_pred; both are None.")
        y_pred = (as_scores(scores, "scores") >= threshold).astype(np.int8)
    else:
        y_pred = as_binary(y_pred, "y_pred")
    check_same_length(labels=labels, y_pred=y_pred)

    tp, fp, fn, tn = M.confusion_counts(labels, y_pred)
    k, m = counts(tp, fp, fn, tn, metrics)
    data = xr.Dataset({"n": len(labels), "n_positive": int(labels.sum()),
                       "n_predicted_positive": int(y_pred.sum())})
    common = dict(method="labelled", variant=method, ci_prob=ci_prob, ci_kind=ci_kind,
                  random_seed=random_seed, data=data, assumptions=ASSUMPTIONS,
                  description=f"population rates from {len(labels)} labelled rows, "
                              f"Beta({a:g}, {b:g}) prior")
    closed = posterior(k, m, metrics=metrics, prior=(a, b), ci_prob=ci_prob, ci_kind=ci_kind)
    if method == "exact":
        return Evaluation.create(closed_form=closed, **common)
    pm_model = model(k, m, metrics=metrics, prior=(a, b))
    draws = sample(pm_model, random_seed, sample_kwargs)
    return Evaluation.create(closed_form=closed if method == "both" else None, draws=draws,
                             estimand="posterior/theta", model=pm_model, **common)
