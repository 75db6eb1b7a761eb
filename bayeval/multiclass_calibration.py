r"""The multinomial Platt map of K classes and its posterior, by importance sampling.

The map is Platt scaling on the log class probabilities,

.. math:: p_{ik}(a,b)=\frac{\exp(a_k+b\log s_{ik})}{\sum_j\exp(a_j+b\log s_{ij})},
          \qquad a_0=0,\ b>0,

the restriction :math:`W=bI` of Dirichlet calibration (Kull et al., NeurIPS 2019): one slope
shared by the classes and one intercept per class, jointly normalised, so that a class's
probability depends on every score of the row. With K = 2 it is the binary Platt map
:math:`\sigma(a_1+b\operatorname{logit}s_{i1})`. Its priors are
:math:`a_k\sim\mathcal N(\mu_a,s_a^2)` for :math:`k\ge1` and
:math:`\log b\sim\mathcal N(\mu_b,s_b^2)` (:data:`PRIOR_A`, :data:`PRIOR_LOG_B` by default), and
the labelled rows are observed as :math:`y_j\sim\mathrm{Cat}(p_j(a,b))`. :func:`posterior` draws
its posterior without MCMC (Laplace approximation, then importance sampling); PEMI and CBPE of K
classes both use it.

:func:`select_map` chooses among K-class maps on held-out folds by the multiclass Brier score
(Brier 1950), :math:`\mathrm{BS}_i=\sum_k(p_{ik}-\mathbb 1\{y_i=k\})^2`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from bayeval.calibration import stratified_folds
from bayeval.validation import as_seed

__all__ = ["PRIOR_A", "PRIOR_LOG_B", "MultinomialMap", "PlattPosterior", "brier_scores",
           "log_scores", "multinomial_map", "platt_probabilities", "posterior",
           "select_map"]

PRIOR_A = (0.0, 1.5)
"""Default prior (mean, sd) of every intercept :math:`a_k`, :math:`k\\ge1`."""
PRIOR_LOG_B = (0.0, 0.5)
"""Default prior (mean, sd) of the log slope :math:`\\log b`."""
#: importance draws of :func:`posterior`
DRAWS = 400
#: degrees of freedom of the multivariate t proposal
PROPOSAL_DF = 4
_ROWS = 1 << 20  # cells (draws x rows x classes) per chunk of the log likelihood


def log_scores(scores: np.ndarray) -> np.ndarray:
    r""":math:`\log\max(s,10^{-12})`, the input of the map.

    Examples
    --------
    >>> log_scores(np.array([[1.0, 0.0]])).round(2).tolist()
    [[0.0, -27.63]]
    """
    return np.log(np.maximum(scores, 1e-12))


def platt_probabilities(x: np.ndarray, a: np.ndarray, b: np.ndarray,
                        delta: np.ndarray | None = None) -> np.ndarray:
    r""":math:`p_{ik}\propto\exp(a_k+b\,x_{ik}+\delta_k)` for draws of the map.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, K)
        Log scores (:func:`log_scores`).
    a : numpy.ndarray, shape (S, K)
        Intercepts, :math:`a_0=0`.
    b : numpy.ndarray, shape (S,)
        Slopes.
    delta : numpy.ndarray, shape (S, K), optional
        MNAR shifts.

    Returns
    -------
    numpy.ndarray, shape (S, n, K)

    Examples
    --------
    >>> x = log_scores(np.array([[0.2, 0.8]]))
    >>> platt_probabilities(x, np.zeros((1, 2)), np.ones(1)).round(3).tolist()
    [[[0.2, 0.8]]]
    >>> platt_probabilities(x, np.zeros((1, 2)), np.ones(1), np.log([[1.0, 4.0]])).round(3)[0]
    array([[0.059, 0.941]])
    """
    z = _logits(x, a, b, delta)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


def _logits(x: np.ndarray, a: np.ndarray, b: np.ndarray, delta: np.ndarray | None = None
            ) -> np.ndarray:
    r""":math:`z_{sik}=a_{sk}+b_s x_{ik}(+\delta_{sk})` less each row's largest, (S, n, K):
    their exponentials are at most 1 and their softmax is the same (a new array, written in
    place: SciPy's ``softmax`` and ``logsumexp`` take several times as long)."""
    z = b[:, None, None] * x[None]
    z += a[:, None, :] if delta is None else (a + delta)[:, None, :]
    z -= z.max(axis=-1, keepdims=True)
    return z


class PlattPosterior(NamedTuple):
    r"""Weighted draws of the map's posterior (:func:`posterior`).

    Attributes
    ----------
    a : numpy.ndarray, shape (S, K)
        Intercepts (:math:`a_0=0`).
    b : numpy.ndarray, shape (S,)
        Slopes.
    weights : numpy.ndarray, shape (S,)
        Self-normalised importance weights, summing to 1.
    mode : (numpy.ndarray, float)
        The posterior mode :math:`(a, b)`: the fitted map.

    Examples
    --------
    >>> post = PlattPosterior(np.zeros((2, 2)), np.ones(2), np.full(2, 0.5), (np.zeros(2), 1.0))
    >>> post.size, post.ess
    (2, 2.0)
    """

    a: np.ndarray
    b: np.ndarray
    weights: np.ndarray
    mode: tuple[np.ndarray, float]

    @property
    def size(self) -> int:
        """Number of draws :math:`S`."""
        return self.b.size

    @property
    def ess(self) -> float:
        r"""Kish's effective sample size :math:`1/\sum_s w_s^2`."""
        return float(1.0 / np.sum(self.weights**2))


def _unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a with a_0 = 0, b) from rows of (a_1..a_{K-1}, log b)."""
    theta = np.atleast_2d(theta)
    return np.column_stack([np.zeros(theta.shape[0]), theta[:, :-1]]), np.exp(theta[:, -1])


def _log_posterior(theta: np.ndarray, x: np.ndarray, y: np.ndarray, prior_a, prior_log_b
                   ) -> np.ndarray:
    r"""Log posterior of rows of :math:`\theta=(a_1..a_{K-1},\log b)`, up to a constant."""
    from scipy import stats

    a, b = _unpack(theta)
    own = x[np.arange(y.size), y]
    counts = np.bincount(y, minlength=x.shape[1])
    out = a @ counts + b * own.sum()
    step = max(1, _ROWS // max(x.size, 1))
    for start in range(0, b.size, step):
        rows = slice(start, start + step)
        z = b[rows, None, None] * x[None]
        z += a[rows, None, :]
        top = z.max(axis=-1)
        z -= top[..., None]
        np.exp(z, out=z)
        out[rows] -= (np.log(z.sum(axis=-1)) + top).sum(axis=1)
    prior = (stats.norm.logpdf(theta[..., :-1], *prior_a).sum(axis=-1)
             + stats.norm.logpdf(theta[..., -1], *prior_log_b))
    return out + prior


def _gradient(theta: np.ndarray, x: np.ndarray, y: np.ndarray, prior_a, prior_log_b
              ) -> np.ndarray:
    """Gradient of :func:`_log_posterior` at one theta."""
    a, b = _unpack(theta)
    p = special.softmax(a[0] + b[0] * x, axis=-1)
    resid = -p
    resid[np.arange(y.size), y] += 1.0
    grad_a = resid.sum(axis=0)[1:] - (theta[:-1] - prior_a[0]) / prior_a[1] ** 2
    grad_c = b[0] * np.sum(resid * x) - (theta[-1] - prior_log_b[0]) / prior_log_b[1] ** 2
    return np.r_[grad_a, grad_c]


def _mode(x, y, prior_a, prior_log_b, start=None) -> tuple[np.ndarray, np.ndarray]:
    """The posterior mode and the Hessian there (central differences of the gradient): BFGS
    from ``start`` (default 0) to a gradient of 1e-6, then a Newton step, which ends where
    the log posterior's rounding leaves a line search nothing to find."""
    from scipy import optimize

    def hessian(theta):
        h = 1e-5
        hess = np.array([(_gradient(theta + h * e, x, y, prior_a, prior_log_b)
                          - _gradient(theta - h * e, x, y, prior_a, prior_log_b)) / (2 * h)
                         for e in np.eye(theta.size)])
        return (hess + hess.T) / 2

    k = x.shape[1]
    theta = optimize.minimize(lambda t: -_log_posterior(t, x, y, prior_a, prior_log_b)[0],
                              np.zeros(k) if start is None else start,
                              jac=lambda t: -_gradient(t, x, y, prior_a, prior_log_b),
                              method="BFGS", options={"gtol": 1e-6}).x
    theta = theta - np.linalg.solve(hessian(theta), _gradient(theta, x, y, prior_a, prior_log_b))
    return theta, hessian(theta)


