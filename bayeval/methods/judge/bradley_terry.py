r"""Bradley–Terry strengths from pairwise judge verdicts corrected by a human-audited subset.

Each comparison :math:`i` pits system :math:`a_i` against :math:`b_i`; the verdict
:math:`v_i` is 1 when :math:`a_i` wins, 0 when :math:`b_i` wins and 1/2 for a tie (half a win
each, as in chess scores). The Bradley–Terry model (Bradley & Terry 1952) says
:math:`E[v \mid a, b] = \sigma(\beta_a - \beta_b)`, :math:`\sigma` the logistic function; its
loss is :math:`\ell_\beta(v) = \log(1 + e^{d}) - v\,d` with :math:`d = \beta_a - \beta_b`, the
logistic log-likelihood with a fractional outcome (a tie counts as half a win; no separate tie
parameter). The judge's verdict :math:`\hat v` is known on all comparisons, the human's
:math:`v` on a random subset :math:`L` of :math:`m`; :math:`U` holds the other :math:`n`.

Prediction-powered M-estimation (PPI++, Angelopoulos, Duchi & Zrnic 2023):

.. math::
    \hat\beta_\lambda = \arg\min_{\beta}\; \frac1m\sum_{i\in L}\ell_\beta(v_i)
        + \lambda\Big(\frac1n\sum_{i\in U}\ell_\beta(\hat v_i)
        - \frac1m\sum_{i\in L}\ell_\beta(\hat v_i)\Big),

consistent for every :math:`\lambda` (the judge's terms cancel in expectation); :math:`\lambda =
0` is the Bradley–Terry MLE on the human verdicts (``classical``), :math:`\lambda = 1` is PPI
and ``ppi_pp`` tunes :math:`\lambda` (ppi_py's ``_calc_lam_glm``, clipped to [0, 1]):

.. math:: \hat\lambda = \frac{\mathrm{tr}(H^{+}(C + C^\top)H^{+})}
          {2(1 + m/n)\,\mathrm{tr}(H^{+}V_{\hat v}H^{+})},

at the PPI estimate, :math:`C` the labelled covariance of the human and judge gradients
:math:`g_i = (\sigma(d_i) - v_i)x_i` (:math:`x_i = e_{a_i} - e_{b_i}`), :math:`V_{\hat v}` the
covariance of the judge's gradients over all comparisons and :math:`H` the Hessian. ``naive``
fits the judge's verdicts on :math:`U` alone. The sandwich covariance is

.. math::
    \widehat{\mathrm{Cov}}(\hat\beta) = H_\lambda^{+}\Big(\frac{\mathrm{Cov}_L(g - \lambda\hat
        g)}{m} + \lambda^2\frac{\mathrm{Cov}_U(\hat g)}{n}\Big)H_\lambda^{+},\qquad
    H_\lambda = \frac{1-\lambda}m\sum_{i\in L}\sigma_i'x_ix_i^\top
        + \frac\lambda n\sum_{i\in U}\sigma_i'x_ix_i^\top,

the Hessian of the loss (free of the verdicts). The strengths are identified up to a constant:
:math:`\sum_k\beta_k = 0` (default; :math:`H^+` the pseudo-inverse) or :math:`\beta_r = 0` for
a reference system. With two systems :math:`\hat\beta_a - \hat\beta_b` is the logit of the
PPI++ win rate of :func:`bayeval.judge`, and its standard error the delta method's.

Ties (``ties="davidson"``). Davidson (1970) gives a tie its own probability: with
:math:`\pi_k = e^{\beta_k}`,

.. math::
    P(a \succ b) = \frac{\pi_a}{\pi_a + \pi_b + \nu\sqrt{\pi_a\pi_b}}, \qquad
    P(\text{tie}) = \frac{\nu\sqrt{\pi_a\pi_b}}{\pi_a + \pi_b + \nu\sqrt{\pi_a\pi_b}},

i.e. :math:`(P(a \succ b), P(b \succ a), P(\text{tie})) = \mathrm{softmax}(d/2, -d/2,
\log\nu)`. Its loss is linear in the statistics :math:`s = (v - 1/2, 1\{v = 1/2\})` of a
verdict,

.. math::
    \ell_{\beta,\nu}(v) = \log(e^{d/2} + e^{-d/2} + \nu) - (v - \tfrac12)\,d
        - 1\{v = \tfrac12\}\log\nu,

an exponential family whose Hessian is the model covariance of :math:`s`, so the objective,
:math:`\hat\lambda` and the sandwich above carry over with the parameters :math:`(\beta,
\log\nu)` and the gradients :math:`J_i^\top(E_{\beta,\nu}[s] - s_i)`, :math:`J_i` mapping
them to :math:`(d_i, \log\nu)`. :math:`\sigma(\beta_a - \beta_b)` is then the probability
that a wins given that the comparison is not a tie.

Sampling weights. When comparison :math:`i` is audited with a known probability :math:`\pi_i`
(a stratified design: more audits where the judge says a tie, or where it favours one system),
``sample_weight`` :math:`w_i \propto 1/\pi_i` and ``sample_weight_unlabeled`` :math:`u_i \propto
1/(1 - \pi_i)`, each rescaled to mean 1
(:func:`~bayeval.methods.judge.weighted.sampling_weights`), turn every sample mean of the
objective into a Hájek mean:

.. math::
    \hat\beta_\lambda = \arg\min_{\beta}\; \frac1m\sum_{i\in L}w_i\big(\ell_\beta(v_i)
        - \lambda\ell_\beta(\hat v_i)\big) + \frac\lambda n\sum_{i\in U}u_i\ell_\beta(\hat v_i),

whose estimating equations weight each score term :math:`g_i - \lambda\hat g_i` by
:math:`w_i` and :math:`\hat g_i` by :math:`u_i`. :math:`\hat\lambda` is ppi_py's with the
weighted gradients :math:`w_ig_i`, :math:`w_i\hat g_i`, :math:`u_i\hat g_i` and the weighted
Hessian over all comparisons, as the weighted PPI++ mean
(:func:`~bayeval.methods.judge.weighted.ppi_pp_lambda`). The sandwich keeps its bread
:math:`H_\lambda` (each Hessian term weighted alike) and takes the linearised (Hájek) variances
of the two weighted means as meat,

.. math::
    \frac1{m^2}\sum_{i\in L}w_i^2(r_i - \bar r_w)(r_i - \bar r_w)^\top
    + \frac{\lambda^2}{n^2}\sum_{i\in U}u_i^2(\hat g_i - \bar{\hat g}_u)(\hat g_i
        - \bar{\hat g}_u)^\top,\qquad r_i = g_i - \lambda\hat g_i,

:math:`\bar r_w = \sum_L w_ir_i/m` (the weighted means). Uniform weights give the unweighted
estimator; with two systems :math:`\hat\beta_a - \hat\beta_b` is the logit of the weighted
PPI++ win rate (:func:`~bayeval.methods.judge.weighted.ppi_pp`) at the same :math:`\hat\lambda`.

References
----------
Bradley, Terry (1952), Rank analysis of incomplete block designs I, Biometrika 39.
Davidson (1970), On extending the Bradley-Terry model to accommodate ties in paired comparison
experiments, J. Am. Stat. Assoc. 65.
Angelopoulos, Duchi, Zrnic (2023), PPI++: efficient prediction-powered inference,
arXiv:2311.01453. Boyeau, Angelopoulos, Yosef, Malik, Jordan (2024), AutoEval done right:
using synthetic data for model evaluation, arXiv:2403.07008.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy
import xarray as xr

from bayeval.methods.judge.ranking import ADJUSTMENTS, JudgeRanking, ranking_dataset
from bayeval.methods.judge.weighted import sampling_weights
from bayeval.validation import aligned, as_array, as_choice, as_ci_prob, as_seed, describe

__all__ = ["BT_ESTIMATORS", "TIES", "BradleyTerry", "bradley_terry", "bt_fit", "bt_lambda",
           "davidson_probabilities"]

BT_ESTIMATORS = ("ppi_pp", "ppi", "classical", "naive")
TIES = ("half", "davidson")
VERDICTS = (0.0, 0.5, 1.0)
#: a fitted log-odds beyond this (odds of e^20) means the minimum is at infinity
DIVERGED = 20.0
ASSUMPTIONS = (
    "Comparisons are independent; the human-audited ones are a random subset of all (missing "
    "completely at random; with sampling weights, drawn with the known probabilities the weights "
    "invert) and the human verdicts are the truth; the expected verdict of a "
    "comparison of a with b is sigma(beta_a - beta_b) (Bradley-Terry, a tie half a win); the "
    "judge's verdicts need no model: the audited ones correct them.")


# ============================================================================ input handling
def _pairs(x, name: str) -> np.ndarray:
    """(r, 2) object array of (first, second) system names."""
    arr = x.iloc[:, :2].to_numpy(object) if isinstance(x, pd.DataFrame) else np.asarray(
        x, dtype=object)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must list the two systems of each comparison: an array of "
                         f"shape (r, 2) or a DataFrame whose first two columns are the systems; "
                         f"got {describe(x)}.")
    same = np.flatnonzero(arr[:, 0] == arr[:, 1])
    if same.size:
        raise ValueError(f"{name} row {same[0]} compares {arr[same[0], 0]!r} with itself; "
                         "give two different systems per comparison.")
    return arr


def _verdicts(x, name: str) -> np.ndarray:
    v = as_array(x, name)
    bad = v[~np.isin(v, VERDICTS)]
    if bad.size:
        raise ValueError(f"{name} has {bad.size} verdict(s) other than 1 (the first system "
                         f"wins), 0 (the second wins) or 0.5 (a tie), such as {bad[:3].tolist()}.")
    return v


# ============================================================================== estimator
def _loss(beta, x, weight, target):
    """Value, gradient and Hessian of sum_i weight_i log(1 + e^{d_i}) - target_i d_i."""
    d = x @ beta
    s = scipy.special.expit(d)
    value = weight @ np.logaddexp(0.0, d) - target @ d
    return value, x.T @ (weight * s - target), (x.T * (weight * s * (1 - s))) @ x


def davidson_probabilities(d, log_nu) -> np.ndarray:
    r"""Davidson's (1970) :math:`(P(a \succ b), P(b \succ a), P(\text{tie}))` at the strength
    differences :math:`d = \beta_a - \beta_b`: :math:`\mathrm{softmax}(d/2, -d/2, \log\nu)`.

    Examples
    --------
    >>> davidson_probabilities(np.array([0.0, np.log(4)]), np.log(1.0)).round(4).tolist()
    [[0.3333, 0.3333, 0.3333], [0.5714, 0.1429, 0.2857]]
    """
    d = np.asarray(d, float)
    logits = np.stack([d / 2, -d / 2, np.broadcast_to(log_nu, d.shape)], axis=-1)
    return scipy.special.softmax(logits, axis=-1)


def _statistics(v) -> np.ndarray:
    """Davidson's sufficient statistics (v - 1/2, 1{v = 1/2}) of verdicts, shape (n, 2)."""
    v = np.asarray(v, float)
    return np.stack([v - 0.5, (v == 0.5) * 1.0], axis=-1)


