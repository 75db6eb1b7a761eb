r"""Ranking several systems graded by a noisy judge and a few humans.

:math:`K` systems answer prompts; the judge grades every answer, humans a random subset. The
estimand is the vector of the systems' rates or mean ratings :math:`\theta = (\theta_1, \dots,
\theta_K)`, and from it every difference :math:`\theta_a - \theta_b`, :math:`P(\theta_a >
\theta_b)` and the law of the ranking.

**Paired** (the systems answer the same :math:`N` prompts, :math:`m` of them graded by humans)
or **unpaired** (each system its own prompts). Each estimator of one system's score is
asymptotically linear, :math:`\hat\theta_k - \theta_k \approx \frac1N\sum_i\varphi_{ik}`, and
the joint covariance is that of the per-prompt influence functions,

.. math:: \hat\Sigma = \frac1{N^2}\sum_{i=1}^N\hat\varphi_i\hat\varphi_i^\top ,

which keeps what the systems' grades on one prompt share (paired); unpaired systems are
independent and :math:`\hat\Sigma` is diagonal. With :math:`R_i` = 1 for a human-graded prompt,
:math:`\hat Y_i` the judge's grades of the :math:`K` answers and
:math:`\hat\mu_k(\hat Y) \approx E[Y_k \mid \hat Y]` (Angelopoulos et al. 2023 for PPI and
PPI++, Chen et al. 2026 for the EIF):

================  =========================================================================
estimator         :math:`\varphi_{ik}`
================  =========================================================================
naive             :math:`(1-R_i)\frac Nn(\hat Y_{ik} - \bar{\hat Y}_{U,k})`
classical         :math:`R_i\frac Nm(Y_{ik} - \bar Y_k)`
ppi, ppi_pp       :math:`R_i\frac Nm(Y_{ik} - \lambda_k\hat Y_{ik} - \bar Y_k
                  + \lambda_k\bar{\hat Y}_{L,k}) + (1-R_i)\frac Nn\lambda_k(\hat Y_{ik}
                  - \bar{\hat Y}_{U,k})`, :math:`\lambda_k` = 1 (PPI) or ppi_py's
                  power-tuned :math:`\hat\lambda_k` of system :math:`k`, clipped to [0, 1]
eif               :math:`\hat\mu_k(\hat Y_i) - \hat\theta_k + \frac{R_i}{\hat\pi(\hat Y_i)}
                  (Y_{ik} - \hat\mu_k(\hat Y_i))`
bayes             (0/1 grades) the exact Dirichlet posterior of the joint table of the
                  :math:`K` grades and the judge's vector of grades (unpaired: of each
                  system's own table, independent)
================  =========================================================================

The EIF's :math:`\hat\mu_k` conditions on the judge's grades of all :math:`K` answers: the
labelled mean of :math:`Y_k` per distinct vector :math:`\hat Y` (``mu_model="cell"``,
post-stratification, :math:`\hat\pi(\hat y)` the labelled share of the prompts in that cell; a
cell without labelled prompts takes :math:`\bar Y_k`) or the least-squares plane on
:math:`\hat Y` (``"linear"``, :math:`\hat\pi = m/N`). For two systems
:math:`\hat\theta_A - \hat\theta_B` and :math:`(1, -1)\hat\Sigma(1, -1)^\top` are those of
:func:`~bayeval.methods.judge.compare.compare_systems`.

With sampling weights of the labelled prompts (``sample_weight``, :math:`\propto 1/\pi_i`) and
of the others (:math:`\propto 1/(1 - \pi_i)`), the scores are the weighted (Hájek) estimators
of :mod:`bayeval.methods.judge.weighted` and :math:`\hat\Sigma` the covariance of their
weighted influence functions on the same prompts (:func:`weighted_scores`).

From :math:`\hat\theta` and :math:`\hat\Sigma` (:func:`ranking_dataset`): the differences
:math:`\hat\delta_{ab} = \hat\theta_a - \hat\theta_b` with Wald intervals and z-test p-values,
simultaneous intervals :math:`\hat\delta_{ab} \pm c\,\mathrm{se}_{ab}` with :math:`c` the
``ci_prob`` quantile of :math:`\max_{ab}|Z_a - Z_b|/\mathrm{se}_{ab}`, :math:`Z \sim N(0,
\hat\Sigma)` (single-step max-|t|, Hothorn, Bretz & Westfall 2008) or Holm's p-values with
Bonferroni intervals, :math:`P(\theta_a > \theta_b) = \Phi(\hat\delta_{ab}/\mathrm{se}_{ab})`
and :math:`P(\mathrm{rank}_k = r)` under :math:`N(\hat\theta, \hat\Sigma)` (the posterior under
a flat prior, by Bernstein–von Mises), by Monte Carlo and exactly for two systems; ``bayes``
takes them from its posterior draws.

References
----------
Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), Prediction-powered inference, Science 382.
Angelopoulos, Duchi, Zrnic (2023), PPI++: efficient prediction-powered inference,
arXiv:2311.01453. Chen, Lu, Li, Guo, Li (2026), Efficient inference for noisy LLM-as-a-judge
evaluation. Hothorn, Bretz, Westfall (2008), Simultaneous inference in general parametric
models, Biometrical Journal 50. Holm (1979), A simple sequentially rejective multiple test
procedure, Scandinavian Journal of Statistics 6.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from itertools import combinations

import numpy as np
import scipy
import xarray as xr

from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.methods.judge.categories import ClassCounts, posterior_draws
from bayeval.methods.judge.categories_weighted import by_class
from bayeval.methods.judge.compare import (
    MAX_CELLS,
    POSTERIOR_DRAWS,
    eif_least_squares,
    grade_scale,
    joint_cells,
    p_value,
    system_columns,
)
from bayeval.methods.judge.fast import Estimate, moments, ppi_pp_lambda, reported, z_value
from bayeval.methods.judge.weighted import (
    Sample,
    eif_cells,
    ppi_pp,
    sampling_weights,
    weighted_mean,
)
from bayeval.methods.judge.weighted import ppi_pp_lambda as weighted_ppi_lambda
from bayeval.table import Table, table
from bayeval.validation import aligned, as_array, as_choice, as_ci_prob, as_seed, describe

__all__ = [
    "ADJUSTMENTS",
    "RANK_ESTIMATORS",
    "JudgeRanking",
    "holm",
    "influence_functions",
    "rank_systems",
    "ranking_dataset",
    "score_posterior",
    "weighted_scores",
]

RANK_ESTIMATORS = ("naive", "classical", "ppi", "ppi_pp", "eif", "bayes")
ADJUSTMENTS = ("max_t", "holm", "none")
#: draws of the normal law of the estimates for the ranks and the max-|t| quantile
RANK_DRAWS = 100_000
#: ``bayes``: at most this many cells (vectors of K grades × vectors of K judge values)
MAX_BAYES_CELLS = 256
ASSUMPTIONS = (
    "The human-graded prompts are a random subset of each system's prompts (missing completely "
    "at random; with sampling weights, drawn with the known probabilities the weights invert), "
    "the human grades are the truth, the judge grades every answer of a system the "
    "same way, and prompts are independent. Paired: the systems answer the same prompts; "
    "unpaired: different, independent prompts. Ranks and P(A > B) are those of the normal law "
    "of the estimates (or of the posterior draws with bayes); rank 1 is the highest score.")


# ============================================================================ input handling
def _paired(y, yhat, yhat_unlabeled, w=None, v=None):
    """System names, the (m, K), (m, K), (n, K) arrays of paired systems and the sampling
    weights paired with their rows."""
    parts = [system_columns(x, n) for x, n in ((y, "y"), (yhat, "yhat"),
                                                (yhat_unlabeled, "yhat_unlabeled"))]
    sizes = {len(p[1]) for p in parts}
    named = [(n, p[0]) for n, p in zip(("y", "yhat", "yhat_unlabeled"), parts, strict=True)
             if p[0] is not None]
    if len(sizes) > 1:
        raise ValueError(f"y, yhat and yhat_unlabeled hold {[len(p[1]) for p in parts]} "
                         "systems; give the same systems to all three.")
    names = named[0][1] if named else [chr(ord("A") + k) for k in range(len(parts[0][1]))]
    for arg, keys in named:
        if keys != names:
            raise ValueError(f"{arg} names the systems {keys} but {named[0][0]} names them "
                             f"{names}; give the same systems in the same order.")
    names = [str(n) for n in names]
    if len(set(names)) < len(names):
        raise ValueError(f"the system names {names} repeat; give each system once.")
    lengths = [{np.shape(c)[0] if np.ndim(c) else 1 for c in p[1]} for p in parts]
    if any(len(s) > 1 for s in lengths):
        raise ValueError("paired systems answer the same prompts, but the systems' columns "
                         f"have different lengths {[sorted(s) for s in lengths]}; for systems "
                         "graded on different prompts pass paired=False.")
    tags = [f"[{n!r}]" for n in names]
    *pairs, w = aligned(**{f"{arg}{t}": c for arg, part in (("y", parts[0]), ("yhat", parts[1]))
                           for t, c in zip(tags, part[1], strict=True)}, sample_weight=w)
    k = len(names)
    y_cols = [as_array(v, "y" + t) for v, t in zip(pairs[:k], tags, strict=True)]
    yh_cols = [as_array(v, "yhat" + t) for v, t in zip(pairs[k:], tags, strict=True)]
    *yu, v = aligned(**{f"yhat_unlabeled{t}": c for t, c in zip(tags, parts[2][1], strict=True)},
                     sample_weight_unlabeled=v)
    yu_cols = [as_array(x, "yhat_unlabeled" + t) for x, t in zip(yu, tags, strict=True)]
    return names, y_cols, yh_cols, yu_cols, [(w, v)]


def _unpaired(y, yhat, yhat_unlabeled, w=None, v=None):
    """System names, per-system (y, yhat, yhat_unlabeled) arrays of unpaired systems and their
    (sample_weight, sample_weight_unlabeled)."""
    args = {"y": y, "yhat": yhat, "yhat_unlabeled": yhat_unlabeled}
    weights = {k: x for k, x in (("sample_weight", w), ("sample_weight_unlabeled", v))
               if x is not None}
    for arg, x in weights.items():
        if not isinstance(x, Mapping) or list(x) != list(y):
            raise ValueError(f"paired=False takes {arg} as a dict {{system: weights}} with the "
                             f"systems of y {list(y)}, got {describe(x)}.")
    for arg, x in args.items():
        if not isinstance(x, Mapping):
            raise ValueError(f"paired=False takes {arg} as a dict {{system: values}} (each "
                             f"system its own prompts), got {describe(x)}.")
    names = list(y)
    for arg, x in args.items():
        if list(x) != names:
            raise ValueError(f"{arg} names the systems {list(x)} but y names them {names}; give "
                             "the same systems in the same order.")
    if len(names) < 2:
        raise ValueError(f"y must hold at least two systems, got {len(names)}: {names}.")
    out, sampled = [], []
    for s in names:
        t = f"[{str(s)!r}]"
        a, b, ws = aligned(**{"y" + t: y[s], "yhat" + t: yhat[s],
                              "sample_weight" + t: w[s] if w is not None else None})
        c, vs = aligned(**{"yhat_unlabeled" + t: yhat_unlabeled[s],
                           "sample_weight_unlabeled" + t: v[s] if v is not None else None})
        out.append((as_array(a, "y" + t), as_array(b, "yhat" + t),
                    as_array(c, "yhat_unlabeled" + t)))
        sampled.append((ws, vs))
    return [str(n) for n in names], out, sampled


# ============================================================================== estimators
def influence_functions(y, x_l, x_u, estimator: str, mu_model: str = "cell"
                        ) -> tuple[np.ndarray, np.ndarray]:
    r"""The estimates of :math:`K` scores on the same prompts and their per-prompt influence
    functions (the module's table).

    Parameters
    ----------
    y, x_l : array (m, K)
        Human and judge grades of the labelled prompts' answers, one column per system.
    x_u : array (n, K)
        The judge's grades on the unlabelled prompts.
    estimator : {"naive", "classical", "ppi", "ppi_pp", "eif"}
    mu_model : {"cell", "linear"}
        The EIF's :math:`\hat\mu_k`: cell means per vector of judge values, or least squares on
        them.

    Returns
    -------
    theta : array (K,)
    phi : array (m + n, K)
        :math:`\hat\varphi_i`, the labelled prompts first; they sum to 0 and
        :math:`\hat\Sigma = \hat\varphi^\top\hat\varphi/N^2`.

    Examples
    --------
    >>> y = np.array([[1, 0], [1, 1], [0, 0], [1, 0]], dtype=float)
    >>> theta, phi = influence_functions(y, y, np.array([[1.0, 1.0], [0.0, 0.0]]), "eif")
    >>> theta.round(4).tolist(), (phi.T @ phi / 36).round(4).tolist()
    ([0.6667, 0.3333], [[0.037, 0.0185], [0.0185, 0.037]])
    """
    y, x_l, x_u = (np.asarray(a, float) for a in (y, x_l, x_u))
    m, n = y.shape[0], x_u.shape[0]
    big_n = m + n
    if estimator == "naive":
        theta = x_u.mean(0)
        return theta, np.vstack([np.zeros_like(y), big_n / n * (x_u - theta)])
    if estimator == "classical":
        theta = y.mean(0)
        return theta, np.vstack([big_n / m * (y - theta), np.zeros_like(x_u)])
    if estimator in ("ppi", "ppi_pp"):
        lam = np.ones(y.shape[1]) if estimator == "ppi" else np.array(
            [np.clip(ppi_pp_lambda(moments(y[:, k], x_l[:, k], x_u[:, k])), 0, 1)
             for k in range(y.shape[1])])
        resid = y - lam * x_l
        theta = y.mean(0) + lam * (x_u.mean(0) - x_l.mean(0))
        return theta, np.vstack([big_n / m * (resid - resid.mean(0)),
                                 big_n / n * lam * (x_u - x_u.mean(0))])
    if mu_model == "linear":
        design = np.column_stack([np.ones(m), x_l])
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        fit = np.vstack([design @ coef, coef[0] + x_u @ coef[1:]])
        resid = y - fit[:m]
        theta = fit.mean(0) + resid.mean(0)
        phi = fit - fit.mean(0)
        phi[:m] += big_n / m * (resid - resid.mean(0))
        return theta, phi
    k_l, k_u, size = joint_cells(list(x_l.T), list(x_u.T))
    c = np.bincount(k_l, minlength=size).astype(float)
    share = (c + np.bincount(k_u, minlength=size)) / big_n
    sums = np.stack([np.bincount(k_l, col, size) for col in y.T], axis=1)
    seen = c > 0
    y_bar = y.mean(0)
    mu = np.where(seen[:, None], sums / np.where(seen, c, 1.0)[:, None], y_bar)
    theta = share @ mu
    phi = mu[np.concatenate([k_l, k_u])] - theta
    phi[:m] += (big_n * share[k_l] / c[k_l])[:, None] * (y - mu[k_l])
    if not seen.all():  # the empty cells' shared labelled mean
        phi[:m] += big_n * share[~seen].sum() / m * (y - y_bar)
    return theta, phi


def weighted_scores(y, x_l, x_u, estimator: str, mu_model: str = "cell", w=None, v=None
                    ) -> tuple[np.ndarray, np.ndarray]:
    r"""The weighted estimates of :math:`K` scores on the same prompts and their covariance.

    Each score is the weighted (Hájek) estimator of :mod:`bayeval.methods.judge.weighted`
    applied to the system's column, with the labelled prompts' weights :math:`w \propto
    1/\pi_i` and the others' :math:`v \propto 1/(1 - \pi_i)`: the weighted means
    (``naive``, ``classical``), PPI++ with the weighted :math:`\hat\lambda_k` of each system
    (1 for ``ppi``, ppi_py's weighted power tuning clipped to [0, 1] for ``ppi_pp``), the EIF
    with the weighted cell means per vector of judge values
    (:func:`~bayeval.methods.judge.weighted.eif_cells`) or the weighted least-squares plane
    (:func:`~bayeval.methods.judge.compare.eif_least_squares`). Each is linear in the outcome
    column and its sandwich variance a sum of squares of per-prompt terms linear in it, so the
    covariance of systems :math:`k, l` is the inner product of their weighted influence
    functions on the same prompts, by polarisation
    (:func:`~bayeval.methods.judge.categories_weighted.by_class`):

    .. math:: \hat\Sigma_{kl} = \tfrac12\{\widehat{\mathrm{Var}}(T[Y_k + Y_l])
              - \widehat{\mathrm{Var}}(T[Y_k]) - \widehat{\mathrm{Var}}(T[Y_l])\},

    and :math:`(1, -1)\hat\Sigma(1, -1)^\top` of two systems is the weighted variance of
    :func:`~bayeval.methods.judge.compare.compare_systems`. Uniform weights give
    :func:`influence_functions`' estimates and covariance.

    Parameters
    ----------
    y, x_l, x_u, estimator, mu_model
        As :func:`influence_functions`.
    w, v : array-like, optional
        Sampling weights of the labelled and unlabelled prompts (checked and rescaled to mean 1
        by :func:`~bayeval.methods.judge.weighted.sampling_weights`; default uniform).

    Returns
    -------
    theta : array (K,)
    cov : array (K, K)

    Examples
    --------
    >>> y = np.array([[1, 0], [1, 1], [0, 0], [1, 0]], dtype=float)
    >>> x_u = np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> theta, cov = weighted_scores(y, y, x_u, "eif")  # as influence_functions
    >>> theta.round(4).tolist(), cov.round(4).tolist()
    ([0.6667, 0.3333], [[0.037, 0.0185], [0.0185, 0.037]])
    >>> theta, cov = weighted_scores(y, y, x_u, "eif", w=[1, 1, 3, 1])  # (0, 0) counts thrice
    >>> theta.round(4).tolist(), cov.round(4).tolist()
    ([0.5, 0.2778], [[0.0509, 0.0303], [0.0303, 0.0336]])
    """
    y, x_l, x_u = (np.asarray(a, float) for a in (y, x_l, x_u))
    w = sampling_weights(w, y.shape[0], "sample_weight")
    v = sampling_weights(v, x_u.shape[0], "sample_weight_unlabeled")
    if estimator == "naive":
        est = by_class(lambda c: weighted_mean(c, v), x_u)
    elif estimator == "classical":
        est = by_class(lambda a: weighted_mean(a, w), y)
    elif estimator in ("ppi", "ppi_pp"):  # PPI++ with lambda_k: lambda_k-scaled judge columns
        lam = np.ones(y.shape[1]) if estimator == "ppi" else _weighted_lambdas(y, x_l, x_u, w, v)
        est = by_class(lambda a, b, c: ppi_pp(Sample(a, b, c, w, v), 1.0), y, lam * x_l,
                       lam * x_u)
    elif mu_model == "linear":
        est = by_class(lambda a: eif_least_squares(a, x_l, x_u, w, v), y)
    else:
        cells = joint_cells(list(x_l.T), list(x_u.T))
        est = by_class(lambda a, b, c: eif_cells(Sample(a, b, c, w, v), *cells), y, x_l, x_u)
    return est.estimate, est.cov


def _weighted_lambdas(y, x_l, x_u, w, v) -> np.ndarray:
    """ppi_py's weighted power-tuning lambda of each system, clipped to [0, 1] (weights of mean
    1; :func:`~bayeval.methods.judge.weighted.ppi_pp_lambda`)."""
    return np.array([weighted_ppi_lambda(Sample(y[:, k], x_l[:, k], x_u[:, k], w, v))
                     for k in range(y.shape[1])])


def _grade_codes(k: int) -> np.ndarray:
    """(K, 2^K): bit k of each vector of K 0/1 grades, the first system the highest bit."""
    return (np.arange(2**k)[None, :] >> np.arange(k - 1, -1, -1)[:, None]) & 1


def score_posterior(table_, unlabelled, alpha) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact posterior mean and covariance of the :math:`K` rates under the Dirichlet model of
    the joint table of 0/1 grades.

    The cells are (vector of grades :math:`y \in \{0,1\}^K`, judge cell :math:`j`); as in
    :func:`~bayeval.methods.judge.compare.difference_posterior`, :math:`\rho = P(J) \sim
    \mathrm{Dirichlet}(a)` and the columns :math:`\mu_{\cdot j} \sim \mathrm{Dirichlet}(b_{\cdot
    j})` independently, :math:`A = \sum_j a_j`, :math:`B_j = \sum_y b_{yj}`. With
    :math:`\nu_{kj} = \sum_{y_k = 1}\mu_{yj}` and :math:`\theta_k = \sum_j\rho_j\nu_{kj}`:

    .. math::
        E\nu_{kj} = \frac{b_{S_k j}}{B_j},\quad
        E\nu_{ki}\nu_{li} = \frac{b_{S_k\cap S_l, i} + b_{S_k i}b_{S_l i}}{B_i(B_i + 1)},\quad
        E\theta_k\theta_l = \sum_{ij}\frac{a_i\delta_{ij} + a_ia_j}{A(A+1)}E\nu_{ki}\nu_{lj},

    :math:`S_k` the grade vectors with :math:`y_k = 1` and :math:`\nu_{ki}, \nu_{lj}`
    independent for :math:`i \ne j`.

    Parameters
    ----------
    table_ : array (2^K, J)
        Labelled prompts per grade vector (rows in binary order, the first system the highest
        bit) and judge cell.
    unlabelled : array (J,)
    alpha : array (2^K, J)
        Prior concentrations.

    Returns
    -------
    mean : array (K,)
    cov : array (K, K)

    Examples
    --------
    >>> t = np.array([[20, 5, 4, 6], [3, 10, 2, 5], [4, 2, 12, 5], [8, 4, 5, 60]])
    >>> mean, cov = score_posterior(t, np.array([900, 700, 800, 4000]), np.full((4, 4), 0.5))
    >>> mean.round(4).tolist(), round(float(np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])), 4)
    ([0.7, 0.6841], 0.0361)
    """
    b = np.asarray(alpha, float) + np.asarray(table_, float)
    a = b.sum(axis=0) + np.asarray(unlabelled, float)
    big_a, big_b = a.sum(), b.sum(axis=0)
    s = _grade_codes(int(np.log2(b.shape[0]))).astype(float)
    sb = s @ b  # (K, J)
    e_nu = sb / big_b
    cov_nu = (np.einsum("ky,ly,yj->klj", s, s, b) + np.einsum("kj,lj->klj", sb, sb)) / (
        big_b * (big_b + 1)) - np.einsum("kj,lj->klj", e_nu, e_nu)
    rho2 = (np.diag(a) + np.outer(a, a)) / (big_a * (big_a + 1))
    mean = e_nu @ a / big_a
    second = e_nu @ rho2 @ e_nu.T + cov_nu @ np.diag(rho2)
    return mean, second - np.outer(mean, mean)


def _bayes_draws(y, x_l, x_u, prior, rng):
    """Exact posterior mean, covariance and draws (POSTERIOR_DRAWS, K) of paired 0/1 rates."""
    k = y.shape[1]
    k_l, k_u, size = joint_cells(list(x_l.T), list(x_u.T))
    if 2**k * size > MAX_BAYES_CELLS:
        raise ValueError(f"method='bayes' needs at most {MAX_BAYES_CELLS} cells (grade vectors "
                         f"x judge vectors), got 2^{k} x {size}; use method='eif'.")
    code = (y.astype(np.int64) << np.arange(k - 1, -1, -1)).sum(axis=1)
    counts = np.bincount(code * size + k_l, minlength=2**k * size).reshape(2**k, size)
    unlabelled = np.bincount(k_u, minlength=size)
    alpha = np.full((2**k, size), 2.0**(1 - k) if prior is None else prior)
    mean, cov = score_posterior(counts, unlabelled, alpha)
    pi = posterior_draws(ClassCounts(counts, unlabelled), alpha, POSTERIOR_DRAWS, rng)
    return mean, cov, pi @ _grade_codes(k).T


# =========================================================================== joint law
def holm(p) -> np.ndarray:
    r"""Holm's step-down adjusted p-values: with :math:`p_{(1)} \le \dots \le p_{(M)}`,
    :math:`\tilde p_{(i)} = \max_{j \le i}\min(1, (M - j + 1)p_{(j)})`; NaN stays NaN.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok])]
    steps = np.minimum(1.0, (order.size - np.arange(order.size)) * p[order])
    out[order] = np.maximum.accumulate(steps)
    return out


def _normal_draws(mean, cov, draws: int, rng) -> np.ndarray:
    """Draws of N(mean, cov) for a positive semi-definite cov (eigen-decomposition)."""
    w, v = np.linalg.eigh(cov)
    return mean + rng.standard_normal((draws, mean.size)) @ (v * np.sqrt(np.clip(w, 0, None))).T


def _rank_probabilities(theta: np.ndarray) -> np.ndarray:
    """(K, K) P(rank of system k = r + 1) from draws (D, K); rank 1 the largest."""
    ranks = (theta[:, None, :] > theta[:, :, None]).sum(-1)
    k = theta.shape[1]
    return np.stack([np.bincount(ranks[:, j], minlength=k) for j in range(k)]) / len(theta)


def ranking_dataset(names, mean, cov, *, ci_prob: float, adjust: str, rng, draws=None,
                    low: float = -np.inf, high: float = np.inf) -> tuple[xr.Dataset, dict]:
    r"""The closed form of a ranking: scores, pairwise differences and rank probabilities.

    Frequentist (``draws=None``): Wald intervals of the scores (reported on ``[low, high]``) and
    differences, z-test p-values of :math:`\theta_a = \theta_b`, :math:`P(\theta_a > \theta_b)
    = \Phi(\hat\delta_{ab}/\mathrm{se}_{ab})`, the ``adjust``-ed intervals and p-values and
    :math:`P(\mathrm{rank} = r)` from :data:`RANK_DRAWS` draws of :math:`N(\hat\theta,
    \hat\Sigma)` (exact for two systems). Bayesian (posterior ``draws``): equal-tailed
    intervals, :math:`P(\theta_a > \theta_b)`, ranks and the simultaneous band
    (``"max_t"``: the ``ci_prob`` quantile of the largest standardised deviation; ``"holm"``:
    Bonferroni quantiles) from the draws; no p-values.

    Parameters
    ----------
    names : list of str
    mean : array (K,)
    cov : array (K, K)
    ci_prob : float
    adjust : {"max_t", "holm", "none"}
    rng : numpy.random.Generator
    draws : array (D, K), optional
        Posterior draws.
    low, high : float
        The range of the scores.

    Returns
    -------
    closed_form : xarray.Dataset
        Over ``system``: ``mean``, ``sd``, ``lower``, ``upper``, ``expected_rank``,
        ``prob_best``; ``cov`` over (``system``, ``other``); over ``pair`` (``"a - b"``, with
        coordinates ``first`` and ``second``): ``pair_mean``, ``pair_sd``, ``pair_lower``,
        ``pair_upper``, ``pair_lower_adjusted``, ``pair_upper_adjusted``, ``pair_p_value``,
        ``pair_p_value_adjusted``, ``pair_prob_greater``; ``prob_rank`` over (``system``,
        ``rank``).
    info : dict
        ``critical_value`` (of the adjusted intervals), ``rank_draws`` and ``rank_mcse`` (the
        largest Monte-Carlo standard error of a probability, 0 when exact).

    Examples
    --------
    >>> cf, info = ranking_dataset(["A", "B", "C"], np.array([0.7, 0.6, 0.5]),
    ...                            np.diag([0.03, 0.03, 0.03]) ** 2, ci_prob=0.95,
    ...                            adjust="max_t", rng=np.random.default_rng(0))
    >>> cf["pair_mean"].round(2).values.tolist(), round(info["critical_value"], 2)
    ([0.1, 0.2, 0.1], 2.35)
    >>> cf["prob_rank"].sel(system="A").round(3).values.tolist()
    [0.991, 0.009, 0.0]
    """
    mean, cov = np.asarray(mean, float), np.asarray(cov, float)
    k = mean.size
    pairs = list(combinations(range(k), 2))
    contrast = np.zeros((len(pairs), k))
    for row, (a, b) in enumerate(pairs):
        contrast[row, a], contrast[row, b] = 1.0, -1.0
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    delta = contrast @ mean
    delta_sd = np.sqrt(np.clip(np.einsum("pk,kl,pl->p", contrast, cov, contrast), 0, None))
    tail = 1 - ci_prob
    width = high - low
    if draws is None:
        z = z_value(ci_prob)
        est = Estimate(mean, sd)
        lo, hi = ((mean - z * sd, mean + z * sd) if not np.isfinite(width)
                  else reported(est, z, "wald", low, high)[1:])
        d_est = Estimate(delta, delta_sd)
        d_lo, d_hi = ((delta - z * delta_sd, delta + z * delta_sd) if not np.isfinite(width)
                      else reported(d_est, z, "wald", -width, width)[1:])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = delta / delta_sd
        p = np.array([p_value(Estimate(d, s)) if s > 0 else np.nan
                      for d, s in zip(delta, delta_sd, strict=True)])
        greater = np.where(delta_sd > 0, scipy.special.ndtr(t), (delta > 0) * 1.0)
        exact = k == 2
        theta = None if exact else _normal_draws(mean, cov, RANK_DRAWS, rng)
        if adjust == "none":
            crit, p_adj = z, p
        elif adjust == "holm":
            crit, p_adj = float(scipy.special.ndtri(1 - tail / (2 * len(pairs)))), holm(p)
        elif exact:
            crit, p_adj = z, p
        else:
            ok = delta_sd > 0
            dev = np.abs((theta - mean) @ contrast[ok].T) / delta_sd[ok]
            top = dev.max(axis=1)
            crit = float(np.quantile(top, ci_prob))
            p_adj = np.full(len(pairs), np.nan)
            p_adj[ok] = (top[:, None] >= np.abs(t[ok])).mean(axis=0)
        a_lo, a_hi = delta - crit * delta_sd, delta + crit * delta_sd
        if exact:
            first = np.where(delta_sd[0] > 0, greater[0], 0.5 if delta[0] == 0 else greater[0])
            prob_rank = np.array([[first, 1 - first], [1 - first, first]])
            n_draws, mcse = 0, 0.0
        else:
            prob_rank = _rank_probabilities(theta)
            n_draws, mcse = RANK_DRAWS, 0.5 / np.sqrt(RANK_DRAWS)
    else:
        lo, hi = np.quantile(draws, [tail / 2, 1 - tail / 2], axis=0)
        d_draws = draws @ contrast.T
        d_lo, d_hi = np.quantile(d_draws, [tail / 2, 1 - tail / 2], axis=0)
        p = p_adj = np.full(len(pairs), np.nan)
        greater = (d_draws > 0).mean(axis=0)
        if adjust == "max_t":
            crit = float(np.quantile(np.abs((d_draws - delta) / delta_sd).max(axis=1), ci_prob))
            a_lo, a_hi = delta - crit * delta_sd, delta + crit * delta_sd
        else:
            level = tail / (2 * len(pairs)) if adjust == "holm" else tail / 2
            a_lo, a_hi = np.quantile(d_draws, [level, 1 - level], axis=0)
            crit = np.nan
        prob_rank = _rank_probabilities(draws)
        n_draws, mcse = len(draws), 0.5 / np.sqrt(len(draws))
    labels = [f"{names[a]} - {names[b]}" for a, b in pairs]
    ranks = np.arange(1, k + 1)
    data = {"mean": ("system", mean), "sd": ("system", sd), "lower": ("system", lo),
            "upper": ("system", hi), "expected_rank": ("system", prob_rank @ ranks),
            "prob_best": ("system", prob_rank[:, 0]), "cov": (("system", "other"), cov),
            "prob_rank": (("system", "rank"), prob_rank)}
    for var, values in (("mean", delta), ("sd", delta_sd), ("lower", d_lo), ("upper", d_hi),
                        ("lower_adjusted", a_lo), ("upper_adjusted", a_hi), ("p_value", p),
                        ("p_value_adjusted", p_adj), ("prob_greater", greater)):
        data["pair_" + var] = ("pair", np.asarray(values, float))
    coords = {"system": names, "other": names, "rank": ranks, "pair": labels,
              "first": ("pair", [names[a] for a, _ in pairs]),
              "second": ("pair", [names[b] for _, b in pairs])}
    return xr.Dataset(data, coords=coords), {"critical_value": float(crit),
                                             "rank_draws": n_draws, "rank_mcse": float(mcse)}


# ============================================================================ entry point
def rank_systems(y, yhat, yhat_unlabeled, *, method: str = "eif", paired: bool = True,
                 ci_prob: float = 0.95, adjust: str = "max_t", mu_model: str | None = None,
                 y_range=None, prior: float | None = None, sample_weight=None,
                 sample_weight_unlabeled=None, random_seed: int | None = None) -> JudgeRanking:
    r"""Scores, pairwise differences and the ranking of :math:`K \ge 2` systems graded by a
    judge and a few humans.

    See :mod:`bayeval.methods.judge.ranking` for the estimators and the joint law.

    Parameters
    ----------
    y : dict, DataFrame or array of shape (m, K)
        Human grades of the systems' answers on the labelled prompts, one column per system (a
        dict's keys or a DataFrame's columns name the systems, else ``"A"``, ``"B"``...): 0/1,
        numbers in [0, 1], or ratings on ``y_range``. Unpaired: a dict ``{system: grades}``.
    yhat : same form as ``y``
        The judge's grades of the same answers (0/1, ratings or scores); rows pair with ``y``
        by pandas index where both have one, else by position.
    yhat_unlabeled : same form as ``y``
        The judge's grades on the prompts without human grades (unpaired: each system's own).
    method : {"eif", "ppi_pp", "ppi", "classical", "naive", "bayes"}
        The estimator of the scores (default the EIF); ``"bayes"`` (0/1 grades) the exact
        posterior.
    paired : bool
        True (default): the systems answer the same prompts, the rows of every column pair up.
        False: each system is graded on its own prompts (dicts of arrays of any lengths).
    ci_prob : float
        Interval level (default 0.95).
    adjust : {"max_t", "holm", "none"}
        The multiplicity adjustment of the differences' ``lower_adjusted``, ``upper_adjusted``
        and ``p_value_adjusted``: simultaneous max-|t| (default), Holm (Bonferroni intervals)
        or none.
    mu_model : {"cell", "linear"}, optional
        The EIF's calibration curve; default cells up to
        :data:`~bayeval.methods.judge.compare.MAX_CELLS` distinct vectors of judge values, else
        the least-squares plane.
    y_range : (low, high), optional
        The scale of graded human ratings, e.g. ``(1, 5)``.
    prior : float, optional
        ``bayes``: Dirichlet concentration of each cell (grade vector, judge vector); default
        :math:`2^{1-K}`, a total of 2 per judge vector (Jeffreys' 1/2 per cell for two systems,
        as :func:`~bayeval.methods.judge.compare.compare_systems`; unpaired, each system's own
        table with :math:`K = 1`: 1 per cell).
    sample_weight : array-like, optional
        Frequentist estimators: a sampling weight per labelled prompt, :math:`w_i \propto
        1/\pi_i` when prompt :math:`i` was sent to the humans with probability :math:`\pi_i`
        (a stratified or verdict-dependent design); relative (rescaled to mean 1). The scores
        become the weighted (Hájek) estimators with their sandwich covariance across systems
        (:func:`weighted_scores`). A pandas Series pairs with ``y``'s rows by index;
        unpaired, a dict ``{system: weights}``. ``bayes`` has no weighted form.
    sample_weight_unlabeled : array-like, optional
        The same for the unlabelled prompts, :math:`\propto 1/(1 - \pi_i)` (default uniform).
    random_seed : int, optional
        Seed of the draws (ranks, max-|t| quantile, posterior).

    Returns
    -------
    JudgeRanking
        :meth:`~JudgeRanking.summary` (scores), :meth:`~JudgeRanking.differences` and
        :meth:`~JudgeRanking.ranks`; the ``data`` group holds ``m`` and ``n`` per system,
        ``lam`` (``ppi_pp``), ``critical_value``, ``rank_draws`` and ``rank_mcse``; with
        ``bayes`` the posterior group holds ``theta`` over ``system``.

    Warns
    -----
    UserWarning
        Unlabelled prompts whose judge vector no labelled prompt has (their cell mean falls
        back to the labelled mean); a score whose standard error is 0.

    Raises
    ------
    ValueError
        Fewer than two systems, names that differ across arguments, lengths that differ
        (paired), grades outside the scale, fewer than two labelled or unlabelled prompts,
        ``bayes`` on grades other than 0/1 or on more than :data:`MAX_BAYES_CELLS` cells, or
        with sampling weights; sampling weights of the wrong length, negative or not finite.

    See Also
    --------
    bayeval.methods.judge.compare.compare_systems : two systems, every estimator at once.
    bayeval.methods.judge.bradley_terry.bradley_terry : strengths from pairwise verdicts.

    Examples
    --------
    Four systems on 3,000 prompts (true pass rates 0.62, 0.58, 0.55, 0.45); the judge passes
    90 % of right answers and 30 % of wrong ones; humans grade 200 prompts:

    >>> import pandas as pd
    >>> rng = np.random.default_rng(7)
    >>> easy = rng.random(3000) < 0.3
    >>> right = easy[:, None] | (rng.random((3000, 4)) < [0.457, 0.4, 0.357, 0.214])
    >>> said = np.where(right, rng.random((3000, 4)) < 0.9, rng.random((3000, 4)) < 0.3)
    >>> names = ["w", "x", "y", "z"]
    >>> h, j = pd.DataFrame(right, columns=names), pd.DataFrame(said, columns=names)
    >>> ev = rank_systems(h[:200], j[:200], j[200:], random_seed=0)
    >>> ev.summary()[["mean", "sd", "expected_rank", "prob_best"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_ranking (eif), closed form: 95% Wald confidence intervals
             mean     sd  expected_rank  prob_best
    system
    w       0.599  0.027          1.580      0.434
    x       0.605  0.024          1.441      0.565
    y       0.529  0.024          2.980      0.001
    z       0.417  0.026          4.000      0.000
    >>> ev.differences()[["mean", "lower_adjusted", "upper_adjusted", "prob_greater"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge_ranking (eif), differences: 95% Wald intervals, simultaneous (max-|t|, c = 2.573)
             mean  lower_adjusted  upper_adjusted  prob_greater
    pair
    w - x  -0.006          -0.091           0.079         0.433
    w - y   0.071          -0.012           0.154         0.986
    w - z   0.182           0.098           0.267         1.000
    x - y   0.077          -0.002           0.155         0.994
    x - z   0.188           0.115           0.261         1.000
    y - z   0.111           0.029           0.193         1.000

    w and x are tied (each best with probability about 1/2), z is last for sure; the 200 human
    grades alone (``method="classical"``) give sds of 0.035, the judge brings them to
    0.024-0.027. Humans grading the prompts where the judge's verdicts differ with probability
    0.12 and the others with 0.03, the weights :math:`1/\pi` and :math:`1/(1 - \pi)`:

    >>> pi = np.where(said.min(axis=1) != said.max(axis=1), 0.12, 0.03)
    >>> lab = rng.random(3000) < pi
    >>> ev = rank_systems(h[lab], j[lab], j[~lab], sample_weight=1 / pi[lab],
    ...                   sample_weight_unlabeled=1 / (1 - pi[~lab]), random_seed=0)
    >>> ev.summary()["mean"].round(3).tolist()
    [0.62, 0.59, 0.558, 0.461]
    """
    method = as_choice(method, "method", RANK_ESTIMATORS)
    ci_prob = as_ci_prob(ci_prob)
    adjust = as_choice(adjust, "adjust", ADJUSTMENTS)
    if mu_model is not None:
        mu_model = as_choice(mu_model, "mu_model", ("cell", "linear"))
    if not isinstance(paired, bool | np.bool_):
        raise ValueError(f"paired must be True or False, got {describe(paired)}.")
    if prior is not None:
        try:
            prior = float(prior)
        except (TypeError, ValueError):
            raise ValueError(f"prior must be a positive number, got {describe(prior)}.") from None
        if not (np.isfinite(prior) and prior > 0):
            raise ValueError(f"prior must be a positive Dirichlet concentration, got {prior:g}.")
    rng = as_seed(random_seed)
    weighted = sample_weight is not None or sample_weight_unlabeled is not None
    if weighted and method == "bayes":
        raise ValueError("sample_weight and sample_weight_unlabeled apply to the frequentist "
                         "estimators; method='bayes' is a Dirichlet model of a random subset of "
                         "the prompts and has no sampling weights. Use method='eif'.")
    if paired:
        names, ys, yhs, yus, sampled = _paired(y, yhat, yhat_unlabeled, sample_weight,
                                               sample_weight_unlabeled)
        blocks = [(np.column_stack(ys), np.column_stack(yhs), np.column_stack(yus))]
    else:
        names, triples, sampled = _unpaired(y, yhat, yhat_unlabeled, sample_weight,
                                            sample_weight_unlabeled)
        ys = [t[0] for t in triples]
        blocks = [(a[:, None], b[:, None], c[:, None]) for a, b, c in triples]
    low, high, binary = grade_scale(ys, names, y_range)
    if method == "bayes" and not binary:
        raise ValueError("method='bayes' needs 0/1 human grades; use method='eif'.")
    for (b_y, _, b_u), name in zip(blocks, names if not paired else ["every system"],
                                   strict=False):
        if b_y.shape[0] < 2 or b_u.shape[0] < 2:
            raise ValueError(f"{name} needs at least two labelled and two unlabelled prompts, "
                             f"got {b_y.shape[0]} and {b_u.shape[0]}.")
    notes: list[str] = []
    means, covs, draws, used, lams, kish = [], [], [], [], [], []
    for (b_y, b_l, b_u), (b_w, b_v) in zip(blocks, sampled, strict=True):
        k_l, k_u, size = joint_cells(list(b_l.T), list(b_u.T))
        used.append(mu_model or ("cell" if size <= MAX_CELLS else "linear"))
        if method == "bayes":
            mean, cov, theta = _bayes_draws(b_y, b_l, b_u, prior, rng)
            draws.append(theta)
        elif weighted:
            mean, cov = weighted_scores(b_y, b_l, b_u, method, used[-1], b_w, b_v)
            b_w, b_v = sampling_weights(b_w, len(b_y), ""), sampling_weights(b_v, len(b_u), "")
            lams += list(_weighted_lambdas(b_y, b_l, b_u, b_w, b_v))
            kish += [[x.size**2 / np.sum(x**2) for x in (b_w, b_v)]] * b_y.shape[1]
        else:
            mean, phi = influence_functions(b_y, b_l, b_u, method, used[-1])
            cov = phi.T @ phi / phi.shape[0] ** 2
        empty = np.setdiff1d(k_u, k_l)
        if method in ("eif", "bayes") and used[-1] == "cell" and empty.size:
            notes.append(f"{np.isin(k_u, empty).mean():.1%} of the unlabelled prompts have a "
                         "vector of judge values that no labelled prompt has; their cell mean "
                         "falls back to the labelled mean (use mu_model='linear').")
        means.append(mean)
        covs.append(cov)
    mean = np.concatenate(means)
    cov = scipy.linalg.block_diag(*covs)
    zero = [n for n, v in zip(names, np.diag(cov), strict=True) if not v > 0]
    if zero:
        notes.append(f"the standard error of {zero} is 0 (constant grades): their differences "
                     "have no p-value and their ranks are certain under the normal law.")
    closed, info = ranking_dataset(
        names, mean, cov, ci_prob=ci_prob, adjust=adjust, rng=rng,
        draws=np.concatenate(draws, axis=1) if draws else None, low=low, high=high)
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    sizes = [(b[0].shape[0], b[2].shape[0]) for b in blocks for _ in range(b[0].shape[1])]
    info.update(m=("system", [s[0] for s in sizes]), n=("system", [s[1] for s in sizes]),
                mu_model=used[0] if paired else ("system", used), paired=paired,
                y_low=low, y_high=high, adjust=adjust)
    if method == "ppi_pp":
        info["lam"] = ("system", lams if weighted else [float(np.clip(ppi_pp_lambda(moments(
            b[0][:, j], b[1][:, j], b[2][:, j])), 0, 1)) for b in blocks
            for j in range(b[0].shape[1])])
    if weighted:  # Kish's effective sizes of each system's labelled and unlabelled prompts
        info.update(m_kish=("system", [float(k[0]) for k in kish]),
                    n_kish=("system", [float(k[1]) for k in kish]))
    post = None
    if draws:
        post = xr.DataTree.from_dict({"posterior": xr.Dataset(
            {"theta": ((*SAMPLE_DIMS, "system"), np.concatenate(draws, axis=1)[None])},
            coords={"system": names})})
        info["prior"] = 2.0 ** (1 - blocks[0][0].shape[1]) if prior is None else prior
    scale = "rates" if (low, high) == (0.0, 1.0) else f"mean ratings on [{low:g}, {high:g}]"
    return JudgeRanking.create(
        method="judge_ranking", variant=method, closed_form=closed, draws=post,
        estimand=None if post is None else "posterior/theta", iid_draws=True, ci_prob=ci_prob,
        ci_kind="eti", random_seed=random_seed, assumptions=ASSUMPTIONS, warnings=notes,
        data=xr.Dataset(info, coords={"system": names}),
        interval_kind=None if post is not None else "wald",
        description=(f"{scale} of {len(names)} systems ({'paired' if paired else 'unpaired'}"
                     f"), {method}, differences adjusted by {adjust}"
                     + (", sampling weights" if weighted else "")))


class JudgeRanking(Evaluation, method="judge_ranking"):
    """The result of :func:`rank_systems` and of
    :func:`~bayeval.methods.judge.bradley_terry.bradley_terry`: scores (strengths) per system,
    their pairwise differences and the law of the ranking.

    Examples
    --------
    >>> y = {"A": [1, 0, 1, 1, 0], "B": [0, 0, 1, 0, 0], "C": [1, 1, 1, 0, 1]}
    >>> yu = {"A": [1, 0, 1], "B": [0, 1, 0], "C": [1, 1, 1]}
    >>> ev = rank_systems(y, y, yu, method="classical", random_seed=0)
    >>> type(ev).__name__, ev.summary()["mean"].round(2).tolist()
    ('JudgeRanking', [0.6, 0.2, 0.8])
    """

    def _caption(self, what: str) -> str:
        meta = self.meta
        return f"{meta['method']} ({meta['variant']}), {what}"

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """:meth:`Evaluation.summary` of the closed form by default: per system the score
        (``mean``, ``sd``, ``lower``, ``upper``), ``expected_rank`` and ``prob_best``
        (:math:`P(\\mathrm{rank} = 1)`); ``source="draws"`` summarises the posterior draws.

        Examples
        --------
        >>> y = {"A": [1, 0, 1, 1, 0], "B": [0, 0, 1, 0, 0], "C": [1, 1, 1, 0, 1]}
        >>> yu = {"A": [1, 0, 1], "B": [0, 1, 0], "C": [1, 1, 1]}
        >>> rank_systems(y, y, yu, random_seed=0).summary().columns.tolist()
        ['mean', 'sd', 'lower', 'upper', 'expected_rank', 'prob_best']
        """
        return super().summary(source or "closed_form", ci_prob, ci_kind)

    def differences(self) -> Table:
        r"""One row per pair ``"a - b"``: :math:`\theta_a - \theta_b` (``mean``, ``sd``,
        ``lower``, ``upper``), the adjusted interval and p-value, the p-value of
        :math:`\theta_a = \theta_b` and ``prob_greater`` :math:`= P(\theta_a > \theta_b)`
        (Bradley–Terry: also the win probability :math:`P(a \text{ beats } b)` and its
        intervals).

        Examples
        --------
        >>> y = {"A": [1, 0, 1, 1, 0], "B": [0, 0, 1, 0, 0], "C": [1, 1, 1, 0, 1]}
        >>> yu = {"A": [1, 0, 1], "B": [0, 1, 0], "C": [1, 1, 1]}
        >>> ev = rank_systems(y, y, yu, method="classical", random_seed=0)
        >>> ev.differences()["mean"].round(2).to_dict()
        {'A - B': 0.4, 'A - C': -0.2, 'B - C': -0.6}
        """
        cf = self.closed_form
        cols = [v for v in cf.data_vars if v.startswith("pair_")]
        frame = cf[cols].to_dataframe()[cols].rename(columns=lambda c: c[len("pair_"):])
        data = self.tree["data"].to_dataset()
        adjust = data.attrs.get("adjust", str(data["adjust"].values))
        kind = {"max_t": f"simultaneous (max-|t|, c = {float(data['critical_value']):.4g})",
                "holm": "Holm p-values, Bonferroni intervals", "none": "not adjusted"}[adjust]
        source = "posterior draws" if self.draws is not None else "Wald"
        return table(frame, self._caption(f"differences: {self.ci_prob:.0%} {source} "
                                          f"intervals, {kind}"), ci_prob=self.ci_prob)

    def ranks(self) -> Table:
        """:math:`P(\\mathrm{rank} = r)` per system (columns ``1``... ``K``; rank 1 the highest
        score) and ``expected_rank``; the caption states the Monte-Carlo error.

        Examples
        --------
        >>> y = {"A": [1, 0, 1, 1, 0], "B": [0, 0, 1, 0, 0], "C": [1, 1, 1, 0, 1]}
        >>> yu = {"A": [1, 0, 1], "B": [0, 1, 0], "C": [1, 1, 1]}
        >>> ev = rank_systems(y, y, yu, method="classical", random_seed=0)
        >>> ev.ranks()[[1, 2, 3]].sum(axis=1).round(12).tolist(), ev.ranks().columns.tolist()
        ([1.0, 1.0, 1.0], [1, 2, 3, 'expected_rank'])
        """
        cf = self.closed_form
        frame = cf["prob_rank"].to_pandas()
        frame.columns = [int(r) for r in frame.columns]
        frame["expected_rank"] = cf["expected_rank"].to_pandas()
        data = self.tree["data"].to_dataset()
        n, mcse = int(data["rank_draws"]), float(data["rank_mcse"])
        how = ("exact (two systems)" if n == 0 and self.draws is None else
               f"{n:,} draws, Monte-Carlo se <= {mcse:.4f}")
        return table(frame, self._caption(f"P(rank = r), {how}"), rank_draws=n, rank_mcse=mcse)