def posterior(cal_scores: np.ndarray, cal_labels: np.ndarray, *, draws: int = DRAWS,
              prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B, random_seed: Any = None
              ) -> PlattPosterior:
    r"""Importance draws of the posterior of the multinomial Platt map (module docstring).

    The proposal is a multivariate :math:`t_4` centred at the posterior mode of
    :math:`\theta=(a_1,\dots,a_{K-1},\log b)` with the inverse of the negative Hessian there
    (the Laplace approximation, with heavier tails); the draws' weights are
    :math:`w_s\propto\pi(\theta_s\mid\text{data})/q(\theta_s)`, self-normalised, so expectations
    under the weighted draws converge to those of the exact posterior.

    Parameters
    ----------
    cal_scores : numpy.ndarray, shape (n, K)
        Class probabilities of the labelled rows.
    cal_labels : numpy.ndarray, shape (n,)
        Their classes' codes 0..K-1.
    draws : int
        Number of importance draws :math:`S`.
    prior_a, prior_log_b : (mean, sd)
        Normal priors of every intercept :math:`a_k` (:math:`k\ge1`) and of :math:`\log b`.
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    PlattPosterior

    Examples
    --------
    Scores that are too confident (the labels follow :math:`s^{1/2}`) get a slope below 1:

    >>> rng = np.random.default_rng(0)
    >>> s = rng.dirichlet([1, 1, 1], 2000)
    >>> true = s**0.5 / (s**0.5).sum(axis=1, keepdims=True)
    >>> y = (rng.random(2000)[:, None] > true.cumsum(axis=1)).sum(axis=1)
    >>> post = posterior(s, y, random_seed=1)
    >>> round(float(post.weights @ post.b), 1), post.ess > 300
    (0.5, True)
    """
    from scipy import stats

    x = log_scores(cal_scores)
    mode, hess = _mode(x, cal_labels, prior_a, prior_log_b)
    cov = np.linalg.inv(-hess)
    proposal = stats.multivariate_t(loc=mode, shape=cov, df=PROPOSAL_DF)
    theta = np.atleast_2d(proposal.rvs(size=draws, random_state=np.random.default_rng(
        random_seed)))
    log_w = _log_posterior(theta, x, cal_labels, prior_a, prior_log_b) - proposal.logpdf(theta)
    weights = np.exp(log_w - log_w.max())
    a, b = _unpack(theta)
    mode_a, mode_b = _unpack(mode)
    return PlattPosterior(a, b, weights / weights.sum(), (mode_a[0], float(mode_b[0])))