def _moments(d, log_nu):
    """Mean (n, 2) and covariance (n, 2, 2) of the statistics under Davidson's model."""
    p = davidson_probabilities(d, log_nu)
    mean = np.stack([(p[:, 0] - p[:, 1]) / 2, p[:, 2]], axis=-1)
    var_v = (p[:, 0] + p[:, 1]) / 4 - mean[:, 0] ** 2
    cross = -mean[:, 0] * p[:, 2]
    cov = np.stack([np.stack([var_v, cross], -1), np.stack([cross, p[:, 2] * (1 - p[:, 2])], -1)],
                   axis=-2)
    return mean, cov


def _davidson_loss(phi, x, weight, target):
    """Value, gradient and Hessian in phi = (strength coordinates, log nu) of sum_i weight_i
    A(d_i, log nu) - target_i . (d_i, log nu), A the log normaliser."""
    d, log_nu = x @ phi[:-1], phi[-1]
    value = weight @ scipy.special.logsumexp(
        np.stack([d / 2, -d / 2, np.full_like(d, log_nu)], -1), axis=-1)
    value -= target[:, 0] @ d + target[:, 1].sum() * log_nu
    mean, cov = _moments(d, log_nu)
    r = weight[:, None] * mean - target
    return value, _stack_d_nu(x, r), _hessian_d_nu(x, weight[:, None, None] * cov)


