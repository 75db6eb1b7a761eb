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

**K classes.** The n labelled rows are n draws of the pair (true class, predicted class) from the
population's cell probabilities :math:`\pi_{kj}=P(Y=k,\hat Y=j)`, so the K x K confusion matrix
is :math:`C\sim\mathrm{Multinomial}(n,\pi)` and the Dirichlet prior
:math:`\pi\sim\mathrm{Dirichlet}(\alpha)` on the :math:`K^2` cells gives the posterior
:math:`\pi\mid C\sim\mathrm{Dirichlet}(\alpha+C)`. By the aggregation property this is the same
as a Dirichlet on the class prevalences, :math:`\mathrm{Dirichlet}(\sum_j\alpha_{kj})`, and
independent Dirichlets :math:`\mathrm{Dirichlet}(\alpha_{k\cdot})` on the rows
:math:`P(\hat Y=j\mid Y=k)`. Every metric of :mod:`bayeval.multiclass` is a function of
:math:`\pi` (homogeneous of degree 0), so exact independent posterior draws of :math:`\pi`
(normalised Gamma draws) give exact posterior draws of every metric (:func:`class_posterior`).
The prior :math:`(a, b)` is spread evenly over the diagonal and off-diagonal cells,
:math:`\alpha_{kk}=a/K`, :math:`\alpha_{kj}=b/(K(K-1))` (:func:`cell_prior`), so that accuracy's
prior is :math:`\mathrm{Beta}(a, b)` as with two classes; each class's recall and precision get
:math:`\mathrm{Beta}(a/K, b/K)`.
"""

from __future__ import annotations

import numpy as np
import scipy
import xarray as xr

from bayeval.intervals import beta_interval
from bayeval.metrics import PROPORTIONS, REGISTRY
from bayeval.multiclass import CLASS_METRICS, MULTICLASS_METRICS, matrix_value
from bayeval.sampling import draws_intervals
from bayeval.validation import as_seed

__all__ = ["CLASS_METRICS_ALL", "RATE_METRICS", "cell_draws", "cell_prior", "class_posterior",
           "counts", "metric_draws", "posterior"]

RATE_METRICS = PROPORTIONS
"""The rate metrics: binomial proportions of the rows (:data:`bayeval.metrics.PROPORTIONS`)."""

CLASS_METRICS_ALL = MULTICLASS_METRICS + CLASS_METRICS
"""The metrics of K classes: of the whole matrix, then per class
(:mod:`bayeval.multiclass`)."""


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


def cell_prior(prior, n_classes: int) -> np.ndarray:
    r"""The Dirichlet concentrations :math:`\alpha` (K x K) of the cell probabilities.

    A pair :math:`(a, b)` gives :math:`\alpha_{kk}=a/K` and :math:`\alpha_{kj}=b/(K(K-1))`
    (:math:`j\ne k`): accuracy, the sum of the diagonal cells, then has the prior
    :math:`\mathrm{Beta}(a, b)`. A K x K array is taken as it is.

    Examples
    --------
    >>> cell_prior((1.0, 1.0), 2)  # Jeffreys' Dirichlet(1/2, 1/2, 1/2, 1/2) on the 2 x 2 table
    array([[0.5, 0.5],
           [0.5, 0.5]])
    >>> cell_prior((3.0, 1.0), 3).round(4).tolist()[0]
    [1.0, 0.1667, 0.1667]
    """
    alpha = np.asarray(prior, dtype=float)
    if alpha.ndim == 2:
        return alpha
    a, b = alpha
    return np.where(np.eye(n_classes, dtype=bool), a / n_classes,
                    b / (n_classes * (n_classes - 1)))


def cell_draws(matrix, alpha, draws: int, rng: np.random.Generator) -> np.ndarray:
    r"""Independent draws of :math:`\pi\mid C\sim\mathrm{Dirichlet}(\alpha+C)`, (draws, K, K).

    Normalised Gamma draws: :math:`G_{kj}\sim\mathrm{Gamma}(\alpha_{kj}+C_{kj})`,
    :math:`\pi=G/\sum G`.

    Examples
    --------
    >>> pi = cell_draws([[8, 2], [1, 9]], np.full((2, 2), 0.5), 4000, np.random.default_rng(0))
    >>> pi.shape, round(float(pi[:, 0, 0].mean()), 2)  # Beta(8.5, 13.5): mean 0.39
    ((4000, 2, 2), 0.39)
    """
    g = rng.gamma(np.asarray(alpha, dtype=float) + np.asarray(matrix, dtype=float),
                  size=(draws, *np.shape(alpha)))
    return g / g.sum(axis=(-2, -1), keepdims=True)


def metric_draws(cells: np.ndarray, metrics) -> np.ndarray:
    """Draws of each metric from draws of the cell probabilities, shape (draws, metric, class).

    A per-class metric fills its row; a metric of the whole matrix is at the first class and
    NaN at the others (the ``class`` dimension is shared).

    Examples
    --------
    >>> cells = np.array([[[0.4, 0.1, 0.0], [0.1, 0.2, 0.0], [0.0, 0.0, 0.2]]])
    >>> metric_draws(cells, ["accuracy", "recall"]).round(3).tolist()
    [[[0.8, nan, nan], [0.8, 0.667, 1.0]]]
    """
    out = np.full((cells.shape[0], len(metrics), cells.shape[-1]), np.nan)
    for j, name in enumerate(metrics):
        if REGISTRY[name].classes == "per_class":
            out[:, j] = matrix_value(name, cells, np.nan)
        else:
            out[:, j, 0] = matrix_value(name, cells, np.nan)
    return out


def class_posterior(matrix, classes, *, metrics=CLASS_METRICS_ALL, prior=(1.0, 1.0),
                    draws: int = 20000, ci_prob=0.95, ci_kind="eti",
                    random_seed=None) -> xr.Dataset:
    r"""Posterior of the metrics of K classes: exact draws of :math:`\mathrm{Dirichlet}(\alpha+C)`.

    Parameters
    ----------
    matrix : array of int (K, K)
        The confusion matrix (rows true classes, columns predictions).
    classes : array (K,)
        The ``class`` coordinate.
    metrics : sequence of str
        Among :data:`CLASS_METRICS_ALL`.
    prior : (a, b) or array (K, K)
        :func:`cell_prior`.
    draws : int
        Independent posterior draws; the Monte-Carlo error of a mean is ``mcse``
        :math:`=\mathrm{sd}/\sqrt{\text{draws}}`.
    ci_prob, ci_kind
        The intervals' probability and kind, from the draws.
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    xarray.Dataset
        Over (``metric``, ``class``): ``mean``, ``sd``, ``lower``, ``upper``, ``mcse``; a metric
        of the whole matrix is at the first class, NaN at the others.

    Examples
    --------
    >>> ds = class_posterior([[40, 5, 5], [4, 30, 6], [1, 2, 7]], ["a", "b", "c"],
    ...                      metrics=["accuracy", "recall"], random_seed=0)
    >>> ds["mean"].round(2).values.tolist()  # accuracy Beta(1 + 77, 1 + 23): 0.7647
    [[0.76, nan, nan], [0.8, 0.75, 0.69]]
    """
    rng = as_seed(random_seed)
    matrix = np.asarray(matrix)
    values = metric_draws(cell_draws(matrix, cell_prior(prior, len(classes)), draws, rng),
                          list(metrics))
    da = xr.DataArray(values[None], dims=("chain", "draw", "metric", "class"),
                      coords={"metric": list(metrics), "class": np.asarray(classes)})
    ds = draws_intervals(da, ci_prob, ci_kind)
    ds["mcse"] = ds["sd"] / np.sqrt(draws)
    return ds
