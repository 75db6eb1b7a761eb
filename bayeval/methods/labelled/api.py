r"""Fully labelled evaluation: the posterior of a classifier's population rates.

Every label is known, so each proportion metric (accuracy, precision, recall, specificity,
NPV) is a binomial rate with a Beta prior: the conjugate closed form is in
:mod:`~bayeval.methods.labelled.fast`, the PyMC model in :mod:`~bayeval.methods.labelled.models`.
This is the baseline that the other methods reduce to when all labels are present. Labels of
K classes (other values than 0 and 1, or scores of several columns) go to
:func:`~bayeval.methods.labelled.multiclass.labelled_classes`.
"""

from __future__ import annotations

from typing import Any

import xarray as xr

from bayeval.classes import binary_input
from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.methods.labelled.fast import RATE_METRICS, counts, posterior
from bayeval.methods.labelled.models import model
from bayeval.methods.labelled.multiclass import labelled_classes
from bayeval.metrics import counts_of
from bayeval.sampling import sample
from bayeval.validation import (
    aligned,
    as_binary,
    as_choice,
    as_ci_prob,
    as_metrics,
    as_predictions,
    as_prior,
    as_sample_kwargs,
    as_scores,
    as_threshold,
    named_columns,
)

__all__ = ["labelled"]

METHODS = ("exact", "pymc", "both")
ASSUMPTIONS = ("The labelled rows are a random sample of the population the model is used on, "
               "and the labels are correct. Each rate gets a Beta prior and a binomial "
               "likelihood; intervals are credible intervals for the population rate.")


def labelled(scores=None, labels=None, *, y_pred=None, data=None, threshold: float = 0.5,
             metrics=None,
             prior=(1.0, 1.0), method: str = "exact", ci_prob: float = 0.95,
             ci_kind: str = "eti", random_seed: int | None = None,
             sample_kwargs: dict[str, Any] | None = None, draws: int = 20000) -> Evaluation:
    r"""Posterior of accuracy, precision, recall, specificity and NPV from labelled data.

    Parameters
    ----------
    scores : array-like of float in [0, 1], optional
        Scores of the positive class; ``y_pred = scores >= threshold`` unless ``y_pred`` given.
        pandas Series pair with each other by index, arrays and lists by position
        (:func:`bayeval.validation.aligned`). Or a column name of ``data`` (a list of names
        for the (n, K) scores of K classes).
    labels : array-like of 0/1
        The true labels, or a column name of ``data``. Labels of K classes (any hashable
        values, a pandas Categorical), or (n, K) class probabilities as ``scores``, run
        :func:`~bayeval.methods.labelled.multiclass.labelled_classes` with the arguments given
        here: the Dirichlet–multinomial confusion matrix and the metrics of K classes.
    y_pred : array-like of 0/1, optional
        The predictions (needed when ``scores`` is None), or a column name of ``data``.
    data : table, optional
        A pandas DataFrame or pyarrow Table whose columns the arguments above name
        (:mod:`bayeval.validation.tables`).
    metrics : sequence of str, optional
        Among ``accuracy``, ``precision``, ``recall``, ``specificity``, ``npv`` (default: all).
    prior : (a, b)
        Beta prior of every rate (default uniform).
    method : {"exact", "pymc", "both"}
        Conjugate closed form, NUTS on :func:`~bayeval.methods.labelled.models.model`, or
        both with :meth:`Evaluation.check`.
    sample_kwargs : dict, optional
        Passed to ``pm.sample`` (draws, tune, chains...).
    draws : int
        K classes only: the exact posterior draws of the fast path.

    Returns
    -------
    Evaluation
        With ``closed_form`` (:func:`~bayeval.methods.labelled.fast.posterior`) and/or
        ``posterior`` (variable ``theta``, dim ``metric``).

    Raises
    ------
    ValueError
        For invalid labels, scores or predictions, a length mismatch or pandas indexes that
        differ, an unknown metric or method, a prior that is not two finite positive
        numbers, or unsound sampler settings (:func:`bayeval.validation.as_sample_kwargs`).

    Examples
    --------
    >>> import bayeval as be
    >>> ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    >>> round(float(ev.summary().loc["accuracy", "mean"]), 4)  # Beta(1 + 5, 1 + 1)
    0.75
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1, 0, 1, 1, 0, 1], "pred": [1, 0, 0, 1, 0, 1]})
    >>> round(float(be.labelled(labels="y", y_pred="pred", data=df).summary().loc[
    ...     "accuracy", "mean"]), 4)
    0.75
    """
    scores, labels, y_pred = named_columns(data, scores=scores, labels=labels, y_pred=y_pred)
    if not binary_input(scores, labels, y_pred):  # K classes
        scores, labels, y_pred = aligned(scores=scores, labels=labels, y_pred=y_pred)
        return labelled_classes(scores, labels, y_pred=y_pred, metrics=metrics, prior=prior,
                                method=method, ci_prob=ci_prob, ci_kind=ci_kind,
                                random_seed=random_seed, draws=draws,
                                sample_kwargs=sample_kwargs)
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = as_metrics(metrics, RATE_METRICS, RATE_METRICS)
    threshold = as_threshold(threshold)
    a, b = as_prior(prior)
    sample_kwargs = as_sample_kwargs(sample_kwargs) if method != "exact" else None
    scores, labels, y_pred = aligned(scores=scores, labels=labels, y_pred=y_pred)
    labels = as_binary(labels, "labels")
    scores = None if scores is None or y_pred is not None else as_scores(scores, "scores")
    y_pred = as_predictions(y_pred, scores, threshold)

    tp, fp, fn, tn = counts_of(labels, y_pred)
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