def _stack_d_nu(x, r) -> np.ndarray:
    """sum_i J_i' r_i, J_i mapping the parameters to (d_i, log nu): (x' r_d, sum r_nu)."""
    return np.append(x.T @ r[:, 0], r[:, 1].sum())


def _hessian_d_nu(x, c) -> np.ndarray:
    """sum_i J_i' c_i J_i for per-comparison 2 x 2 matrices ``c``."""
    top = np.hstack([(x.T * c[:, 0, 0]) @ x, (x.T @ c[:, 0, 1])[:, None]])
    return np.vstack([top, np.append(x.T @ c[:, 1, 0], c[:, 1, 1].sum())])


def bt_fit(x_l, y, yhat, x_u, yhat_u, lam: float, basis, ties: str = "half", w=None,
           v=None) -> np.ndarray:
    r"""The strengths :math:`\hat\beta_\lambda = B\hat\gamma` minimising the module's
    objective over :math:`\gamma` (and :math:`\log\nu` with ``ties="davidson"``), by Newton's
    method with a trust region (scipy).

    Parameters
    ----------
    x_l, x_u : array (m, K), (n, K)
        Rows :math:`e_a - e_b` of the audited and the other comparisons.
    y, yhat : array (m,)
        Human and judge verdicts on the audited comparisons.
    yhat_u : array (n,)
        Judge verdicts on the others.
    lam : float
        :math:`\lambda` (0: humans only; with ``x_l`` empty, the judge alone is
        ``lam=1``).
    basis : array (K, K - 1)
        :math:`B`, the identifiability constraint (columns spanning the allowed strengths).
    ties : {"half", "davidson"}
        A tie as half a win, or Davidson's model.
    w, v : array (m,), (n,), optional
        Sampling weights of the audited and the other comparisons, each of mean 1
        (:func:`~bayeval.methods.judge.weighted.sampling_weights`); default uniform.

    Returns
    -------
    numpy.ndarray (K,)
        With ``ties="davidson"``, shape (K + 1,): the strengths and :math:`\log\hat\nu`.

    Examples
    --------
    Three systems, each pair compared twice: A beats B twice, A-C and B-C split:

    >>> x = np.array([[1, -1, 0], [1, -1, 0], [1, 0, -1], [1, 0, -1], [0, 1, -1], [0, 1, -1]],
    ...              dtype=float)
    >>> basis = scipy.linalg.null_space(np.ones((1, 3)))
    >>> v = np.array([1, 1, 1, 0, 1, 0], dtype=float)
    >>> (bt_fit(x, v, v, x[:0], v[:0], 0.0, basis).round(4) + 0.0).tolist()  # no -0.0
    [0.7563, -0.7563, 0.0]

    Davidson's model with B-C tied twice instead (:math:`\hat\nu = e^{0.354} = 1.42`):

    >>> v = np.array([1, 1, 1, 0, 0.5, 0.5])
    >>> (bt_fit(x, v, v, x[:0], v[:0], 0.0, basis, ties="davidson").round(4) + 0.0).tolist()
    [1.3107, -1.3107, 0.0, 0.354]

    A weight of 2 on the first comparison is that comparison counted twice:

    >>> v = np.array([1, 1, 1, 0, 1, 0], dtype=float)
    >>> w = np.array([2, 1, 1, 1, 1, 1]) * 6 / 7
    >>> twice = bt_fit(x[[0, *range(6)]], v[[0, *range(6)]], v[[0, *range(6)]], x[:0], v[:0],
    ...                0.0, basis)
    >>> bool(np.allclose(bt_fit(x, v, v, x[:0], v[:0], 0.0, basis, w=w), twice))
    True
    """
    m, n = len(y), len(yhat_u)
    w = np.ones(m) if w is None else np.asarray(w, float)
    v = np.ones(n) if v is None else np.asarray(v, float)
    davidson = ties == "davidson"
    stat = _statistics if davidson else (lambda a: np.asarray(a, float))
    x = np.vstack([x_l, x_u]) @ basis
    weight = np.concatenate([w * (1 - lam) / max(m, 1), v * lam / max(n, 1)])
    # each comparison's statistic (a value, or a row with Davidson's model) times its weight
    target = np.concatenate([((stat(y) - lam * stat(yhat)).T * w).T / max(m, 1),
                             lam * (stat(yhat_u).T * v).T / max(n, 1)])
    loss = _davidson_loss if davidson else _loss
    res = scipy.optimize.minimize(lambda g: loss(g, x, weight, target)[:2],
                                  np.zeros(x.shape[1] + davidson), jac=True,
                                  hess=lambda g: loss(g, x, weight, target)[2],
                                  method="trust-exact", options={"gtol": 1e-11})
    gamma = res.x[:x.shape[1]]
    beta = basis @ gamma
    if not np.isfinite(res.x).all() or np.abs(x @ gamma).max() > DIVERGED:
        raise ValueError("the strengths diverge: in the comparisons this estimator fits, some "
                         "system wins (or loses) every comparison it takes part in; add "
                         "comparisons or audit more of them.")
    if davidson and abs(res.x[-1]) > DIVERGED:
        raise ValueError("Davidson's tie parameter diverges: the comparisons this estimator "
                         "fits have no tie (or only ties); use ties='half', or audit more.")
    return np.append(beta, res.x[-1]) if davidson else beta


