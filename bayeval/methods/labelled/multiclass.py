r"""Fully labelled evaluation of K classes: the Dirichlet–multinomial confusion matrix.

:func:`labelled_classes` is what :func:`bayeval.labelled` runs when the labels, predictions or
scores are not those of two classes 0 and 1 (:func:`bayeval.classes.binary_input`). The cell
probabilities :math:`\pi` of the K x K confusion matrix get the Dirichlet posterior
:math:`\mathrm{Dirichlet}(\alpha+C)` (:mod:`bayeval.methods.labelled.fast`); every metric of
:mod:`bayeval.multiclass` is a function of :math:`\pi`, so exact independent draws of
:math:`\pi` give its posterior. The PyMC model is
:func:`~bayeval.methods.labelled.models.dirichlet_model`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayeval.class_results import ClassEvaluation
from bayeval.classes import as_class_scores, class_coordinate, column_classes, encode
from bayeval.evaluation import CI_KINDS
from bayeval.methods.labelled.fast import CLASS_METRICS_ALL, class_posterior, metric_draws
from bayeval.methods.labelled.models import model
from bayeval.multiclass import matrix_of
from bayeval.sampling import sample
from bayeval.validation import (
    as_choice,
    as_ci_prob,
    as_metrics,
    as_positive_int,
    as_prior,
    as_sample_kwargs,
    as_seed,
    check_classes,
    describe,
)

__all__ = ["LabelledClasses", "labelled_classes"]

METHODS = ("exact", "pymc", "both")
SAMPLE_DEFAULTS = {"target_accept": 0.95, "draws": 3000}
r"""NUTS' defaults here: a cell with no row has the posterior Dirichlet marginal
:math:`\mathrm{Beta}(\alpha_{kj},\cdot)` with :math:`\alpha_{kj}<1`, whose logarithm has a long
left tail, so the chains need a smaller step and more draws for ESS above 400."""
ASSUMPTIONS = ("The labelled rows are a random sample of the population the model is used on, "
               "and the labels are correct. The cell probabilities of the K x K confusion "
               "matrix get a Dirichlet prior and a multinomial likelihood; intervals are "
               "credible intervals for the population metrics.")


class LabelledClasses(ClassEvaluation, method="labelled_multiclass"):
    """The result of :func:`bayeval.labelled` with K classes (a :class:`ClassEvaluation`).

    Examples
    --------
    >>> import bayeval as be
    >>> ev = be.labelled(labels=["x", "y", "z"] * 4, y_pred=["x", "y", "y"] * 4, random_seed=0)
    >>> type(ev).__name__, ev.closed_form["class"].values.tolist()
    ('LabelledClasses', ['x', 'y', 'z'])
    """


def _cell_prior(prior: Any, n_classes: int) -> Any:
    """A pair (a, b) (:func:`bayeval.validation.as_prior`) or a K x K array of positive
    concentrations."""
    if np.ndim(prior) != 2:
        return as_prior(prior)
    alpha = np.asarray(prior, dtype=float)
    if alpha.shape != (n_classes, n_classes) or not (np.isfinite(alpha).all()
                                                     and (alpha > 0).all()):
        raise ValueError(f"prior must be a pair (a, b) of positive numbers or a {n_classes} x "
                         f"{n_classes} array of positive Dirichlet concentrations; got "
                         f"{describe(prior)}.")
    return alpha


def labelled_classes(scores=None, labels=None, *, y_pred=None, metrics=None, prior=(1.0, 1.0),
                     method: str = "exact", ci_prob: float = 0.95, ci_kind: str = "eti",
                     random_seed: int | None = None, draws: int = 20000,
                     sample_kwargs: dict[str, Any] | None = None) -> LabelledClasses:
    r"""Posterior of the metrics of K classes from labelled data.

    Parameters
    ----------
    scores : array-like or DataFrame (n, K), optional
        Class probabilities (:func:`bayeval.classes.as_class_scores`); the prediction is the
        class of the largest, unless ``y_pred`` is given. A DataFrame's columns are the classes.
    labels : array-like (n,)
        The true classes, of any hashable type (:func:`bayeval.classes.encode`).
    y_pred : array-like (n,), optional
        The predicted classes (needed when ``scores`` is None).
    metrics : sequence of str, optional
        Among :data:`~bayeval.methods.labelled.fast.CLASS_METRICS_ALL` (default: all).
    prior : (a, b) or array (K, K)
        Dirichlet prior of the cells (:func:`~bayeval.methods.labelled.fast.cell_prior`): the
        pair gives accuracy the prior Beta(a, b).
    method : {"exact", "pymc", "both"}
        Exact posterior draws, NUTS on the Dirichlet–multinomial model, or both with
        :meth:`~bayeval.evaluation.Evaluation.check`.
    draws : int
        Exact posterior draws of the fast path.
    sample_kwargs : dict, optional
        Passed to ``pm.sample``, over :data:`SAMPLE_DEFAULTS`.

    Returns
    -------
    LabelledClasses
        ``closed_form`` (:func:`~bayeval.methods.labelled.fast.class_posterior`) and/or
        ``posterior`` (``cells`` and the metrics ``theta``, dims ``metric``, ``class``).

    Raises
    ------
    ValueError
        For invalid labels, scores or predictions, a length mismatch, an unknown metric or
        method, or an invalid prior.

    Examples
    --------
    >>> ev = labelled_classes(labels=[0, 1, 2, 2, 1, 0] * 10, y_pred=[0, 1, 2, 1, 1, 0] * 10,
    ...                       metrics=["accuracy", "cohen_kappa"], random_seed=0)
    >>> ev.summary()["mean"].round(3).tolist()  # accuracy: Beta(1 + 50, 1 + 10), mean 0.8226
    [0.822, 0.731]
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    metrics = as_metrics(metrics, CLASS_METRICS_ALL, CLASS_METRICS_ALL)
    draws = as_positive_int(draws, "draws", least=100)
    rng = as_seed(random_seed)
    sample_kwargs = ({**SAMPLE_DEFAULTS, **as_sample_kwargs(sample_kwargs)}
                     if method != "exact" else None)
    if y_pred is None:
        if scores is None:
            raise ValueError("labelled needs y_pred or scores; got neither.")
        s, named = as_class_scores(scores)
        classes = column_classes(labels, named, s.shape[1])
        y, _, classes = encode(labels, classes=classes)
        yp = s.argmax(axis=1)
    else:
        y, yp, classes = encode(labels, y_pred)
    check_classes(len(classes), 2 * draws, "labels",  # the draws of the cells and metrics
                  "use fewer draws, or merge classes")
    prior = _cell_prior(prior, len(classes))
    matrix = matrix_of(y, yp, len(classes))
    coord = class_coordinate(classes)
    data = xr.Dataset({"n": len(y), "confusion": (("true", "predicted"), matrix)},
                      coords={"true": coord, "predicted": coord})
    what = (f"({prior[0]:g}, {prior[1]:g})" if isinstance(prior, tuple) else "(K x K)")
    common = dict(method="labelled_multiclass", variant=method, ci_prob=ci_prob,
                  ci_kind=ci_kind, random_seed=random_seed, data=data, assumptions=ASSUMPTIONS,
                  description=f"population metrics of {len(classes)} classes from {len(y)} "
                              f"labelled rows, Dirichlet prior {what} on the cells")
    closed = class_posterior(matrix, coord, metrics=metrics, prior=prior, draws=draws,
                             ci_prob=ci_prob, ci_kind=ci_kind, random_seed=rng)
    if method == "exact":
        return LabelledClasses.create(closed_form=closed, iid_draws=True, **common)
    pm_model = model(matrix, coord, prior=prior, variant="dirichlet")
    tree = sample(pm_model, random_seed, sample_kwargs)
    post = tree["posterior"].to_dataset()
    cells = post["cells"].transpose("chain", "draw", "true", "predicted").values
    theta = metric_draws(cells.reshape(-1, *cells.shape[2:]), metrics)
    post["theta"] = (("chain", "draw", "metric", "class"),
                     theta.reshape(*cells.shape[:2], *theta.shape[1:]))
    post = post.assign_coords(metric=list(metrics), **{"class": coord})
    tree["posterior"] = xr.DataTree(post)
    return LabelledClasses.create(closed_form=closed if method == "both" else None, draws=tree,
                                  estimand="posterior/theta", model=pm_model, **common)
