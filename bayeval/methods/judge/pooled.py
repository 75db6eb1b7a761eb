r"""Several judges at once: one rate from J judges' verdicts on every item and a few human labels.

Every item gets a 0/1 verdict :math:`\hat Y_{ij}` from each of :math:`J` judges (two or three
LLMs, a heuristic); humans label a random subset of :math:`m` items, :math:`Y_i \in \{0, 1\}`.
The estimand is :math:`\theta = P(Y = 1)`, as in :func:`bayeval.judge`.

**Pooled EIF (the fast path).** The efficient-influence-function estimator of Chen et al.
(2026, eq. 19) with a calibration curve of all the judges' verdicts :math:`x_i = (\hat Y_{i1},
\dots, \hat Y_{iJ})`,

.. math::
    \hat\theta = \frac1N\sum_{i=1}^N\hat\mu(x_i) + \frac1m\sum_{j \in L}\{Y_j -
    \hat\mu(x_j)\},

consistent whatever :math:`\hat\mu` is (the residual term corrects its error) and efficient
when :math:`\hat\mu \approx E[Y \mid x]`. It assumes nothing about how the judges' errors
depend on each other: correlated judges (LLMs trained on similar data) are handled, and a judge
that only repeats another adds nothing rather than false precision. Two curves:

* ``mu_model="linear"`` (the default), the least-squares plane :math:`\hat\mu(x) = a +
  b^\top x` fitted on the labelled items (:func:`eif_linear_loo`): :math:`J + 1` coefficients,
  stable with 50 labelled items; its variance uses the leave-one-out residuals :math:`(Y_j -
  \hat\mu(x_j))/(1 - h_j)` (:math:`h_j` the leverage, MacKinnon and White 1985's HC3), so
  the fit's overfitting of a few labelled items does not shorten the interval;
* ``mu_model="cell"``, the saturated curve: the labelled mean of :math:`Y` per verdict
  *pattern* (up to :math:`2^J` cells; :func:`pattern_eif`), efficient among all estimators
  that use the verdicts, but noisy until every pattern has enough labelled items. A pattern
  with fewer than ``min_labelled`` labelled items is pooled with the other sparse patterns
  having the same number of positive verdicts, and such groups with their neighbours in that
  number (:func:`pattern_cells`): the cells depend on the verdicts only, never on :math:`Y`,
  so the estimator stays unbiased.

Beside it, each judge alone (:func:`bayeval.judge`'s ``"eif"``) shows what pooling buys, as the
``n_effective`` of each: :math:`\hat\theta(1 - \hat\theta)/\widehat{\mathrm{se}}^2`, the
number of human labels the estimate is worth.

**The latent-class model** (``method="pymc"``,
:func:`~bayeval.methods.judge.pooled_models.pooled_model`) is Dawid and Skene's (1979): a
shared latent truth, judges conditionally independent given it, each with its own sensitivity
and specificity pooled hierarchically.
Conditional independence is an assumption the labelled items can refute:
:func:`error_dependence` tests it per pair of judges, and a warning says when they do.

References
----------
Chen, Lu, Li, Guo, Li (2026), Efficient inference for noisy LLM-as-a-judge evaluation.
MacKinnon, White (1985), Some heteroskedasticity-consistent covariance matrix estimators with
improved finite sample properties, J. Econometrics 29.
Dawid, Skene (1979), Maximum likelihood estimation of observer error-rates using the EM
algorithm, JRSS C 28.
Mantel, Haenszel (1959), Statistical aspects of the analysis of data from retrospective studies
of disease, JNCI 22.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayeval.check import sampler_tests
from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.methods.judge.fast import Counts, Estimate, cell_variance, eif_cells, reported, z_value
from bayeval.methods.judge.graded import efficiency
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_binary,
    as_choice,
    as_ci_prob,
    as_positive_int,
    as_sample_kwargs,
    describe,
)

__all__ = ["JudgePooled", "eif_linear_loo", "error_dependence", "pattern_cells", "pattern_eif",
           "pool_judges"]

METHODS = ("eif", "pymc", "both")
CI_KINDS = ("logit", "wald")
MU_MODELS = ("linear", "cell")
#: ``mu_model="cell"``: the fewest labelled items of a verdict pattern that is a cell of its own
MIN_LABELLED = 10
#: the name of the pooled estimate on the ``judge`` coordinate
POOLED = "pooled"
#: more judges than this make 2^J patterns, too many cells for the labelled items
MAX_JUDGES = 10
#: family-wise level of the test of conditional independence (Bonferroni over the pairs)
DEPENDENCE_LEVEL = 0.05
#: posterior mean within 0.25 SE of the pooled EIF plus 4 Hausman sd (Bernstein–von Mises)
AGREEMENT_MEAN = 0.25
ASSUMPTIONS = (
    "The human-labelled items are a random subset of all items (missing completely at random), "
    "the human labels are the truth, every judge is run the same way on every item, and items "
    "are independent. The pooled EIF needs nothing else: the judges' errors may depend on each "
    "other. The latent-class model (method='pymc') also assumes the judges are conditionally "
    "independent given the true label; error_dependence() tests this on the labelled items.")


# ============================================================================= cells and EIF
def pattern_cells(verdicts: np.ndarray, labelled: int, min_labelled: int
                  ) -> tuple[np.ndarray, int]:
    r"""The calibration cell of every item: its verdict pattern, sparse patterns pooled.

    A pattern (the vector of the :math:`J` verdicts) with at least ``min_labelled`` labelled
    items is a cell of its own. The others are grouped by their number of positive verdicts
    :math:`v = \sum_j \hat Y_{ij}`, and these groups, in increasing :math:`v`, are merged with
    their successors until each holds ``min_labelled`` labelled items; a short last group joins
    the one before it. The cells depend on the verdicts and on which items are labelled, never
    on the human labels.

    Parameters
    ----------
    verdicts : array of 0/1, shape (N, J)
        The judges' verdicts, the ``labelled`` labelled items first.
    labelled : int
        The number :math:`m` of labelled items (the first rows).
    min_labelled : int
        The fewest labelled items a pattern needs to be a cell of its own.

    Returns
    -------
    cells : numpy.ndarray of int, shape (N,)
        The cell of every item, numbered from 0.
    size : int
        The number of cells.

    Examples
    --------
    Patterns 00 and 11 have 3 labelled items each; 01 and 10 (one positive verdict, one
    labelled item each) are pooled into one cell:

    >>> v = np.array([[0, 0]] * 3 + [[1, 1]] * 3 + [[0, 1], [1, 0], [0, 1]])
    >>> pattern_cells(v, labelled=8, min_labelled=2)
    (array([1, 1, 1, 2, 2, 2, 0, 0, 0]), 3)
    """
    verdicts = np.asarray(verdicts, dtype=np.int64)
    codes = verdicts @ (1 << np.arange(verdicts.shape[1]))
    per_pattern = np.bincount(codes[:labelled], minlength=1 << verdicts.shape[1])
    dense = per_pattern[codes] >= min_labelled
    votes = verdicts.sum(axis=1)
    groups: list[list[int]] = []  # vote counts of the sparse patterns, merged in order
    total = 0
    for v in np.unique(votes[~dense]):
        if not groups or total >= min_labelled:
            groups.append([])
            total = 0
        groups[-1].append(int(v))
        total += int(np.count_nonzero(~dense[:labelled] & (votes[:labelled] == v)))
    if len(groups) > 1 and total < min_labelled:
        last = groups.pop()
        groups[-1] += last
    key = np.where(dense, codes, -1)
    for g, members in enumerate(groups):
        key = np.where(~dense & np.isin(votes, members), -2 - g, key)
    _, cells = np.unique(key, return_inverse=True)
    return cells.ravel(), int(cells.max()) + 1


def pattern_eif(y, cells_labelled, cells_unlabelled, size: int) -> Estimate:
    r"""The EIF estimate of :math:`P(Y = 1)` with the given calibration cells.

    :func:`~bayeval.methods.judge.fast.eif_cells`'s estimate; in its variance a cell whose
    labelled items all agree (:math:`\hat\mu_k \in \{0, 1\}`) has the within-cell variance
    :math:`\tilde\mu_k(1 - \tilde\mu_k)`, :math:`\tilde\mu_k = (s_k + 1/2)/(c_k + 1)`, instead
    of 0:

    .. math::
        \widehat{\mathrm{se}}^2 = \frac1N\sum_k\bar p_k(\hat\mu_k - \hat\theta)^2
            + \sum_k\bar p_k^2\frac{\sigma_k^2}{c_k},\qquad
        \sigma_k^2 = \begin{cases}\hat\mu_k(1-\hat\mu_k) & 0 < \hat\mu_k < 1\\
            \tilde\mu_k(1-\tilde\mu_k) & \text{otherwise}\end{cases}

    (:func:`~bayeval.methods.judge.fast.cell_variance` for cells without labelled items).

    Parameters
    ----------
    y : array of 0/1, shape (m,)
        The human labels.
    cells_labelled, cells_unlabelled : array of int
        The cell of every labelled and unlabelled item (:func:`pattern_cells`).
    size : int
        The number of cells.

    Returns
    -------
    Estimate

    Examples
    --------
    One cell per verdict of a single judge is the EIF of :func:`bayeval.judge`:

    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> y = np.repeat([1, 1, 0, 0], [36, 14, 29, 121])
    >>> k = np.repeat([1, 0, 1, 0], [36, 14, 29, 121])
    >>> [round(float(v), 4) for v in pattern_eif(y, k, np.repeat([1, 0], [627, 1173]), 2)]
    [0.2595, 0.0278]
    """
    c = np.bincount(cells_labelled, minlength=size).astype(float)
    s = np.bincount(cells_labelled, weights=y, minlength=size)
    u = np.bincount(cells_unlabelled, minlength=size).astype(float)
    theta = float(eif_cells(c, s, u).estimate)
    seen = c > 0
    mu = np.where(seen, s / np.where(seen, c, 1.0), s.sum() / c.sum())
    smooth = (s + 0.5) / (c + 1.0)
    sigma2 = np.where((mu > 0) & (mu < 1), mu * (1 - mu), smooth * (1 - smooth))
    p_bar = (c + u) / (c.sum() + u.sum())
    y_bar = s.sum() / c.sum()
    var = (np.sum(p_bar * (mu - theta) ** 2) / (c.sum() + u.sum())
           + cell_variance(c, p_bar, sigma2, np.array([y_bar * (1 - y_bar)]))[0])
    return Estimate(theta, float(np.sqrt(var)))


def eif_linear_loo(y, x_labelled, x_unlabelled) -> Estimate:
    r"""EIF estimate with a least-squares calibration plane and leave-one-out residuals.

    .. math::
        \hat\theta = \frac1N\sum_{i=1}^N\hat\mu(x_i) + \frac1m\sum_{j\in L}e_j,\qquad
        \widehat{\mathrm{se}}^2 = \frac{s_N^2(\hat\mu(x))}{N}
            + \frac1{m^2}\sum_{j\in L}\Big(\frac{e_j}{1 - h_j}\Big)^2,

    with :math:`\hat\mu(x) = a + b^\top x` the least-squares fit on the labelled items,
    :math:`e_j` its residuals (their mean is 0) and :math:`h_j` the leverages (the diagonal of
    the hat matrix, capped at :math:`1 - 1/m`): :math:`e_j/(1 - h_j)` is item :math:`j`'s
    residual from the fit without it, so the variance counts the error of the :math:`J + 1`
    fitted coefficients (HC3, MacKinnon and White 1985). Collinear columns (two judges with the
    same verdicts on the labelled items) are fitted by the minimum-norm least squares.

    Parameters
    ----------
    y : array-like, shape (m,)
        The human labels.
    x_labelled, x_unlabelled : array-like, shape (m, J) and (n, J)
        The judges' verdicts on the labelled and unlabelled items.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> y = np.array([1.0, 1, 0, 0, 1, 0, 0, 1])
    >>> x = np.array([[1, 1], [1, 0], [0, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])
    >>> [round(float(v), 4) for v in eif_linear_loo(y, x, np.array([[1, 1], [0, 0], [1, 0]]))]
    [0.5, 0.2289]
    """
    y = np.asarray(y, float)
    design = np.column_stack([np.ones(y.size), np.asarray(x_labelled, float)])
    design_u = np.column_stack([np.ones(len(x_unlabelled)), np.asarray(x_unlabelled, float)])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    fit = np.concatenate([design @ coef, design_u @ coef])
    resid = y - fit[:y.size]
    leverage = np.einsum("ij,jk,ik->i", design, np.linalg.pinv(design.T @ design), design)
    loo = resid / (1 - np.minimum(leverage, 1 - 1 / y.size))
    var = fit.var() / fit.size + np.mean(loo**2) / y.size
    return Estimate(float(fit.mean() + resid.mean()), float(np.sqrt(var)))


def error_dependence(y, verdicts, names) -> Table:
    r"""Test, per pair of judges, that their verdicts are independent given the true label.

    Among the labelled items of each class :math:`a`, the 2×2 table of the two judges' verdicts
    has :math:`x_a` items both judges call 1, :math:`r_a` and :math:`c_a` that each calls 1, out
    of :math:`t_a`. The Cochran–Mantel–Haenszel statistic (Mantel and Haenszel 1959)

    .. math::
        X^2 = \frac{\big(\sum_a x_a - r_ac_a/t_a\big)^2}
            {\sum_a r_a(t_a - r_a)c_a(t_a - c_a)/(t_a^2(t_a - 1))}

    is :math:`\chi^2_1` under conditional independence; the common odds ratio
    :math:`\sum_a x_ad_a/t_a \big/ \sum_a b_ae_a/t_a` (:math:`d_a` both 0, :math:`b_a, e_a`
    the two discordant cells) is above 1 when the two judges err together. A pair is flagged
    ``dependent`` when its p-value is below :data:`DEPENDENCE_LEVEL` divided by the number of
    pairs (Bonferroni). With few labelled items the test has little power: not flagged is not
    proof of independence.

    Parameters
    ----------
    y : array of 0/1, shape (m,)
        The human labels.
    verdicts : array of 0/1, shape (m, J)
        The judges' verdicts on the same items.
    names : list of str
        The judges' names.

    Returns
    -------
    Table
        Indexed by ``pair`` (``"a & b"``), with columns ``odds_ratio``, ``statistic``,
        ``p_value``, ``dependent``; ``attrs["passed"]`` is True when no pair is flagged.

    Examples
    --------
    Judges b and c copy each other's errors, a errs on its own:

    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(300) < 0.4
    >>> shared = rng.random(300) < 0.15
    >>> own = rng.random((300, 3)) < 0.1
    >>> v = y[:, None] ^ (own | (shared[:, None] & np.array([False, True, True])))
    >>> error_dependence(y, v, ["a", "b", "c"])[["odds_ratio", "dependent"]].round(2)
    ... # doctest: +NORMALIZE_WHITESPACE
    judges' verdicts given the true label (Mantel–Haenszel, 5% Bonferroni): dependent: b & c
           odds_ratio  dependent
    pair
    a & b        0.45      False
    a & c        0.66      False
    b & c       11.85       True
    """
    y = np.asarray(y, dtype=bool)
    v = np.asarray(verdicts, dtype=bool)
    pairs = list(combinations(range(v.shape[1]), 2))
    rows = []
    for j, k in pairs:
        dev = var = num = den = 0.0
        for cls in (True, False):
            a, b = v[y == cls, j], v[y == cls, k]
            t = a.size
            if t < 2:
                continue
            x, r, c = np.count_nonzero(a & b), np.count_nonzero(a), np.count_nonzero(b)
            dev += x - r * c / t
            var += r * (t - r) * c * (t - c) / (t**2 * (t - 1))
            num += x * np.count_nonzero(~a & ~b) / t
            den += np.count_nonzero(a & ~b) * np.count_nonzero(~a & b) / t
        stat = dev**2 / var if var > 0 else np.nan
        p = float(special.chdtrc(1, stat)) if var > 0 else np.nan
        odds = num / den if den > 0 else np.inf if num > 0 else np.nan
        rows.append({"odds_ratio": odds, "statistic": stat, "p_value": p})
    return _flag_dependent(pd.DataFrame(rows, index=pd.Index(
        [f"{names[j]} & {names[k]}" for j, k in pairs], name="pair")))


def _flag_dependent(frame: pd.DataFrame) -> Table:
    """The pairs' tests with the column ``dependent`` (Bonferroni) and the caption."""
    frame["dependent"] = frame["p_value"] < DEPENDENCE_LEVEL / len(frame)
    flagged = frame.index[frame["dependent"]].tolist()
    caption = (f"judges' verdicts given the true label (Mantel–Haenszel, "
               f"{100 * DEPENDENCE_LEVEL:g}% Bonferroni): "
               + (f"dependent: {', '.join(flagged)}" if flagged else "no pair flagged"))
    return table(frame, caption, passed=not flagged)


# ============================================================================ input handling
def judge_columns(x, name: str) -> tuple[list | None, list]:
    """(judge names or None, one column per judge) of a mapping, DataFrame or 2-D array.

    Examples
    --------
    >>> judge_columns({"gpt": [1, 0], "claude": [0, 0]}, "yhat")
    (['gpt', 'claude'], [[1, 0], [0, 0]])
    >>> judge_columns(np.zeros((3, 2)), "yhat")[0] is None
    True
    """
    if isinstance(x, Mapping | pd.DataFrame):  # keys or columns, each one judge's verdicts
        names = list(x)
        cols = [x[k] for k in names]
    else:
        arr = np.empty(0) if isinstance(x, str) else np.asarray(x)
        if arr.ndim != 2:
            raise ValueError(f"{name} must hold one column of 0/1 verdicts per judge: a dict "
                             "{judge: verdicts}, a DataFrame or an array of shape (n, J), J >= 2;"
                             f" got {describe(x)}.")
        names, cols = None, list(arr.T)
    if not 2 <= len(cols) <= MAX_JUDGES:
        raise ValueError(f"{name} must hold between 2 and {MAX_JUDGES} judges (one column "
                         f"each), got {len(cols)}; for one judge use bayeval.judge.")
    return names, cols


def _inputs(y, yhat, yhat_unlabeled) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Judge names, checked y (m,), verdicts (m, J) and (n, J), rows paired by pandas index."""
    (names_l, cols_l), (names_u, cols_u) = (judge_columns(yhat, "yhat"),
                                            judge_columns(yhat_unlabeled, "yhat_unlabeled"))
    if len(cols_l) != len(cols_u):
        raise ValueError(f"yhat has {len(cols_l)} judges but yhat_unlabeled has {len(cols_u)}; "
                         "give the same judges in both.")
    if names_l is not None and names_u is not None and list(map(str, names_l)) != list(
            map(str, names_u)):
        raise ValueError(f"yhat names the judges {names_l} but yhat_unlabeled names them "
                         f"{names_u}; give the same judges in the same order.")
    raw = names_l if names_l is not None else names_u
    names = [f"judge_{j + 1}" for j in range(len(cols_l))] if raw is None else [str(n)
                                                                                for n in raw]
    if len(set(names)) < len(names) or POOLED in names:
        raise ValueError(f"the judges' names must be distinct and not {POOLED!r}; got {names}.")
    y, *cols_l = aligned(y=y, **{f"yhat[{n!r}]": c for n, c in zip(names, cols_l, strict=True)})
    cols_u = aligned(**{f"yhat_unlabeled[{n!r}]": c for n, c in zip(names, cols_u,
                                                                    strict=True)})
    y = as_binary(y, "y")
    lab = np.column_stack([as_binary(c, f"yhat[{n!r}]") for n, c in zip(names, cols_l,
                                                                         strict=True)])
    unl = np.column_stack([as_binary(c, f"yhat_unlabeled[{n!r}]")
                           for n, c in zip(names, cols_u, strict=True)])
    both = np.concatenate([lab, unl])
    constant = [n for n, lo, hi in zip(names, both.min(0), both.max(0), strict=True) if lo == hi]
    if constant:
        raise ValueError(f"judge(s) {constant} give the same verdict on every item: they carry "
                         "no information; leave them out.")
    return names, y, lab, unl


def _fast(names, y, lab, unl, mu_model: str, min_labelled: int
          ) -> tuple[dict[str, Estimate], dict, list[str]]:
    """Each judge's EIF and the pooled EIF, the data summary and the warnings."""
    m = y.size
    out = {name: Estimate(*(float(v) for v in eif_cells(*Counts.from_labels(
        y, lab[:, j], unl[:, j]).cells()))) for j, name in enumerate(names)}
    codes = np.concatenate([lab, unl]) @ (1 << np.arange(len(names)))
    info = {"m": m, "n": unl.shape[0], "m1": int(y.sum()), "m0": int(m - y.sum()),
            "patterns": int(np.unique(codes).size), "mu_model": mu_model}
    notes = []
    if mu_model == "linear":
        out[POOLED] = eif_linear_loo(y, lab, unl)
    else:
        cells, size = pattern_cells(np.concatenate([lab, unl]), m, min_labelled)
        out[POOLED] = pattern_eif(y, cells[:m], cells[m:], size)
        info.update(cells=size, min_labelled=min_labelled)
        empty = np.bincount(cells[:m], minlength=size)[cells[m:]] == 0
    if mu_model == "cell" and empty.any():
        notes.append(f"{empty.mean():.1%} of the unlabelled items have verdict patterns that no "
                     "labelled item has, even pooled; their cell mean falls back to the "
                     "labelled mean. Label more items.")
    if min(info["m1"], info["m0"]) < 5:
        notes.append(f"few labelled items of a class (m0 = {info['m0']}, m1 = {info['m1']}): "
                     "large-sample intervals are unreliable.")
    return out, info, notes


def _closed_form(out: dict[str, Estimate], z: float, ci_kind: str, m: int, n: int
                 ) -> xr.Dataset:
    """``mean``, ``sd``, ``lower``, ``upper``, ``n_effective`` over ``judge``."""
    names = list(out)
    est = Estimate(np.array([out[k].estimate for k in names]), np.array([out[k].se for k in names]))
    mean, lower, upper = reported(est, z, ci_kind)
    n_eff = [efficiency(out[k], out[k].estimate * (1 - out[k].estimate), m, n)["n_effective"]
             for k in names]
    return xr.Dataset({k: ("judge", np.asarray(v, float)) for k, v in (
        ("mean", mean), ("sd", est.se), ("lower", lower), ("upper", upper),
        ("n_effective", n_eff))}, coords={"judge": names})


def _pattern_counts(names, y, lab, unl) -> xr.Dataset:
    """Labelled items per (label, pattern) and unlabelled items per pattern, all 2^J patterns;
    a pattern is named by its verdicts in the judges' order (``"101"``)."""
    k = 1 << len(names)
    weights = 1 << np.arange(len(names))
    code_l, code_u = lab @ weights, unl @ weights
    labelled = np.stack([np.bincount(code_l[y == a], minlength=k) for a in (0, 1)])
    patterns = ["".join(str((c >> j) & 1) for j in range(len(names))) for c in range(k)]
    return xr.Dataset({"labelled_counts": (("label", "pattern"), labelled),
                       "unlabelled_counts": ("pattern", np.bincount(code_u, minlength=k))},
                      coords={"label": [0, 1], "pattern": patterns})


# ============================================================================ entry point
def pool_judges(y, yhat, yhat_unlabeled, *, method: str = "eif", ci_prob: float = 0.95,
                ci_kind: str = "logit", mu_model: str = "linear",
                min_labelled: int | None = None, prior: Mapping | None = None,
                random_seed: int | None = None, sample_kwargs: dict[str, Any] | None = None
                ) -> JudgePooled:
    r"""The rate of :math:`Y = 1` from several judges' verdicts on every item and human labels
    on a few.

    See :mod:`bayeval.methods.judge.pooled` for the estimators.

    Parameters
    ----------
    y : array-like of 0/1, shape (m,)
        Human labels of the labelled items.
    yhat : dict, DataFrame or array of shape (m, J)
        The judges' 0/1 verdicts on the same items, one column per judge (2 to
        :data:`MAX_JUDGES`; the keys of a dict or the columns of a DataFrame name the judges,
        else ``judge_1``, ``judge_2``...). Rows pair with ``y`` by pandas index where both have
        one, else by position.
    yhat_unlabeled : dict, DataFrame or array of shape (n, J)
        The same judges' verdicts on the items without a human label.
    method : {"eif", "pymc", "both"}
        ``"eif"``: the pooled EIF beside each judge's EIF (fast, no assumption on the judges'
        dependence). ``"pymc"``: also sample the latent-class model
        (:func:`~bayeval.methods.judge.pooled_models.pooled_model`). ``"both"``: also compute
        its posterior by importance sampling
        (:func:`~bayeval.methods.judge.pooled_models.exact_posterior`), so that
        :meth:`JudgePooled.check` tests the sampler.
    ci_prob : float
        Interval level (default 0.95).
    ci_kind : {"logit", "wald"}
        Interval of the EIF estimates: logit-Wald (inside [0, 1]) or Wald.
    mu_model : {"linear", "cell"}
        The pooled EIF's calibration curve of :math:`Y` on the verdicts: the least-squares
        plane (default; :func:`eif_linear_loo`) or the mean per verdict pattern
        (:func:`pattern_eif`).
    min_labelled : int, optional
        ``mu_model="cell"``: the fewest labelled items a verdict pattern needs to be a cell of
        its own (:func:`pattern_cells`; default :data:`MIN_LABELLED`).
    prior : dict, optional
        Priors of the latent-class model
        (:data:`~bayeval.methods.judge.pooled_models.DEFAULT_PRIOR`).
    random_seed : int, optional
        Seed of the sampler, of the importance sampler and of the draws of the finite-sample
        mean.
    sample_kwargs : dict, optional
        Passed to ``pm.sample``; ``target_accept`` defaults to 0.95.

    Returns
    -------
    JudgePooled
        ``closed_form`` over ``judge`` (each judge's name, then ``"pooled"``): ``mean``, ``sd``,
        ``lower``, ``upper`` and ``n_effective``. The ``data`` group holds ``m``, ``n``, the
        number of verdict ``patterns``, ``mu_model`` (with ``"cell"`` also ``cells`` and
        ``min_labelled``), the pattern counts and the test of conditional independence
        (:meth:`JudgePooled.dependence`). With ``"pymc"``/``"both"`` the posterior holds
        ``theta``, ``theta_finite`` (the mean of all :math:`N` true labels), ``sensitivity``
        and ``specificity`` over ``judge``; ``"both"`` adds ``exact_mean``, ``exact_sd``,
        ``exact_lower``, ``exact_upper`` and ``exact_ess`` to the closed form.

    Warns
    -----
    UserWarning
        Unlabelled items whose verdict pattern no labelled item has; fewer than 5 labelled
        items of a class; with ``"pymc"``/``"both"``, judges whose verdicts the labelled items
        show to be dependent given the true label (the model then misstates the rate; prefer
        the pooled EIF).

    Raises
    ------
    ValueError
        ``yhat`` or ``yhat_unlabeled`` not one column per judge, or with different judges;
        fewer than 2 or more than :data:`MAX_JUDGES` judges; names not distinct or
        ``"pooled"``; verdicts or labels other than 0/1; lengths or pandas indexes that do not
        pair; a judge with one verdict on every item; fewer than 2 labelled items of a class;
        ``min_labelled`` not a positive integer, or given with ``mu_model="linear"``; an
        unknown ``method``, ``ci_kind``, ``mu_model`` or prior.

    See Also
    --------
    bayeval.judge : one judge; several judges there are estimated one by one (groups).

    Examples
    --------
    Three judges on 3,000 items, humans label 150; the first two err together on a share of the
    items:

    >>> rng = np.random.default_rng(7)
    >>> y = rng.random(3000) < 0.3
    >>> shared = rng.random(3000) < 0.08
    >>> own = rng.random((3000, 3)) < [0.06, 0.10, 0.22]
    >>> verdicts = y[:, None] ^ (own | (shared[:, None] & np.array([True, True, False])))
    >>> yhat = pd.DataFrame(verdicts, columns=["gpt", "claude", "llama"])
    >>> ev = pool_judges(y[:150], yhat[:150], yhat[150:])
    >>> ev.summary()[["mean", "sd", "n_effective"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
    pool_judges (eif), closed form: 95% logit confidence intervals
             mean     sd  n_effective
    judge
    gpt     0.273  0.026          301
    claude  0.288  0.029          243
    llama   0.294  0.030          235
    pooled  0.293  0.022          410

    The pooled estimate is worth 410 human labels, the best judge alone 301 (the truth is
    0.300)
    """
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    mu_model = as_choice(mu_model, "mu_model", MU_MODELS)
    if min_labelled is not None and mu_model != "cell":
        raise ValueError("min_labelled applies to mu_model='cell' (the verdict patterns): leave "
                         "it None with mu_model='linear'.")
    min_labelled = as_positive_int(MIN_LABELLED if min_labelled is None else min_labelled,
                                   "min_labelled")
    bayes = method != "eif"
    if prior is not None and not bayes:
        raise ValueError("prior applies to method='pymc' or 'both'; the EIF has none.")
    sample_kwargs = as_sample_kwargs(sample_kwargs) if bayes else None
    names, y, lab, unl = _inputs(y, yhat, yhat_unlabeled)
    m1 = int(y.sum())
    if min(m1, y.size - m1) < 2:
        raise ValueError(f"y has {m1} positive and {y.size - m1} negative label(s); the "
                         "estimators need at least 2 of each class. Label more items.")
    out, info, notes = _fast(names, y, lab, unl, mu_model, min_labelled)
    dep = error_dependence(y, lab, names)
    closed = _closed_form(out, z_value(ci_prob), ci_kind, y.size, unl.shape[0])
    data = xr.Dataset(info).merge(_pattern_counts(names, y, lab, unl)).merge(
        xr.Dataset({f"dependence_{k}": ("pair", dep[k].to_numpy(float))
                    for k in ("odds_ratio", "statistic", "p_value")},
                   coords={"pair": dep.index.tolist()}))
    draws = pm_model = None
    curve = ("a least-squares plane" if mu_model == "linear" else
             f"{info['cells']} cells of the verdict patterns")
    description = (f"P(Y = 1) from {len(names)} judges on {y.size} human-labelled and "
                   f"{unl.shape[0]} judge-only items ({info['patterns']} verdict patterns): "
                   f"pooled EIF on {curve} ({ci_kind} intervals)")
    flagged = dep.index[dep["dependent"]].tolist()
    if bayes and flagged:
        notes.append(f"the labelled items show judges {', '.join(flagged)} erring together "
                     "(Mantel–Haenszel test of conditional independence, see dependence()): "
                     "the latent-class model assumes they do not and may misstate the rate; "
                     "prefer the pooled EIF (method='eif').")
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if bayes:
        from bayeval.methods.judge.pooled_models import exact_posterior, sample_pooled

        counts = (data["labelled_counts"].values, data["unlabelled_counts"].values)
        draws, pm_model = sample_pooled(*counts, names, prior, random_seed, sample_kwargs)
        if method == "both":
            exact = exact_posterior(*counts, prior, ci_prob, random_seed)
            closed = closed.assign({f"exact_{k}": v for k, v in exact.items()})
        description += "; latent-class posterior (conditionally independent judges)"
    return JudgePooled.create(
        method="pool_judges", variant=method, closed_form=closed, draws=draws,
        estimand=None if draws is None else "posterior/theta", model=pm_model, data=data,
        ci_prob=ci_prob, ci_kind="eti", random_seed=random_seed, assumptions=ASSUMPTIONS,
        warnings=notes, interval_kind=ci_kind, judges=names, description=description)


# ================================================================================= result
class JudgePooled(Evaluation, method="pool_judges"):
    """The result of :func:`pool_judges`: each judge's and the pooled estimate of the rate;
    :meth:`dependence` tests the judges' conditional independence, :meth:`check` the
    latent-class posterior.

    Examples
    --------
    >>> y = np.tile([1, 1, 0, 0, 1, 0], 5)
    >>> v = np.tile([[1, 1], [1, 0], [0, 0], [0, 1], [1, 1], [0, 0]], (5, 1))
    >>> ev = pool_judges(y, v, np.array([[1, 1], [0, 0], [1, 0]]))
    >>> ev.summary().index.tolist()
    ['judge_1', 'judge_2', 'pooled']
    """

    def dependence(self) -> Table:
        """The test of conditional independence of every pair of judges
        (:func:`error_dependence`) on the labelled items.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> y = rng.random(1000) < 0.4
        >>> wrong = rng.random((1000, 2)) < 0.15  # independent errors
        >>> v = y[:, None] ^ wrong
        >>> pool_judges(y[:200], v[:200], v[200:]).dependence()[["odds_ratio", "p_value"]]
        ... # doctest: +NORMALIZE_WHITESPACE
        judges' verdicts given the true label (Mantel–Haenszel, 5% Bonferroni): no pair flagged
                           odds_ratio  p_value
        pair
        judge_1 & judge_2      1.8621   0.1343
        """
        data = self.tree["data"].to_dataset()
        return _flag_dependent(pd.DataFrame(
            {k: data[f"dependence_{k}"].to_numpy() for k in ("odds_ratio", "statistic",
                                                               "p_value")},
            index=pd.Index(data["pair"].to_numpy().tolist(), name="pair")))

    def check(self) -> Table:
        r"""The latent-class posterior of :math:`\theta` against its importance-sampling twin and
        against the pooled EIF.

        With ``method="both"``, ``mean`` tests :math:`|\bar\theta - \bar\theta_{IS}| \le
        4\sqrt{\mathrm{MCSE}^2 + \mathrm{sd}_{IS}^2/\mathrm{ESS}_{IS}}` and ``sd_ratio``
        :math:`|\mathrm{sd}/\mathrm{sd}_{IS} - 1| \le 4\sqrt{(\mathrm{MCSE}_{sd}/
        \mathrm{sd}_{IS})^2 + 1/(2\,\mathrm{ESS}_{IS})}`: the same posterior computed by
        another route (:func:`~bayeval.methods.judge.pooled_models.exact_posterior`), so a
        failure is the sampler's. ``eif_mean`` tests the model against the pooled EIF, which
        assumes nothing about the judges' dependence: when the model holds, the more efficient
        of the two (usually the model) and the other differ by about
        :math:`\sqrt{|\mathrm{SE}^2 - \mathrm{sd}^2|}` (Hausman 1978), and
        :math:`|\bar\theta - \hat\theta_{EIF}| \le 0.25\,\mathrm{SE} +
        4\sqrt{|\mathrm{SE}^2 - \mathrm{sd}^2| + \mathrm{MCSE}^2}`; a failure says the judges
        are not conditionally independent (see :meth:`dependence`) or the prior still
        dominates. This test has little power: judges that share errors can leave the model
        confidently wrong and still pass it, which :meth:`dependence` is there to catch. The
        sampler's own tests follow (:func:`bayeval.check.sampler_tests`).

        Returns
        -------
        Table
            Indexed by ``test``, columns ``fast``, ``draws``, ``statistic``, ``tolerance``,
            ``n_eff``, ``passed``; ``attrs["passed"]`` is True when every test passed.

        Raises
        ------
        ValueError
            Without posterior draws (``method="eif"``).

        Examples
        --------
        Independent draws from a normal law standing in for the sampler:

        >>> cf = xr.Dataset({"mean": ("judge", [0.30]), "sd": ("judge", [0.02]),
        ...                  "exact_mean": 0.302, "exact_sd": 0.018, "exact_ess": 5000.0},
        ...                 coords={"judge": ["pooled"]})
        >>> theta = np.random.default_rng(0).normal(0.302, 0.018, size=(2, 1000))
        >>> draws = xr.DataTree.from_dict({
        ...     "posterior": xr.Dataset({"theta": (("chain", "draw"), theta)}),
        ...     "sample_stats": xr.Dataset({"diverging": (("chain", "draw"),
        ...                                               np.zeros((2, 1000), bool))})})
        >>> ev = JudgePooled.create(method="pool_judges", variant="both", closed_form=cf,
        ...                         draws=draws, estimand="posterior/theta")
        >>> ev.check().loc[["mean", "sd_ratio", "eif_mean"], ["statistic", "passed"]].round(4)
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        latent-class posterior vs importance sampling and the pooled EIF (...): agree
                  statistic  passed
        test
        mean         0.0005    True
        sd_ratio     0.0004    True
        eif_mean     0.0015    True
        """
        if self.draws is None:
            raise ValueError("check() needs the posterior: run pool_judges(..., method='pymc' "
                             "or 'both').")
        import arviz as az

        cf = self.closed_form
        x = self.draws.transpose(*SAMPLE_DIMS).values
        mean, sd = float(x.mean()), float(x.std(ddof=1))
        mcse = float(az.mcse(x, method="mean"))
        ess = float(az.ess(x, method="bulk"))
        rows = {}
        if "exact_mean" in cf:
            e_mean, e_sd, e_ess = (float(cf[f"exact_{k}"]) for k in ("mean", "sd", "ess"))
            mcse_sd = float(az.mcse(x, method="sd"))
            rows["mean"] = (e_mean, mean, abs(mean - e_mean),
                            4 * np.sqrt(mcse**2 + e_sd**2 / e_ess))
            rows["sd_ratio"] = (1.0, sd / e_sd, abs(sd / e_sd - 1),
                                4 * np.sqrt((mcse_sd / e_sd) ** 2 + 1 / (2 * e_ess)))
        pooled = cf.sel(judge=POOLED)
        est, se = float(pooled["mean"]), float(pooled["sd"])
        hausman = np.sqrt(abs(se**2 - sd**2) + mcse**2)
        rows["eif_mean"] = (est, mean, abs(mean - est), AGREEMENT_MEAN * se + 4 * hausman)
        frame = pd.DataFrame(rows, index=["fast", "draws", "statistic", "tolerance"]).T
        frame.index.name = "test"
        frame["n_eff"] = ess
        frame["passed"] = frame["statistic"] <= frame["tolerance"]
        if self.has_mcmc:
            frame = pd.concat([frame, sampler_tests(self.tree["posterior"].to_dataset(),
                                                    self.tree["sample_stats"].to_dataset())])
        passed = bool(frame["passed"].all())
        caption = ("latent-class posterior vs importance sampling and the pooled EIF (4-sigma "
                   f"Monte-Carlo; mean within {AGREEMENT_MEAN} SE + 4 Hausman sd): "
                   + ("agree" if passed else "FAILED: " + ", ".join(
                       frame.index[~frame["passed"]])))
        return table(frame, caption, passed=passed)