class MultinomialMap(NamedTuple):
    r"""The multinomial Platt map fitted on a reference: its mode :math:`(a, b)` and
    :math:`M` equally weighted draws of its posterior (none for the plug-in).

    Examples
    --------
    >>> m = MultinomialMap(np.zeros(2), 2.0, np.zeros((3, 2)), np.full(3, 2.0))
    >>> m.predict(np.array([[0.2, 0.8]])).round(3).tolist(), m.draws, m.name
    ([[0.059, 0.941]], 3, 'multinomial')
    """

    a: np.ndarray  # (K,), a_0 = 0
    b: float
    draw_a: np.ndarray | None = None  # (M, K)
    draw_b: np.ndarray | None = None  # (M,)
    name = "multinomial"

    @property
    def draws(self) -> int:
        """Number of posterior draws :math:`M`."""
        return 0 if self.draw_b is None else self.draw_b.size

    def predict(self, s: np.ndarray) -> np.ndarray:
        r""":math:`p_{ik}` at the mode for rows of scores ``s`` (n, K)."""
        return platt_probabilities(log_scores(s), self.a[None], np.array([self.b]))[0]

    def predict_draws(self, s: np.ndarray) -> np.ndarray:
        r""":math:`p^{(m)}_{ik}` of every draw, (M, n, K)."""
        return platt_probabilities(log_scores(s), self.draw_a, self.draw_b)

    def count_shifts(self, s: np.ndarray, p: np.ndarray, yp: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        r"""Each draw's shift of a window's expected :math:`TP_k` (rows predicted :math:`k`)
        and of its expected rows of class :math:`k`, :math:`\sum_i(p^{(m)}_{ik}-p_{ik})` over
        those rows, (M, K) each; ``p`` is :meth:`predict` of ``s``, the window's plug-in.

        Summed exactly over windows of at most :data:`SHIFT_ROWS` rows; over longer ones, the
        first-order part over every row,

        .. math:: \delta p_{ik}=p_{ik}\Big(\Delta a_k-\sum_jp_{ij}\Delta a_j
                  +\Delta b\,\big(x_{ik}-\sum_jp_{ij}x_{ij}\big)\Big),\qquad
                  (\Delta a,\Delta b)=(a^{(m)}-a,\,b^{(m)}-b),

        which needs only :math:`\sum_ip_{ik}`, :math:`\sum_ip_{ik}p_{ij}` and
        :math:`\sum_ip_{ik}(x_{ik}-\bar x_i)`, plus the exact remainder over an evenly spaced
        sample of :data:`SHIFT_ROWS` rows scaled to the window (a control variate). On a
        100,000-row window of three classes, the first-order part alone errs by 3-4 % of the
        shifts' sd over the draws (the sd of its error) with a 1,000-row reference and 6-8 %
        with 200 rows; with the sampled remainder, by at most 1.4 % and 3.1 %.

        Examples
        --------
        One draw with class 1's intercept 0.01 above the mode's (at the mode :math:`p=s`):

        >>> m = MultinomialMap(np.zeros(2), 1.0, np.array([[0.0, 0.01]]), np.array([1.0]))
        >>> s = np.array([[0.3, 0.7], [0.6, 0.4]])
        >>> tp, total = m.count_shifts(s, s, np.array([1, 0]))
        >>> total.round(4).tolist(), _first_order(m, s, s, np.array([1, 0]))[1].round(4).tolist()
        ([[-0.0045, 0.0045]], [[-0.0045, 0.0045]])
        """
        n = s.shape[0]
        if n <= SHIFT_ROWS:
            return _exact_shifts(self, s, p, yp)
        d_tp, d_total = _first_order(self, s, p, yp)
        pick = np.linspace(0, n - 1, SHIFT_ROWS).round().astype(np.int64)
        sample = s[pick], p[pick], yp[pick]
        exact, linear = _exact_shifts(self, *sample), _first_order(self, *sample)
        scale = n / SHIFT_ROWS
        return (d_tp + scale * (exact[0] - linear[0]), d_total + scale * (exact[1] - linear[1]))


#: rows of a window whose expected counts are summed exactly for every draw of the multinomial
#: map (:meth:`MultinomialMap.count_shifts`)
SHIFT_ROWS = 5000
_BLOCK = 1 << 22  # cells (draws x rows x classes) of the probabilities held at once


def _exact_shifts(m: MultinomialMap, s: np.ndarray, p: np.ndarray, yp: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`MultinomialMap.count_shifts` summed over every row, a block of rows at a time."""
    n, k = s.shape
    d_tp = -np.bincount(yp, weights=p[np.arange(n), yp], minlength=k)[None].repeat(m.draws, 0)
    d_total = -p.sum(axis=0)[None].repeat(m.draws, 0)
    step = max(1, _BLOCK // (m.draws * k))
    for start in range(0, n, step):
        rows = slice(start, start + step)
        pm = m.predict_draws(s[rows])
        own = np.take_along_axis(pm, yp[rows][None, :, None], axis=2)[..., 0]
        d_tp += np.stack([own[:, yp[rows] == c].sum(axis=1) for c in range(k)], axis=1)
        d_total += pm.sum(axis=1)
    return d_tp, d_total


def _first_order(m: MultinomialMap, s: np.ndarray, p: np.ndarray, yp: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The first-order part of :meth:`MultinomialMap.count_shifts`, (M, K) each."""
    x = log_scores(s)
    n, k = p.shape
    gain = p * (x - (p * x).sum(axis=1, keepdims=True))  # d p_ik / d b
    own = np.arange(n), yp
    mass = np.bincount(yp, weights=p[own], minlength=k)
    pairs = np.stack([p[yp == c, c] @ p[yp == c] for c in range(k)])
    slope = np.bincount(yp, weights=gain[own], minlength=k)
    da, db = m.draw_a - m.a, (m.draw_b - m.b)[:, None]
    d_total = da * p.sum(axis=0) - da @ (p.T @ p) + db * gain.sum(axis=0)
    return da * mass - da @ pairs.T + db * slope, d_total


def multinomial_map(scores: np.ndarray, labels: np.ndarray, *, uncertainty: bool = True,
                    random_seed: Any = None, start: MultinomialMap | None = None
                    ) -> MultinomialMap:
    r"""Fit the multinomial Platt map on a reference, with :math:`M` draws of its posterior.

    The importance draws :math:`(a_s,b_s)` with weights :math:`w_s`
    (:func:`posterior`, its default priors) are resampled
    systematically: draw :math:`m` is the first :math:`s` with
    :math:`\sum_{t\le s}w_t>(u+m)/M`, :math:`u\sim U(0,1)`, so that each draw is kept
    :math:`\lfloor Mw_s\rfloor` or :math:`\lceil Mw_s\rceil` times.

    Parameters
    ----------
    scores : ndarray (n, K)
        Raw class probabilities of the reference (validated).
    labels : ndarray (n,)
        Their classes' codes 0..K-1.
    uncertainty : bool
        Draw the posterior (default) or keep the mode only.
    random_seed : None, int or Generator
    start : MultinomialMap, optional
        With ``uncertainty=False``, a map whose :math:`(a, b)` starts the search of the mode
        (default :math:`a=0, b=1`), e.g. one fitted on rows that overlap these.

    Returns
    -------
    MultinomialMap

    Examples
    --------
    Scores too confident by a factor 2 in their logits get a slope near 1/2:

    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(0, 1.5, (2000, 3))
    >>> true = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    >>> s = np.exp(2 * z) / np.exp(2 * z).sum(axis=1, keepdims=True)
    >>> y = (rng.random(2000)[:, None] > true.cumsum(axis=1)).sum(axis=1).clip(max=2)
    >>> m = multinomial_map(s, y, random_seed=1)
    >>> round(m.b, 1), m.draws, round(float(m.draw_b.std()), 2)
    (0.5, 400, 0.02)
    """
    if not uncertainty:  # the mode alone
        theta = None if start is None else np.r_[start.a[1:], np.log(start.b)]
        a, b = _unpack(_mode(log_scores(scores), labels, PRIOR_A, PRIOR_LOG_B, theta)[0])
        return MultinomialMap(a[0], float(b[0]))
    rng = as_seed(random_seed)
    post = posterior(scores, labels, random_seed=rng)
    a, b = post.mode
    cut = (rng.random() + np.arange(post.size)) / post.size
    pick = np.minimum(np.searchsorted(np.cumsum(post.weights), cut, side="right"), post.size - 1)
    return MultinomialMap(a, b, post.a[pick], post.b[pick])


# ---------------------------------------------------------------------------------------------
# selection on held-out folds


def brier_scores(p: np.ndarray, labels: np.ndarray) -> np.ndarray:
    r"""Each row's multiclass Brier score :math:`\sum_k(p_{ik}-\mathbb 1\{y_i=k\})^2`
    (Brier 1950), in :math:`[0, 2]`.

    Examples
    --------
    >>> brier_scores(np.array([[0.7, 0.2, 0.1], [1.0, 0.0, 0.0]]), np.array([0, 1])).round(3)
    array([0.14, 2.  ])
    """
    onehot = np.zeros_like(p)
    onehot[np.arange(labels.size), labels] = 1.0
    return ((p - onehot) ** 2).sum(axis=-1)


#: a candidate of :func:`select_map`: fitted on (scores, labels, Generator), it returns the
#: map from rows of scores to their calibrated class probabilities
MapFit = Callable[[np.ndarray, np.ndarray, np.random.Generator],
                  Callable[[np.ndarray], np.ndarray]]


def select_map(scores: np.ndarray, labels: np.ndarray, candidates: dict[str, MapFit], *,
               n_folds: int = 10, random_seed: Any = None
               ) -> tuple[str, pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    r"""Pick the K-class calibration map with the lowest held-out multiclass Brier score, or a
    simpler one as good.

    Each candidate is fitted on all folds but one (folds stratified by class,
    :func:`bayeval.calibration.stratified_folds`; fewer than ``n_folds`` if a class has fewer
    than :math:`2\,n_{folds}` rows, so that every fit sees 2 rows of every class) and predicts
    the held-out fold; every
    row's out-of-fold probabilities are scored by :func:`brier_scores`. The score is the
    multiclass Brier score rather than the log loss: both are strictly proper (Gneiting &
    Raftery 2007), but the Brier score is bounded, whereas an isotonic map's probability of 0
    for a class that occurs gives an infinite log loss to the whole map and an undefined
    standard error. As :func:`bayeval.calibration.select_calibrator` does, an identity
    candidate ``"none"`` is kept only if its score is the lowest; among the others, listed
    from the simplest, the one-standard-error rule (Breiman et al. 1984, §3.4.3) takes the
    first whose excess over the lowest score, :math:`d_i=\mathrm{BS}_{ci}-\mathrm{BS}_{bi}`,
    has :math:`\bar d\le\mathrm{sd}(d)/\sqrt n`.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n, K)
        Class probabilities of the labelled rows (validated).
    labels : numpy.ndarray, shape (n,)
        Their classes' codes 0..K-1, at least 2 rows of each.
    candidates : dict
        ``{name: fit}`` from the simplest to the most flexible, ``fit(scores, labels, rng)``
        returning a function of rows of scores (:data:`MapFit`).
    n_folds : int
    random_seed : None, int or numpy.random.Generator
        Seeds the folds and every fit.

    Returns
    -------
    name : str
        The chosen candidate.
    table : pandas.DataFrame
        Indexed by candidate: ``heldout_brier`` (the mean out-of-fold Brier score),
        ``brier_excess`` (over the lowest), ``brier_se`` (its standard error) and ``chosen``.
    oof : dict
        Every candidate's out-of-fold probabilities, (n, K).
    folds : numpy.ndarray, shape (n,)
        Each row's fold.

    Examples
    --------
    Over-confident scores (the labels follow :math:`s^{1/2}`, renormalised): the map beats the
    identity.

    >>> rng = np.random.default_rng(0)
    >>> s = rng.dirichlet([1, 1, 1], 1000)
    >>> true = s**0.5 / (s**0.5).sum(axis=1, keepdims=True)
    >>> y = (rng.random(1000)[:, None] > true.cumsum(axis=1)).sum(axis=1)
    >>> fits = {"none": lambda s, y, rng: lambda t: t,
    ...         "multinomial": lambda s, y, rng: multinomial_map(
    ...             s, y, uncertainty=False, random_seed=rng).predict}
    >>> name, table, oof, folds = select_map(s, y, fits, random_seed=0)
    >>> name, table["heldout_brier"].round(3).tolist()
    ('multinomial', [0.63, 0.603])
    """
    rng = as_seed(random_seed)
    smallest = int(np.bincount(labels).min())
    n_folds = min(int(n_folds), smallest // 2)
    if n_folds < 2:
        raise ValueError("labels need at least 4 rows of every class to compare calibration "
                         f"maps on held-out folds; the smallest class has {smallest}.")
    folds = stratified_folds(labels, n_folds, rng)
    oof = {name: np.empty(scores.shape) for name in candidates}
    for f in range(n_folds):
        test = folds == f
        for name, fit in candidates.items():
            oof[name][test] = fit(scores[~test], labels[~test], rng)(scores[test])
    names = list(candidates)
    brier = np.array([brier_scores(oof[name], labels) for name in names])
    lowest = int(np.argmin(brier.mean(axis=1)))
    excess = brier - brier[lowest]
    se = excess.std(axis=1, ddof=1) / np.sqrt(labels.size)
    best = names[lowest]
    if best != "none":
        best = next(name for i, name in enumerate(names)
                    if name != "none" and excess[i].mean() <= se[i])
    table = pd.DataFrame({"heldout_brier": brier.mean(axis=1),
                          "brier_excess": excess.mean(axis=1), "brier_se": se},
                         index=pd.Index(names, name="calibrator"))
    table["chosen"] = table.index == best
    return best, table, oof, folds