def _gradients(x, v, beta, ties: str = "half") -> np.ndarray:
    if ties == "davidson":
        mean, _ = _moments(x @ beta[:-1], beta[-1])
        r = mean - _statistics(v)
        return np.hstack([r[:, :1] * x, r[:, 1:]])
    return (scipy.special.expit(x @ beta) - v)[:, None] * x


def _hessian(x, beta, weight, ties: str = "half") -> np.ndarray:
    if ties == "davidson":
        return _hessian_d_nu(x, weight[:, None, None] * _moments(x @ beta[:-1], beta[-1])[1])
    s = scipy.special.expit(x @ beta)
    return (x.T * (weight * s * (1 - s))) @ x


def _inverse(h, basis) -> np.ndarray:
    """B (B' H B)^{-1} B': H's inverse on the strengths the constraint allows (for the
    orthonormal sum-zero basis, H's pseudo-inverse without a rounding threshold)."""
    return basis @ np.linalg.inv(basis.T @ h @ basis) @ basis.T


def _with_nu(basis, ties: str) -> np.ndarray:
    """The constraint's basis, with a free last coordinate (log nu) for Davidson's model."""
    return scipy.linalg.block_diag(basis, [[1.0]]) if ties == "davidson" else basis


def bt_lambda(x_l, y, yhat, x_u, yhat_u, beta, ties: str = "half", w=None, v=None) -> float:
    r"""ppi_py's power-tuning :math:`\hat\lambda` (not clipped) at the strengths ``beta``
    (with ``ties="davidson"``, the strengths and :math:`\log\nu`).

    Gradients :math:`g = (\sigma(x^\top\beta) - v)x` (Davidson's: :math:`J^\top(E[s] - s)`);
    :math:`C` their labelled human × judge covariance (``ddof=0``), :math:`V` the judge
    gradients' covariance over all comparisons (``ddof=1``), :math:`H` the Hessian over all
    comparisons. With sampling weights ``w``, ``v`` (mean 1) each gradient is multiplied by its
    comparison's weight and :math:`H` is the weighted Hessian, as ppi_py's weighted
    :math:`\hat\lambda`.

    Examples
    --------
    Two systems: :math:`\hat\lambda` is that of the win rate (:func:`~bayeval.methods.judge.fast.
    ppi_pp_lambda`):

    >>> from bayeval.methods.judge.fast import moments, ppi_pp_lambda
    >>> y, yh, yu = np.array([1, 0, 1, 1, 0.]), np.array([1, 0, 0, 1, 1.]), np.array([1, 0, 1.])
    >>> x = np.array([[1.0, -1.0]])
    >>> lam = bt_lambda(x.repeat(5, 0), y, yh, x.repeat(3, 0), yu, np.array([0.2, -0.2]))
    >>> round(lam, 6) == round(float(ppi_pp_lambda(moments(y, yh, yu), clip=False)), 6)
    True

    and with sampling weights, at the weighted PPI win rate :math:`\sigma(\beta_1 - \beta_2)`,
    that of the weighted win rate (:func:`~bayeval.methods.judge.weighted.ppi_pp_lambda`):

    >>> from bayeval.methods.judge import weighted
    >>> s = weighted.Sample.of(y, yh, yu, [1, 3, 1, 2, 1], [2, 1, 1])
    >>> d = scipy.special.logit(weighted.ppi_pp(s, 1.0).estimate)
    >>> lam = bt_lambda(x.repeat(5, 0), y, yh, x.repeat(3, 0), yu, np.array([d / 2, -d / 2]),
    ...                 w=s.w, v=s.v)
    >>> round(lam, 6) == round(weighted.ppi_pp_lambda(s, clip=False), 6)
    True
    """
    m, n = len(y), len(yhat_u)
    w = np.ones(m) if w is None else np.asarray(w, float)
    v = np.ones(n) if v is None else np.asarray(v, float)
    g_h, g_j = (w[:, None] * _gradients(x_l, a, beta, ties) for a in (y, yhat))
    g_u = v[:, None] * _gradients(x_u, yhat_u, beta, ties)
    c_h, c_j = g_h - g_h.mean(0), g_j - g_j.mean(0)
    cross = (c_h.T @ c_j + c_j.T @ c_h) / m
    var = np.cov(np.vstack([g_j, g_u]).T)
    x_all = np.vstack([x_l, x_u])
    k = x_all.shape[1]
    inv = _inverse(_hessian(x_all, beta, np.concatenate([w, v]) / (m + n), ties),
                   _with_nu(scipy.linalg.null_space(np.ones((1, k))), ties))
    return float(np.trace(inv @ cross @ inv) / (2 * (1 + m / n) * np.trace(inv @ var @ inv)))


