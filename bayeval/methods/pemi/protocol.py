r"""Baselines and the evaluation protocol of the missing-labels paper (Dervovic & Cashmore,
AISTATS 2025, §6).

* :func:`metric_values`: plain metrics of completed label vectors (any leading draw dimensions);
  :func:`complete_case` (drop the missing rows) and :func:`definitional_bounds` (every missing
  label imputed as the prediction, or as its opposite: the paper's optimistic/pessimistic
  imputations, which are *not* the metric's extremes over completions for ROC-AUC or F1);
* :func:`complete_case_bootstrap`: the paper's baseline, the bootstrap distribution of the metric
  on the labelled rows (multinomial resampling weights, vectorised over resamples);
* :func:`pit_normal`, :func:`pit_draws` (optionally randomised, for discrete laws),
  :func:`pit_distances` (KS and Wasserstein-1 of the PIT values to :math:`\mathcal U[0,1]`);
* :func:`replications`: stratified folds, a classifier per fold, a calibration split, each test
  fold's two halves masked in turn (MCAR or label-dependent MNAR through
  :func:`bayeval.datasets.mask_labels`), with the true metric and the true MNAR shift.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy

from bayeval.methods.pemi.fast import DEFAULT, Options
from bayeval.metrics import auc_value, counts_of, metric_value
from bayeval.validation import as_seed

__all__ = ["complete_case", "complete_case_bootstrap", "definitional_bounds", "metric_values",
           "pit_distances", "pit_draws", "pit_normal", "replications"]


def metric_values(scores: np.ndarray, labels: np.ndarray, y_pred: np.ndarray,
                  metrics: tuple[str, ...], opts: Options = DEFAULT) -> np.ndarray:
    """Metrics of full label vectors, shape ``labels.shape[:-1] + (len(metrics),)``.

    ROC-AUC of a label vector with one class is ``opts.zero_division`` (no error).

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
    labels : array of 0/1, shape (..., n)
        Complete label vectors (e.g. one per imputation).
    y_pred : numpy.ndarray of 0/1, shape (n,)
    metrics : tuple of str
    opts : bayeval.methods.pemi.fast.Options

    Returns
    -------
    numpy.ndarray, shape ``labels.shape[:-1] + (len(metrics),)``

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> y_pred = (s >= 0.5).astype(np.int8)
    >>> metric_values(s, np.array([[1, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1, 0]]), y_pred,
    ...               ("precision", "recall", "roc_auc")).round(4)
    array([[0.75  , 1.    , 0.8889],
           [0.5   , 0.6667, 0.4444]])
    """
    y = np.asarray(labels, dtype=np.int8)
    tp, fp, fn, tn = (np.asarray(c, float) for c in counts_of(y, np.asarray(y_pred)))
    cols = [np.asarray(auc_value(y.reshape(-1, y.shape[-1]), np.asarray(scores, float),
                                 opts.ties, opts.zero_division)).reshape(y.shape[:-1])
            if metric == "roc_auc" else
            metric_value(metric, tp, fp, fn, tn, opts.beta, opts.zero_division)
            for metric in metrics]
    return np.stack(np.broadcast_arrays(*cols), axis=-1)


def complete_case(scores, labels, y_pred, metrics, opts: Options = DEFAULT) -> np.ndarray:
    """The metrics on the labelled rows only (NaN labels dropped).

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Raw scores (ROC-AUC's ranking).
    labels : numpy.ndarray of float, shape (n,)
        0, 1 or NaN (missing).
    y_pred : numpy.ndarray of 0/1, shape (n,)
    metrics : tuple of str
    opts : bayeval.methods.pemi.fast.Options

    Returns
    -------
    numpy.ndarray, shape (len(metrics),)

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> y_pred = (s >= 0.5).astype(np.int8)
    >>> labels = np.array([1, np.nan, 0, 1, np.nan, 0])
    >>> complete_case(s, labels, y_pred, ("precision", "recall")).round(4)
    array([0.6667, 1.    ])
    """
    known = ~np.isnan(labels)
    return metric_values(scores[known], labels[known], y_pred[known], metrics, opts)


def definitional_bounds(scores, labels, y_pred, metrics,
                        opts: Options = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    r"""(optimistic, pessimistic): missing labels imputed as :math:`\psi_i`, or as :math:`1-\psi_i`.

    The paper's bounds (its §3), definitional only: for ROC-AUC and F1 they need not be the
    extremes of the metric over completions.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Raw scores (ROC-AUC's ranking).
    labels : numpy.ndarray of float, shape (n,)
        0, 1 or NaN (missing).
    y_pred : numpy.ndarray of 0/1, shape (n,)
    metrics : tuple of str
    opts : bayeval.methods.pemi.fast.Options

    Returns
    -------
    optimistic, pessimistic : numpy.ndarray, shape (len(metrics),)

    Examples
    --------
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> y_pred = (s >= 0.5).astype(np.int8)
    >>> labels = np.array([1, np.nan, 0, 1, np.nan, 0])
    >>> [b.round(4).tolist() for b in definitional_bounds(s, labels, y_pred, ("precision",))]
    [[0.75], [0.5]]
    """
    missing = np.isnan(labels)
    both = np.stack([np.where(missing, y_pred, labels), np.where(missing, 1 - y_pred, labels)])
    optimistic, pessimistic = metric_values(scores, both, y_pred, metrics, opts)
    return optimistic, pessimistic


def _weighted_auc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                  opts: Options) -> np.ndarray:
    r"""ROC-AUC of resamples given as row multiplicities ``weights`` (resamples x rows).

    :math:`\sum_g w^+_g(c^-_{<g}+t\,w^-_g)/(W^+W^-)` over tie groups :math:`g` in score order,
    with :math:`t` the tie weight.
    """
    order = np.argsort(scores, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(scores[order]) != 0])
    w = weights[:, order].astype(float)
    pos = np.add.reduceat(w * labels[order], starts, axis=1)
    neg = np.add.reduceat(w * (1 - labels[order]), starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    tie = 0.5 if opts.ties == "half" else 1.0
    num, den = (pos * (below + tie * neg)).sum(1), pos.sum(1) * neg.sum(1)
    out = np.full(num.shape, opts.zero_division)
    np.divide(num, den, out=out, where=den > 0)
    return out


def complete_case_bootstrap(scores, labels, y_pred, metrics, *, n_boot: int = 10_000,
                            random_seed=None, opts: Options = DEFAULT) -> np.ndarray:
    r"""Bootstrap distribution of the metrics on the labelled rows, shape (n_boot, metrics).

    The paper's baseline "Bootstrap :math:`M=0`" (Hesterberg 2015): each resample is a vector of
    multinomial row multiplicities :math:`w\sim\mathrm{Mult}(k,\mathbf 1/k)`, so
    :math:`TP=\sum_iw_iy_i\psi_i` etc. are matrix-vector products.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Raw scores (ROC-AUC's ranking).
    labels : numpy.ndarray of float, shape (n,)
        0, 1 or NaN (missing).
    y_pred : numpy.ndarray of 0/1, shape (n,)
    metrics : tuple of str
    opts : bayeval.methods.pemi.fast.Options
    n_boot : int
        Number of resamples.
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    numpy.ndarray, shape (n_boot, len(metrics))

    Examples
    --------
    Accuracy is 3/4 on the four labelled rows; its bootstrap sd is near
    :math:`\sqrt{0.75 \cdot 0.25 / 4} \approx 0.22`:

    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> y_pred = (s >= 0.5).astype(np.int8)
    >>> labels = np.array([1, np.nan, 0, 1, np.nan, 0])
    >>> draws = complete_case_bootstrap(s, labels, y_pred, ("accuracy",), n_boot=10_000,
    ...                                 random_seed=0)
    >>> draws.shape, round(float(draws.mean()), 2), round(float(draws.std()), 2)
    ((10000, 1), 0.75, 0.21)
    """
    known = ~np.isnan(labels)
    s, y, yp = scores[known], labels[known].astype(np.int64), y_pred[known].astype(np.int64)
    rng = as_seed(random_seed)
    w = rng.multinomial(y.size, np.full(y.size, 1.0 / y.size), size=n_boot)
    tp, fp, fn = w @ (y * yp), w @ ((1 - y) * yp), w @ (y * (1 - yp))
    tn = y.size - tp - fp - fn
    tp, fp, fn, tn = (np.asarray(c, float) for c in (tp, fp, fn, tn))
    cols = [_weighted_auc(s, y, w, opts) if metric == "roc_auc" else
            metric_value(metric, tp, fp, fn, tn, opts.beta, opts.zero_division)
            for metric in metrics]
    return np.stack(cols, axis=-1)


# --------------------------------------------------------------------------------- scoring
def pit_normal(truth, mean, sd) -> np.ndarray:
    r"""PIT :math:`\Phi((t-\mu)/\sigma)` of PEMI-Gauss; :math:`\sigma=0`: a step at :math:`\mu`.

    Parameters
    ----------
    truth, mean, sd : array-like
        True metric :math:`t` and the normal law's :math:`\mu`, :math:`\sigma` (broadcast).

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> pit_normal([0.7, 0.9, 0.5], 0.7, [0.1, 0.1, 0.0]).round(4)
    array([0.5   , 0.9772, 0.    ])
    """
    truth, mean, sd = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (truth, mean, sd)))
    z = np.divide(truth - mean, sd, out=np.where(truth >= mean, np.inf, -np.inf), where=sd > 0)
    return scipy.stats.norm.cdf(z)


def pit_draws(truth, draws, random_seed=None) -> np.ndarray:
    r"""PIT :math:`\hat F(t)` of predictive draws (last axis), the ECDF with ":math:`\le`".

    With ``random_seed`` given, the randomised PIT :math:`U\hat F(t^-)+(1-U)\hat F(t)`,
    :math:`U\sim\mathcal U[0,1]`, which is uniform for a correct discrete predictive law
    (Czado, Gneiting & Held 2009).

    Parameters
    ----------
    truth : array-like, shape (...)
        True metric values.
    draws : array-like, shape (..., S)
        Predictive draws.
    random_seed : int or numpy.random.Generator, optional
        Randomise the PIT (None: the plain ECDF).

    Returns
    -------
    numpy.ndarray, shape (...)

    Examples
    --------
    >>> float(pit_draws(0.5, [0.25, 0.5, 0.5, 0.75]))
    0.75
    >>> round(float(pit_draws(0.5, [0.25, 0.5, 0.5, 0.75], random_seed=0)), 4)  # in [1/4, 3/4]
    0.4315
    """
    draws = np.asarray(draws, dtype=float)
    t = np.asarray(truth, dtype=float)[..., None]
    at_most, below = (draws <= t).mean(-1), (draws < t).mean(-1)
    if random_seed is None:
        return at_most
    u = as_seed(random_seed).random(at_most.shape)
    return u * below + (1 - u) * at_most


def pit_distances(pit) -> tuple[float, float]:
    r"""(KS, :math:`W_1`) between the ECDF :math:`\hat F` of PIT values and :math:`\mathcal U[0,1]`.

    Exact for the step function: :math:`KS=\max_i\max(i/n-u_{(i)},u_{(i)}-(i-1)/n)` and
    :math:`W_1=\int_0^1|\hat F(t)-t|\,dt`, summed over the steps with
    :math:`\int_l^r|t-c|\,dt=\tfrac12[\operatorname{sgn}(r-c)(r-c)^2-\operatorname{sgn}(l-c)(l-c)^2]`.

    Parameters
    ----------
    pit : array-like of float in [0, 1]

    Returns
    -------
    ks, w1 : float

    Examples
    --------
    >>> pit_distances([0.25, 0.75])
    (0.25, 0.125)
    """
    u = np.sort(np.asarray(pit, dtype=float))
    n = u.size
    i = np.arange(1, n + 1)
    ks = float(np.maximum(i / n - u, u - (i - 1) / n).max())
    left, right, level = np.r_[0.0, u], np.r_[u, 1.0], np.arange(n + 1) / n
    a, b = right - level, left - level
    return ks, float(0.5 * (np.sign(a) * a**2 - np.sign(b) * b**2).sum())


# -------------------------------------------------------------------------------- protocol
def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, solver="newton-cholesky"))


def _split(train: np.ndarray, y: np.ndarray, calib_fraction: float, rng) -> tuple:
    """Training rows of the classifier and of the calibrator (stratified)."""
    from sklearn.model_selection import train_test_split

    return train_test_split(train, test_size=calib_fraction, stratify=y[train],
                            random_state=int(rng.integers(2**31)))


def _mask(y: np.ndarray, part: np.ndarray, p_m: float, mechanism: str, eta, rng) -> np.ndarray:
    """Missing-label mask over the fold: ``p_m`` of ``part`` masked by ``mask_labels``."""
    from bayeval.datasets import mask_labels  # imports scikit-learn: on first use

    masked = mask_labels(y[part], p_m=p_m, mechanism=mechanism, eta=eta,
                         random_seed=int(rng.integers(2**31)))
    mask = np.zeros(y.size, bool)
    mask[part[masked.mask]] = True
    return mask


def _true_delta(y: np.ndarray, part: np.ndarray, mask: np.ndarray) -> float:
    r""":math:`\log(r_1/r_0)`, :math:`r_y` the fraction of class :math:`y` masked in ``part``."""
    rates = [mask[part][y[part] == c].mean() for c in (1, 0)]
    return float(np.log(rates[0] / rates[1])) if min(rates) > 0 else float("nan")


def replications(X, y, *, n_folds: int = 10, n_repeats: int = 1, p_m: float = 0.3,
                 mechanism: str = "mcar", eta: float | None = None, mask_base: str = "subfold",
                 calib_fraction: float = 0.1, classifier: Callable[[], Any] = _logistic,
                 random_seed=None):
    r"""The paper's protocol (its §6): yields one Bunch per (repeat, fold, half).

    Stratified ``n_folds`` folds (``n_repeats`` times with new splits); the training rows are
    split into the classifier's (:math:`1-`\ ``calib_fraction``) and the calibration rows; the
    test fold is split at random into two halves and ``p_m`` of one half (``mask_base=
    "subfold"``, the paper's text) or of the fold's size taken from that half (``"fold"``) is
    masked, then the other half.

    Parameters
    ----------
    X, y : array-like
        Features (N, d) and 0/1 labels (N,).
    n_folds, n_repeats : int
        Stratified folds, and how many times to redo the split.
    p_m : float
        Fraction of labels masked.
    mechanism : {"mcar", "mnar"}
        As :func:`bayeval.datasets.mask_labels`; ``"mnar"`` needs ``eta``, the fraction of
        positives among the masked labels.
    mask_base : {"subfold", "fold"}
        What ``p_m`` is a fraction of.
    calib_fraction : float
        Share of the training rows kept for calibration.
    classifier : callable
        ``() -> estimator`` with ``fit``/``predict_proba`` (default: standardised logistic
        regression, C = 0.1).
    random_seed : int or numpy.random.Generator, optional

    Yields
    ------
    Bunch with ``fold`` (a counter over repeats and folds), ``scores`` (the fold's raw scores),
    ``labels`` (NaN where masked), ``y_true``, ``reference`` (calibration scores and labels),
    ``prevalence`` (of the training rows) and ``delta`` (the true MNAR shift
    :math:`\log(r_1/r_0)` relative to a map calibrated on the population; NaN under MCAR).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    >>> reps = list(replications(X, y, n_folds=2, p_m=0.5, mechanism="mnar", eta=0.8,
    ...                          random_seed=0))
    >>> len(reps), int(np.isnan(reps[0].labels).sum()), round(reps[0].delta, 2)
    (4, 25, 1.06)
    """
    from sklearn.model_selection import StratifiedKFold
    from sklearn.utils import Bunch

    X, y = np.asarray(X), np.asarray(y).astype(np.int8)
    rng = as_seed(random_seed)
    fold = 0
    for _ in range(n_repeats):
        folds = StratifiedKFold(n_folds, shuffle=True, random_state=int(rng.integers(2**31)))
        for train, test in folds.split(X, y):
            fold += 1
            fit_rows, cal_rows = _split(train, y, calib_fraction, rng)
            clf = classifier().fit(X[fit_rows], y[fit_rows])
            scores = clf.predict_proba(X[test])[:, 1]
            cal = (clf.predict_proba(X[cal_rows])[:, 1], y[cal_rows])
            yt = y[test]
            halves = np.array_split(rng.permutation(test.size), 2)
            for half in halves:
                frac = p_m if mask_base == "subfold" else min(p_m * test.size / half.size, 1.0)
                mask = _mask(yt, half, frac, mechanism, eta, rng)
                delta = _true_delta(yt, half, mask) if mechanism == "mnar" else float("nan")
                yield Bunch(fold=fold, scores=scores, labels=np.where(mask, np.nan, yt), y_true=yt,
                            reference=cal, prevalence=float(y[fit_rows].mean()), delta=delta)