def _hajek_meat(r, w) -> np.ndarray:
    """sum_i w_i^2 (r_i - r_w)(r_i - r_w)' / m^2, r_w = sum_i w_i r_i / m: the linearised
    covariance of the weighted mean of the rows ``r`` (weights of mean 1; uniform weights give
    ``np.cov(r.T, ddof=0) / m``)."""
    z = w[:, None] * (r - w @ r / len(w))
    return z.T @ z / len(w) ** 2


def _sandwich(x_l, y, yhat, x_u, yhat_u, beta, lam, basis, ties: str = "half", w=None,
              v=None) -> np.ndarray:
    """Sandwich covariance of the strengths (and log nu) in the constraint's basis."""
    m, n = len(y), len(yhat_u)
    w = np.ones(m) if w is None else np.asarray(w, float)
    v = np.ones(n) if v is None else np.asarray(v, float)
    h = 0.0
    meat = 0.0
    if m:
        r = _gradients(x_l, y, beta, ties) - lam * _gradients(x_l, yhat, beta, ties)
        meat = _hajek_meat(r, w)
        h = _hessian(x_l, beta, w * (1 - lam) / m, ties)
    if n and lam:
        meat = meat + lam**2 * _hajek_meat(_gradients(x_u, yhat_u, beta, ties), v)
        h = h + _hessian(x_u, beta, v * lam / n, ties)
    inv = _inverse(h, _with_nu(basis, ties))
    return inv @ meat @ inv


def _connected(x, names, what: str) -> None:
    """Refuse a comparison graph that splits the systems."""
    graph = scipy.sparse.csr_matrix(np.abs(x.T) @ np.abs(x))
    count, label = scipy.sparse.csgraph.connected_components(graph, directed=False)
    if count > 1:
        apart = [names[k] for k in np.flatnonzero(label != label[0])]
        raise ValueError(f"the {what} comparisons do not connect every system: {apart} are "
                         f"never compared, directly or through others, with {names[0]!r}; their "
                         "strengths are not identified.")


# ============================================================================ entry point
def bradley_terry(pairs, y, yhat, pairs_unlabeled, yhat_unlabeled, *, method: str = "ppi_pp",
                  lam: float | None = None, reference=None, ties: str = "half",
                  ci_prob: float = 0.95, adjust: str = "max_t", sample_weight=None,
                  sample_weight_unlabeled=None, random_seed: int | None = None) -> BradleyTerry:
    r"""Bradley–Terry strengths of systems from the judge's pairwise verdicts and a
    human-audited subset (prediction-powered M-estimation; see
    :mod:`bayeval.methods.judge.bradley_terry`).

    Parameters
    ----------
    pairs : array (m, 2) or DataFrame
        The two systems of each audited comparison (first, second); the systems are ordered by
        name in the results.
    y : array-like (m,)
        Human verdicts on them: 1 the first wins, 0 the second wins, 0.5 a tie.
    yhat : array-like (m,)
        The judge's verdicts on the same comparisons.
    pairs_unlabeled : array (n, 2) or DataFrame
        The systems of the comparisons only the judge saw.
    yhat_unlabeled : array-like (n,)
        The judge's verdicts on them.
    method : {"ppi_pp", "ppi", "classical", "naive"}
        PPI++ (default), PPI (:math:`\lambda = 1`), the humans alone (:math:`\lambda = 0`) or
        the judge alone on the unaudited comparisons.
    lam : float, optional
        A fixed :math:`\lambda \in [0, 1]` for ``ppi_pp`` instead of the tuned one.
    reference : system name, optional
        Fix its strength at 0; default the strengths sum to 0.
    ties : {"half", "davidson"}
        A tie counts as half a win of each (default), or has its own probability in Davidson's
        (1970) model (module docstring), whose :math:`\nu` is estimated with the strengths.
    ci_prob, adjust
        As :func:`~bayeval.methods.judge.ranking.rank_systems`.
    sample_weight : array-like, optional
        A sampling weight per audited comparison, :math:`w_i \propto 1/\pi_i` when comparison
        :math:`i` was sent to the humans with probability :math:`\pi_i` (a stratified or
        verdict-dependent design); relative (rescaled to mean 1). Each audited comparison's
        terms of the objective, its estimating equations, :math:`\hat\lambda` and the sandwich
        are weighted (module docstring). A pandas Series pairs with ``pairs``' rows by index.
    sample_weight_unlabeled : array-like, optional
        The same for the comparisons only the judge saw, :math:`\propto 1/(1 - \pi_i)`
        (default uniform).
    random_seed : int, optional
        As :func:`~bayeval.methods.judge.ranking.rank_systems`.

    Returns
    -------
    BradleyTerry
        :meth:`~bayeval.methods.judge.ranking.JudgeRanking.summary`: the strengths
        :math:`\beta_k` with their ranks; :meth:`differences`: :math:`\beta_a - \beta_b` and the
        win probability :math:`\sigma(\beta_a - \beta_b)` (``win_prob``, its interval the
        difference's mapped by :math:`\sigma`); :meth:`ranks`. The ``data`` group holds ``m``,
        ``n``, ``lam``, ``ties`` (human ties) and ``reference``; with sampling weights also
        ``m_kish`` and ``n_kish``, Kish's effective sizes :math:`(\sum w)^2/\sum w^2` of the
        two samples.

    Raises
    ------
    ValueError
        Pairs that are not two different systems, verdicts other than 0, 0.5 and 1, lengths
        that differ, fewer than two systems or comparisons, comparisons that do not connect
        every system, strengths that diverge (a system that always wins), ``lam`` outside
        [0, 1], an unknown ``reference``; ``ties="davidson"`` without tie verdicts in the
        comparisons the estimator fits; sampling weights of the wrong length, negative, not
        finite or all zero.

    Examples
    --------
    Four systems of strengths (0.6, 0.2, -0.2, -0.6), 4,000 judged comparisons, 400 audited; the
    judge prefers the first-listed answer (position bias):

    >>> rng = np.random.default_rng(5)
    >>> names = np.array(["w", "x", "y", "z"])
    >>> ab = np.array([rng.choice(4, 2, replace=False) for _ in range(4000)])
    >>> beta = np.array([0.6, 0.2, -0.2, -0.6])
    >>> v = (rng.random(4000) < 1 / (1 + np.exp(beta[ab[:, 1]] - beta[ab[:, 0]]))) * 1.0
    >>> vhat = np.where(rng.random(4000) < 0.75, v, rng.random(4000) < 0.7) * 1.0
    >>> p = names[ab]
    >>> ev = bradley_terry(p[:400], v[:400], vhat[:400], p[400:], vhat[400:], random_seed=0)
    >>> ev.summary()[["mean", "sd", "lower", "upper", "prob_best"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_bradley_terry (ppi_pp), closed form: 95% Wald confidence intervals
              mean     sd   lower   upper  prob_best
    system
    w        0.579  0.088   0.407   0.752       0.99
    x        0.276  0.074   0.131   0.421       0.01
    y       -0.350  0.071  -0.489  -0.210       0.00
    z       -0.506  0.083  -0.668  -0.344       0.00
    >>> d = ev.differences()
    >>> d.loc[["w - x"], ["mean", "win_prob", "win_prob_lower", "win_prob_upper"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_bradley_terry (ppi_pp), differences: 95% Wald intervals, simultaneous (max-|t|, c = 2.559)
            mean  win_prob  win_prob_lower  win_prob_upper
    pair
    w - x  0.303     0.575           0.513           0.636

    The judge alone (``method="naive"``) puts x and y almost level (0.093, -0.065); the 400
    audited verdicts alone (``"classical"``) give sds of 0.112-0.118, the judge's 3,600 others
    (:math:`\hat\lambda = 0.65`) bring them to 0.071-0.088.

    Auditing the comparisons the judge says z won with probability 0.2 and the others with
    0.05 fills the audits with z's wins and leaves few among the others; the weights
    :math:`1/\pi` and :math:`1/(1 - \pi)` undo it:

    >>> said_z = np.where(vhat == 1, ab[:, 0], ab[:, 1]) == 3
    >>> pi = np.where(said_z, 0.2, 0.05)
    >>> lab = rng.random(4000) < pi
    >>> fits = {name: bradley_terry(p[lab], v[lab], vhat[lab], p[~lab], vhat[~lab],
    ...                             random_seed=0, **kw).summary()["mean"]
    ...         for name, kw in [("unweighted", {}),
    ...                          ("weighted", {"sample_weight": 1 / pi[lab],
    ...                                        "sample_weight_unlabeled": 1 / (1 - pi[~lab])})]}
    >>> pd.DataFrame(fits).round(3)  # doctest: +NORMALIZE_WHITESPACE
            unweighted  weighted
    system
    w            0.791     0.522
    x            0.555     0.285
    y           -0.016    -0.179
    z           -1.331    -0.628

    The judge names z the winner in 18 % of the comparisons but 44 % of the 322 audited ones:
    unweighted, the audits over-represent the judge's wrong calls for z and the 3,678 others
    under-represent its calls for z, both pulling z's strength down (-1.33, truth -0.6).
    """
    method = as_choice(method, "method", BT_ESTIMATORS)
    ties = as_choice(ties, "ties", TIES)
    ci_prob = as_ci_prob(ci_prob)
    adjust = as_choice(adjust, "adjust", ADJUSTMENTS)
    if lam is not None:
        if method != "ppi_pp":
            raise ValueError(f"lam fixes PPI++'s lambda; method={method!r} has its own.")
        try:
            lam = float(lam)
        except (TypeError, ValueError):
            raise ValueError(f"lam must be a number in [0, 1], got {describe(lam)}.") from None
        if not 0 <= lam <= 1:
            raise ValueError(f"lam must lie in [0, 1] (a convex objective), got {lam:g}.")
    p_l, y, yh, w = aligned(pairs=pairs, y=y, yhat=yhat, sample_weight=sample_weight)
    p_u, yu, v = aligned(pairs_unlabeled=pairs_unlabeled, yhat_unlabeled=yhat_unlabeled,
                         sample_weight_unlabeled=sample_weight_unlabeled)
    p_l, p_u = _pairs(p_l, "pairs"), _pairs(p_u, "pairs_unlabeled")
    y, yh, yu = _verdicts(y, "y"), _verdicts(yh, "yhat"), _verdicts(yu, "yhat_unlabeled")
    names = list(pd.unique(np.concatenate([p_l.ravel(), p_u.ravel()])))
    try:
        names = sorted(names)
    except TypeError:  # names of mixed types keep their order of appearance
        pass
    k = len(names)
    if k < 2:
        raise ValueError(f"the comparisons name {k} system; give at least two.")
    if len(y) < 2 or len(yu) < 2:
        raise ValueError(f"bradley_terry needs at least two audited and two other comparisons, "
                         f"got {len(y)} and {len(yu)}.")
    weighted = sample_weight is not None or sample_weight_unlabeled is not None
    w = sampling_weights(w, len(y), "sample_weight")
    v = sampling_weights(v, len(yu), "sample_weight_unlabeled")
    index = {s: j for j, s in enumerate(names)}
    x_l, x_u = (np.zeros((len(p), k)) for p in (p_l, p_u))
    for x, p in ((x_l, p_l), (x_u, p_u)):
        rows = np.arange(len(p))
        x[rows, [index[s] for s in p[:, 0]]] = 1.0
        x[rows, [index[s] for s in p[:, 1]]] = -1.0
    if reference is None:
        basis = scipy.linalg.null_space(np.ones((1, k)))
    else:
        if reference not in index:
            raise ValueError(f"reference must be one of the systems {names}, got "
                             f"{describe(reference)}.")
        basis = np.delete(np.eye(k), index[reference], axis=1)
    if method == "classical":
        _connected(x_l[w > 0], names, "audited")
    else:
        _connected(x_u[v > 0], names, "unaudited")
    args = (x_l, y, yh, x_u, yu)
    weights = {"w": w, "v": v}
    if method == "naive":
        lam_used = 1.0
        args = (x_l[:0], y[:0], yh[:0], x_u, yu)
        weights["w"] = w[:0]
    elif method == "classical":
        lam_used = 0.0
    elif method == "ppi" or lam is not None:
        lam_used = 1.0 if lam is None else lam
    else:
        tuned = bt_lambda(*args, bt_fit(*args, 1.0, basis, ties, **weights), ties, **weights)
        lam_used = float(np.clip(tuned, 0.0, 1.0))
    beta = bt_fit(*args, lam_used, basis, ties, **weights)
    cov = _sandwich(*args, beta, lam_used, basis, ties, **weights)
    closed, info = ranking_dataset([str(s) for s in names], beta[:k], cov[:k, :k],
                                   ci_prob=ci_prob, adjust=adjust, rng=as_seed(random_seed))
    if ties == "davidson":
        info.update(tie_nu=float(np.exp(beta[k])), tie_log_nu_sd=float(np.sqrt(cov[k, k])))
    for end in ("", "_lower", "_upper"):
        src = {"": "pair_mean", "_lower": "pair_lower", "_upper": "pair_upper"}[end]
        closed["pair_win_prob" + end] = scipy.special.expit(closed[src])
    notes = []
    if method == "ppi" and lam_used == 1.0:
        classical = _sandwich(x_l, y, yh, x_u, yu, beta, 0.0, basis, ties, w=w, v=v)
        if np.trace(cov) > np.trace(classical):
            notes.append("the judge does not help PPI: its strengths' total variance exceeds "
                         "that of the human verdicts alone; use ppi_pp.")
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    info.update(m=len(y), n=len(yu), lam=lam_used, ties=int(np.sum(y == 0.5)),
                reference="sum to zero" if reference is None else str(reference),
                adjust=adjust)
    if weighted:  # Kish's effective sizes of the audited and the other comparisons
        info.update(m_kish=float(len(w) ** 2 / np.sum(w**2)),
                    n_kish=float(len(v) ** 2 / np.sum(v**2)))
    return BradleyTerry.create(
        method="judge_bradley_terry", variant=method, closed_form=closed, ci_prob=ci_prob,
        ci_kind="eti", random_seed=random_seed, assumptions=ASSUMPTIONS, warnings=notes,
        data=xr.Dataset(info), interval_kind="wald",
        description=(f"Bradley-Terry strengths of {k} systems from {len(y)} audited and "
                     f"{len(yu)} judge-only comparisons ({method}, lambda {lam_used:.3g}"
                     + (", Davidson's ties" if ties == "davidson" else "")
                     + (", sampling weights" if weighted else "") + ")"))


class BradleyTerry(JudgeRanking, method="judge_bradley_terry"):
    """The result of :func:`bradley_terry`: strengths (``summary``), differences and win
    probabilities (``differences``), ranks (``ranks``).

    Examples
    --------
    >>> p = [["A", "B"], ["B", "C"], ["A", "C"], ["C", "A"], ["B", "A"], ["C", "B"]]
    >>> ev = bradley_terry(p, [1, 0.5, 0, 0, 1, 1], [1, 1, 1, 0, 0, 1], p, [1, 0, 1, 0, 0, 0],
    ...                    method="classical", random_seed=0)
    >>> type(ev).__name__, ev.summary().index.tolist()
    ('BradleyTerry', ['A', 'B', 'C'])
    """
