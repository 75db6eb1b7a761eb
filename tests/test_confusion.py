"""Tests of bayeval.confusion against enumeration of all label completions and Monte Carlo.

Oracles: for n <= 12 every completion of the unknown labels is enumerated with its probability
and the metric is computed in exact rational arithmetic (independently of bayeval.metrics), so
the support, its merging, the probabilities, the moments and p_undefined are checked to 1e-12.
Monte-Carlo checks use the 4-sigma rules of specs/missing_labels.md §5.3 and specs/cbpe.md §5.8.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from bayeval import confusion as C
from bayeval.metrics import METRICS, from_counts, roc_auc
from bayeval.poibin import PoissonBinomial

NONLINEAR = ("recall", "specificity", "f1", "fbeta", "balanced_accuracy", "mcc")
BETA = 2.0  # fbeta uses beta^2 = 4 throughout


# ---------------------------------------------------------------------------------------------
# enumeration oracle


def _case(seed: int, n: int, n_known: int, *, y_pred: str = "random", p: str = "uniform",
          scores: str = "ties") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(y_pred, p, labels with NaN for unknown, scores) of a small reproducible case."""
    rng = np.random.default_rng(seed)
    yp = {"random": rng.integers(0, 2, n), "ones": np.ones(n, int),
          "zeros": np.zeros(n, int)}[y_pred]
    prob = {"uniform": rng.uniform(0, 1, n), "half": np.full(n, 0.5),
            "small": rng.uniform(0, 0.15, n)}[p]
    labels = np.full(n, np.nan)
    known = rng.choice(n, n_known, replace=False)
    labels[known] = rng.integers(0, 2, n_known)
    s = np.round(rng.uniform(0, 1, n), 1) if scores == "ties" else rng.normal(size=n)
    return yp, prob, labels, s


CASES = {
    "no_labels": _case(0, 10, 0),
    "known_and_certain_p": _case(1, 12, 3),  # p set to 0 and 1 on some unknown rows below
    "all_predicted_positive": _case(2, 9, 2, y_pred="ones"),
    "all_predicted_negative": _case(3, 8, 1, y_pred="zeros"),
    "dyadic_p_many_ties": _case(4, 11, 2, p="half"),
    "often_undefined": _case(5, 7, 0, p="small", scores="distinct"),
    "nearly_known": _case(6, 12, 10),
}
CASES["known_and_certain_p"][1][np.flatnonzero(np.isnan(CASES["known_and_certain_p"][2]))[:2]] = (
    0.0, 1.0)


def _exact(metric: str, tp: int, fp: int, fn: int, tn: int):
    """Exact metric as a sortable key (MCC: its signed square) and its float; None if undefined."""
    f = Fraction
    b2 = f(BETA) ** 2
    pos, neg = tp + fn, tn + fp
    ratios = {"accuracy": (tp + tn, tp + fp + fn + tn), "precision": (tp, tp + fp),
              "recall": (tp, pos), "specificity": (tn, neg), "npv": (tn, tn + fn),
              "f1": (2 * tp, 2 * tp + fp + fn),
              "fbeta": ((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)}
    if metric in ratios:
        num, den = ratios[metric]
        return None if den == 0 else (f(num) / den, float(f(num) / den))
    if metric == "balanced_accuracy":
        if pos == 0 or neg == 0:  # scikit-learn: the recall of the class present
            return None if pos == neg == 0 else _exact("specificity" if pos == 0 else "recall",
                                                       tp, fp, fn, tn)
        value = (f(tp, pos) + f(tn, neg)) / 2
        return value, float(value)
    den = (tp + fp) * pos * neg * (tn + fn)  # mcc
    if den == 0:
        return None
    num = tp * tn - fp * fn
    square = f(num * num, den) * (1 if num >= 0 else -1)
    return square, math.copysign(math.sqrt(abs(square)), num)


@cache
def _completions(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels of every completion, its probability)."""
    _, p, labels, _ = CASES[name]
    unknown = np.flatnonzero(np.isnan(labels))
    bits = (np.arange(2**unknown.size)[:, None] >> np.arange(unknown.size)) & 1
    y = np.tile(np.nan_to_num(labels), (bits.shape[0], 1))
    y[:, unknown] = bits
    return y.astype(int), np.prod(np.where(bits == 1, p[unknown], 1 - p[unknown]), axis=1)


@cache
def _oracle(name: str, metric: str, zero_division: float):
    """Exact law by enumeration: (values, probs, p_undefined)."""
    yp = CASES[name][0]
    y, w = _completions(name)
    tp, fn = (y * yp).sum(1), (y * (1 - yp)).sum(1)
    fp, tn = yp.sum() - tp, (1 - yp).sum() - fn
    law: dict = {}
    p_undefined = []
    for k in np.flatnonzero(w > 0):  # completions of probability 0 (p in {0, 1}) are impossible
        exact = _exact(metric, int(tp[k]), int(fp[k]), int(fn[k]), int(tn[k]))
        if exact is None:
            p_undefined.append(w[k])
            if np.isnan(zero_division):
                continue
            zd = Fraction(int(zero_division))  # MCC's key is its signed square: the same here
            exact = zd, float(zd)
        law.setdefault(exact, []).append(w[k])
    keys = sorted(law)
    probs = np.array([math.fsum(law[key]) for key in keys])
    pu = math.fsum(p_undefined)
    if np.isnan(zero_division):
        return ((np.array([np.nan]), np.ones(1), pu) if not keys
                else (np.array([v for _, v in keys]), probs / (1 - pu), pu))
    return np.array([v for _, v in keys]), probs, pu


GRID = [(c, m, z) for c in CASES for m in METRICS for z in (0.0, 1.0, np.nan)]


@pytest.mark.parametrize(("case", "metric", "zero_division"), GRID)
def test_distribution_equals_enumeration(case, metric, zero_division):
    yp, p, labels, _ = CASES[case]
    values, probs, p_undefined = _oracle(case, metric, zero_division)
    d = C.metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=BETA)
    assert d.values.shape == values.shape  # equal rationals merged, distinct ones kept
    np.testing.assert_allclose(d.values, values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d.probs, probs, rtol=0, atol=1e-12)
    assert abs(d.p_undefined - p_undefined) <= 1e-12
    assert abs(math.fsum(d.probs) - 1) <= 1e-12
    if np.isnan(values[0]):
        assert np.isnan(d.mean) and np.isnan(d.sd)
        return
    mean = math.fsum(values * probs)
    assert abs(d.mean - mean) <= 1e-12
    assert abs(d.sd - math.sqrt(math.fsum((values - mean) ** 2 * probs))) <= 1e-12


def test_oracle_cases_cover_the_edge_cases():
    """The cases above exercise undefined metrics with probability strictly between 0 and 1."""
    assert max(_oracle(c, "precision", 0.0)[2] for c in CASES) == 1.0
    assert any(0.01 < _oracle(c, "recall", 0.0)[2] < 1 for c in CASES)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("metric", ["accuracy", "precision", "npv"])
def test_linear_moments_are_exact(case, metric):
    yp, p, labels, _ = CASES[case]
    values, probs, _ = _oracle(case, metric, 0.0)
    mean = math.fsum(values * probs)
    got_mean, got_var = C.metric_moments(metric, yp, p, labels)
    assert abs(got_mean - mean) <= 1e-12
    assert abs(got_var - math.fsum((values - mean) ** 2 * probs)) <= 1e-12


def _pair_sums(name: str, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """A (Mann-Whitney count) and D = N+ N- of every completion, by the O(n^2) definition."""
    s = CASES[name][3]
    y, _ = _completions(name)
    xi = (s[:, None] > s[None, :]) + (0.5 if ties == "half" else 1.0) * (s[:, None] == s[None, :])
    np.fill_diagonal(xi, 0)
    a = np.einsum("ki,ij,kj->k", y, xi, 1 - y)
    return a, y.sum(1) * (1 - y).sum(1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("ties", ["half", "one"])
def test_auc_numerator_moments_equal_enumeration(case, ties):
    _, p, labels, s = CASES[case]
    a, d = _pair_sums(case, ties)
    w = _completions(case)[1]
    ma, md = a @ w, d @ w
    got = C.auc_numerator_moments(s, p, labels, ties=ties)
    want = (ma, ((a - ma) ** 2) @ w, md, ((d - md) ** 2) @ w, ((a - ma) * (d - md)) @ w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_auc_moments_match_quadratic_reference_with_ties():
    """O(n log n) against the O(n^2) matrix form of the same identities (spec §8: n = 300)."""
    rng = np.random.default_rng(11)
    n = 300
    s = np.round(rng.normal(size=n), 1)
    p = rng.uniform(0, 1, n)
    labels = np.where(rng.random(n) < 1 / 3, rng.integers(0, 2, n), np.nan)
    pt = np.where(np.isnan(labels), p, labels)
    q, v = 1 - pt, pt * (1 - pt)
    for ties, w in (("half", 0.5), ("one", 1.0)):
        xi = (s[:, None] > s[None, :]) + w * (s[:, None] == s[None, :])
        np.fill_diagonal(xi, 0)
        off = 1 - np.eye(n)
        c_num, c_den = xi @ q - xi.T @ pt, off @ (1 - 2 * pt)
        sym, upper = xi + xi.T, np.triu(np.outer(v, v), 1)
        want = (pt @ xi @ q, v @ c_num**2 + (sym**2 * upper).sum(), pt @ off @ q,
                v @ c_den**2 + 4 * upper.sum(), v @ (c_num * c_den) + (2 * sym * upper).sum())
        got = C.auc_numerator_moments(s, p, labels, ties=ties)
        np.testing.assert_allclose(got, want, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# delta-method moments


def _moderate(seed: int = 7, n: int = 60):
    """A case with both classes known in both predicted groups, so no metric is ever undefined."""
    rng = np.random.default_rng(seed)
    yp = np.r_[1, 1, 0, 0, rng.integers(0, 2, n - 4)]
    p = rng.beta(2, 2, n)
    labels = np.full(n, np.nan)
    labels[:4] = [1, 0, 1, 0]
    labels[4:20] = rng.integers(0, 2, 16)
    return yp, p, labels


@pytest.mark.parametrize("metric", METRICS)
def test_derivatives_match_finite_differences(metric):
    """(g, g_T, g_F, g_TT, g_FF) against central differences of bayeval.metrics.from_counts."""
    yp, p, labels = _moderate()
    rows = C._rows(yp, p, labels)
    t, f = rows.tp_known + rows.p_pos.sum(), rows.fn_known + rows.p_neg.sum()
    if metric == "mcc":
        got = C._mcc_derivatives(rows, t, f)
    else:
        got = C._ratio_derivatives(C._ratio_terms(metric, rows, BETA, t, f), t, f)

    def g(t, f):
        return from_counts(metric, t, rows.n_pos - t, f, rows.n_neg - f, beta=BETA)

    h = 1e-3
    want = [g(t, f), (g(t + h, f) - g(t - h, f)) / (2 * h), (g(t, f + h) - g(t, f - h)) / (2 * h),
            (g(t + h, f) - 2 * g(t, f) + g(t - h, f)) / h**2,
            (g(t, f + h) - 2 * g(t, f) + g(t, f - h)) / h**2]
    np.testing.assert_allclose(got[:3], want[:3], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-4, atol=1e-9)


def test_recall_and_f1_variances_equal_the_spec_table():
    """specs/missing_labels.md §2.6 closed forms, to 1e-12 relative."""
    yp, p, labels = _moderate()
    rows = C._rows(yp, p, labels)
    mu_u, mu_v = rows.p_pos.sum(), rows.p_neg.sum()
    s_u, s_v = (rows.p_pos * (1 - rows.p_pos)).sum(), (rows.p_neg * (1 - rows.p_neg)).sum()
    tp_k, fn_k, npp = rows.tp_known, rows.fn_known, rows.n_pos
    mz, mw = tp_k + mu_u, tp_k + fn_k + mu_u + mu_v
    recall = ((fn_k + mu_v) ** 2 * s_u + mz**2 * s_v) / mw**4
    mw1 = npp + tp_k + fn_k + mu_u + mu_v
    f1 = 4 * ((npp + tp_k + fn_k - tp_k + mu_v) ** 2 * s_u + mz**2 * s_v) / mw1**4
    assert C.metric_moments("recall", yp, p, labels)[1] == pytest.approx(recall, rel=1e-12)
    assert C.metric_moments("f1", yp, p, labels)[1] == pytest.approx(f1, rel=1e-12)
    assert C.metric_moments("recall", yp, p, labels, second_order=False)[0] == pytest.approx(
        mz / mw, rel=1e-12)


@pytest.mark.parametrize("metric", NONLINEAR)
def test_second_order_mean_is_closer_to_the_exact_mean(metric):
    yp, p, labels = _moderate(seed=8, n=40)
    exact = C.metric_distribution(metric, yp, p, labels, beta=BETA).mean
    first = C.metric_moments(metric, yp, p, labels, beta=BETA, second_order=False)[0]
    second = C.metric_moments(metric, yp, p, labels, beta=BETA)[0]
    assert abs(second - exact) < 0.5 * abs(first - exact)


def test_moments_against_monte_carlo():
    """4-sigma rules of specs/missing_labels.md §5.3 (N = 200,000 completions).

    Means: |MC - mu| <= 4 MCSE + |b2| with b2 the second-order term. Standard deviations of the
    ratio metrics: within 4/sqrt(2N) + 2 %; of the linear ones (exact): within 4/sqrt(2N).
    """
    yp, p, labels = _moderate()
    rng = np.random.default_rng(2024)
    n_draws = 200_000
    unknown = np.isnan(labels)
    y = np.tile(np.nan_to_num(labels), (n_draws, 1))
    y[:, unknown] = rng.random((n_draws, unknown.sum())) < p[unknown]
    tp, fn = y @ yp, y @ (1 - yp)
    fp, tn = yp.sum() - tp, (1 - yp).sum() - fn
    for metric in METRICS:
        draws = from_counts(metric, tp, fp, fn, tn, beta=BETA)
        first = C.metric_moments(metric, yp, p, labels, beta=BETA, second_order=False)[0]
        mean, var = C.metric_moments(metric, yp, p, labels, beta=BETA)
        mcse = draws.std() / math.sqrt(n_draws)
        b2 = abs(mean - first)
        assert abs(draws.mean() - first) <= 4 * mcse + b2, metric
        assert abs(draws.mean() - mean) <= 4 * mcse + b2, metric
        slack = 0.0 if metric in ("accuracy", "precision", "npv") else 0.02
        assert abs(draws.std() / math.sqrt(var) - 1) <= 4 / math.sqrt(2 * n_draws) + slack, metric


def test_auc_moments_against_monte_carlo():
    _, p, labels = _moderate()
    rng = np.random.default_rng(5)
    s = np.round(rng.normal(size=p.size), 1)  # ties
    n_draws = 40_000
    unknown = np.isnan(labels)
    y = np.tile(np.nan_to_num(labels), (n_draws, 1)).astype(int)
    y[:, unknown] = rng.random((n_draws, unknown.sum())) < p[unknown]
    for ties in ("half", "one"):
        draws = roc_auc(y, s, ties=ties)
        first = C.auc_moments(s, p, labels, ties=ties, second_order=False)[0]
        mean, var = C.auc_moments(s, p, labels, ties=ties)
        mcse, b2 = draws.std() / math.sqrt(n_draws), abs(mean - first)
        assert abs(draws.mean() - first) <= 4 * mcse + b2
        assert abs(draws.mean() - mean) <= 4 * mcse + b2
        assert abs(draws.std() / math.sqrt(var) - 1) <= 4 / math.sqrt(2 * n_draws) + 0.02


@pytest.mark.parametrize("ties", ["half", "one"])
def test_auc_second_order_mean_is_closer_to_the_exact_mean(ties):
    """Against E[A/D] by enumeration (n = 14, two known labels of each class, so D > 0).

    The AUC's delta-method bias is too small for a Monte-Carlo check; exactly, the second-order
    mean beats the first-order one by 2x in ~96 % of random cases (200 checked), so 8 of 10.
    """
    wins = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        s, p = np.round(rng.normal(size=14), 1), rng.uniform(0, 1, 14)
        labels = np.r_[1, 0, 1, 0, np.full(10, np.nan)]
        bits = (np.arange(2**10)[:, None] >> np.arange(10)) & 1
        y = np.c_[np.tile([1, 0, 1, 0], (bits.shape[0], 1)), bits]
        exact = roc_auc(y, s, ties=ties) @ np.prod(np.where(bits == 1, p[4:], 1 - p[4:]), axis=1)
        first = C.auc_moments(s, p, labels, ties=ties, second_order=False)[0]
        second = C.auc_moments(s, p, labels, ties=ties)[0]
        wins += abs(second - exact) < 0.5 * abs(first - exact)
    assert wins >= 8


def test_degenerate_moments():
    """Undefined with probability 1 gives zero_division; all labels known gives variance 0."""
    yp = np.zeros(5, int)
    p = np.full(5, 0.3)
    assert C.metric_moments("precision", yp, p) == (0.0, 0.0)
    assert C.metric_moments("precision", yp, p, zero_division=1.0) == (1.0, 0.0)
    assert all(np.isnan(C.metric_moments("mcc", yp, p, zero_division=np.nan)))
    labels = np.array([1, 0, 1, 1, 0])
    y_pred = np.array([1, 1, 0, 1, 0])
    for metric in METRICS:
        mean, var = C.metric_moments(metric, y_pred, p, labels, beta=BETA)
        want = from_counts(metric, 2, 1, 1, 1, beta=BETA)
        assert (mean, var) == (pytest.approx(want, abs=1e-15), 0.0)
    mean, var = C.auc_moments([0.1, 0.4, 0.35, 0.8], p[:4], labels[:4])  # 1 of 3 pairs
    assert (mean, var) == (pytest.approx(1 / 3, abs=1e-15), 0.0)
    with pytest.raises(ValueError, match="single class"):
        C.auc_moments([0.1, 0.4], [0.3, 0.2], [1, 1])


# ---------------------------------------------------------------------------------------------
# truncation, merging, intervals


@pytest.mark.parametrize("metric", ["f1", "mcc", "balanced_accuracy", "precision", "accuracy"])
def test_truncated_grid_equals_full_grid(metric):
    """Cutting each count PMF at 1e-16 changes no probability by more than 1e-12 (n = 2000)."""
    yp, p, labels = _moderate(seed=9, n=2000)
    rows = C._rows(yp, p, labels)
    tp = rows.tp_known + np.arange(rows.p_pos.size + 1.0)[:, None]
    fn = rows.fn_known + np.arange(rows.p_neg.size + 1.0)[None, :]
    values = from_counts(metric, tp, rows.n_pos - tp, fn, rows.n_neg - fn).ravel()
    probs = np.outer(PoissonBinomial(rows.p_pos).pmf(), PoissonBinomial(rows.p_neg).pmf()).ravel()
    full, inverse = np.unique(values, return_inverse=True)
    full_probs = np.bincount(inverse, weights=probs)
    d = C.metric_distribution(metric, yp, p, labels)
    where = np.searchsorted(full, d.values)
    assert np.array_equal(full[where], d.values)  # the cut support is part of the full one
    ours = np.zeros_like(full_probs)
    ours[where] = d.probs
    assert np.abs(ours - full_probs).max() <= 1e-12
    assert d.mean == pytest.approx(full @ full_probs, abs=1e-12)


def test_merge_repairs_quantisation_collisions():
    """Values 1 ulp apart among a wide span share a quantised key; they still sort and merge."""
    rng = np.random.default_rng(0)
    near = 0.5 + np.arange(300) * np.spacing(0.5)
    values = rng.permutation(np.r_[np.repeat(near, 3), -1.0, 1.0, rng.uniform(-1, 1, 500)])
    probs = rng.uniform(size=values.size)
    got_values, got_probs = C._merge(values, probs)
    want_values, inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(got_values, want_values)
    np.testing.assert_allclose(got_probs, np.bincount(inverse, weights=probs), rtol=1e-14)


def _algorithm3(probs: np.ndarray, alpha: float) -> tuple[int, int]:
    """specs/cbpe.md §2.5 Algorithm 3, transcribed verbatim."""
    lo, up, tail = 0, probs.size - 1, 0.0
    while True:
        pl, pu = probs[lo], probs[up]
        if pl < pu:
            if tail + pl >= alpha:
                return lo, up
            tail, lo = tail + pl, lo + 1
        else:
            if tail + pu >= alpha:
                return lo, up
            tail, up = tail + pu, up - 1


def test_interval_kinds_on_a_hand_checked_law():
    """probs .18 .01 .39 .26 .16, 80 %: Algorithm 3 trims .16 then stops at .18 -> [0, 3];
    the shortest interval with mass >= .8 is [2, 4] (.81); equal tails (.1 each) -> [0, 4]."""
    d = C.MetricDistribution("x", np.arange(5.0), np.array([.18, .01, .39, .26, .16]), 0.0, 0.0)
    assert d.interval(0.8, "paper_hdi") == (0.0, 3.0)
    assert d.interval(0.8, "hdi") == (2.0, 4.0)
    assert d.interval(0.8, "eti") == (0.0, 4.0)
    b = C.metric_distribution("precision", [1, 1, 0], [0.5, 0.5, 0.2])  # 0, 1/2, 1 w.p. 1/4 1/2 1/4
    assert (b.values.tolist(), b.probs.tolist()) == ([0, 0.5, 1], [0.25, 0.5, 0.25])
    assert b.interval(0.5, "eti") == (0.0, 0.5)  # Q(1/4) = 0 since F(0) = 1/4 exactly
    assert b.interval(0.5, "hdi") == (0.5, 0.5)
    assert b.interval(0.5, "paper_hdi") == (0.0, 0.5)  # ties trim the upper end first
    assert b.interval(0.95) == (0.0, 1.0)


@pytest.mark.parametrize("metric", ["recall", "f1", "mcc", "accuracy"])
def test_intervals_hold_their_mass_and_match_brute_force(metric):
    yp, p, labels = _moderate(seed=10, n=120)
    d = C.metric_distribution(metric, yp, p, labels)
    csum = np.r_[0.0, np.cumsum(d.probs)]
    for ci in (0.5, 0.8, 0.95, 0.99):
        alpha = 1 - ci
        for kind in C.INTERVAL_KINDS:
            lo, hi = d.interval(ci, kind)
            inside = (d.values >= lo) & (d.values <= hi)
            # sums of float probabilities: rounding ~ m * eps
            assert math.fsum(d.probs[inside]) >= ci - 1e-14, (kind, ci)
            assert d.mass(lo, hi) == pytest.approx(math.fsum(d.probs[inside]), abs=1e-15)
        i, j = _algorithm3(d.probs, alpha)
        assert d.interval(ci, "paper_hdi") == (d.values[i], d.values[j])
        mass = csum[None, 1:] - csum[:-1, None]  # mass[i, j] of [v_i, v_j]
        width = np.where(mass >= ci - 1e-12, d.values[None, :] - d.values[:, None], np.inf)
        lo, hi = d.interval(ci, "hdi")
        assert hi - lo == pytest.approx(width.min(), abs=1e-15)


@pytest.mark.parametrize("metric", ["accuracy", "precision", "npv"])
def test_algorithm3_is_shortest_for_log_concave_laws(metric):
    """specs/cbpe.md §2.5: for a rescaled Poisson-binomial the greedy trim is the shortest."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(20, 300))
        d = C.metric_distribution(metric, rng.integers(0, 2, n), rng.beta(0.5, 0.8, n))
        for ci in (0.5, 0.8, 0.95, 0.99):
            (a, b), (c, e) = d.interval(ci, "hdi"), d.interval(ci, "paper_hdi")
            assert e - c == pytest.approx(b - a, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the lazy law (no support listed) against its materialised support

GRID_METRICS = ("recall", "specificity", "f1", "fbeta", "balanced_accuracy", "mcc")
ZERO_DIVISIONS = (0.0, 1.0, np.nan)
CI_PROBS = (0.5, 0.95, 0.99)


def _lazy_and_eager(metric, yp, p, labels, zero_division, beta=BETA):
    """The lazy law's (mean, sd, p_undefined, ETIs, masses at bounds) before and after its
    support is listed, the latter from a MetricDistribution built on that support."""
    d = C.metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=beta)
    assert d._grid is not None and d._support is None
    below_one = np.nextafter(1.0, 0)
    bounds = [(0.0, 0.0), (0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (d.mean, below_one),
              (-1.0, d.mean), (d.mean, d.mean - 1e-3)]

    def summary(x):
        etis = [x.interval(ci) for ci in CI_PROBS]
        masses = [x.mass(lo, hi) for lo, hi in [*bounds, *etis]]
        return x.mean, x.sd, x.p_undefined, etis, masses

    lazy = summary(d)
    assert d._support is None  # nothing above listed the support
    eager = C.MetricDistribution(metric, d.values, d.probs, d.p_undefined, zero_division)
    values, probs = d._grid.cells()
    return lazy, summary(eager), float(probs[np.isnan(values)].sum())


def _assert_same(lazy, eager, p_undefined):
    np.testing.assert_allclose(lazy[:2], eager[:2], rtol=0, atol=1e-12)
    assert lazy[2] == pytest.approx(p_undefined, abs=1e-12)
    assert lazy[3] == eager[3]  # the same support values, exactly
    np.testing.assert_allclose(lazy[4], eager[4], rtol=0, atol=1e-12)


@pytest.mark.parametrize(("case", "metric", "zero_division"),
                         [(c, m, z) for c in CASES for m in GRID_METRICS for z in ZERO_DIVISIONS])
def test_lazy_law_equals_its_support_on_the_enumerated_cases(case, metric, zero_division):
    yp, p, labels, _ = CASES[case]
    d = C.metric_distribution(metric, yp, p, labels, zero_division=zero_division, beta=BETA)
    if d._grid is None:  # never defined: a point mass, nothing lazy
        assert np.isnan(zero_division) or d.values.tolist() == [zero_division]
        assert d.p_undefined == 1.0
        return
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, zero_division))


def _random_case(seed: int, n: int):
    """Predictions, p (continuous, coarse, some 0 and 1) and about a third of labels known."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(n) < 0.05, rng.integers(0, 2, n), np.round(rng.beta(2, 2, n), 2))
    labels = np.where(rng.random(n) < 1 / 3, rng.integers(0, 2, n), np.nan)
    return rng.integers(0, 2, n), p, labels


@pytest.mark.parametrize("metric", GRID_METRICS)
@pytest.mark.parametrize("zero_division", ZERO_DIVISIONS)
def test_lazy_law_equals_its_support_when_quantiles_bisect(metric, zero_division):
    """n = 2000: more grid cells than a quantile enumerates, so it bisects first."""
    yp, p, labels = _random_case(3, 2000)
    grid = C._GridLaw.of_rows(metric, C._rows(yp, p, labels), BETA, 0.0)
    assert grid.a.size * grid.b.size > 2 * C._ENUMERATE
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, zero_division))


@pytest.mark.parametrize(("metric", "beta"), [("mcc", 1.0), ("fbeta", 0.3), ("fbeta", 0.0),
                                              ("fbeta", np.inf), ("f1", 1.0)])
def test_lazy_law_with_rounded_values_and_beta_limits(metric, beta):
    """n = 3e4: MCC's squared numerator passes 2^53 (values rounded); beta^2 = 0.09 is not a
    short rational; beta = 0 (precision: constant rows) and inf (recall)."""
    yp, p, labels = _random_case(4, 30_000)
    _assert_same(*_lazy_and_eager(metric, yp, p, labels, 0.0, beta=beta))


@pytest.mark.parametrize("metric", GRID_METRICS)
def test_grid_rows_are_monotone_with_undefined_cells_at_their_ends(metric):
    """What the lazy law relies on: in each row (fixed TP) the metric's doubles do not increase
    with FN, and undefined cells are a row's first or last cell, or the whole row."""
    cases = [CASES[c][:3] for c in CASES] + [_random_case(5, 30_000)]
    for yp, p, labels in cases:
        grid = C._GridLaw.of_rows(metric, C._rows(yp, p, labels), BETA, 0.0)
        values = grid.cells()[0].reshape(grid.a.size, grid.b.size)
        defined = np.arange(grid.b.size)
        defined = (defined >= grid.start[:, None]) & (defined < grid.end[:, None])
        assert np.array_equal(~np.isnan(values), defined)
        assert not (np.diff(values, axis=1) > 0).any()  # NaN differences compare False


def test_lazy_eti_breaks_exact_ties_like_the_support():
    """Recall with y_pred 1 1 0 and p = 1/2: the cells (TP, FN) give 0 w.p. 1/8 (undefined at
    (0, 0)) + 1/8, 1/2 w.p. 1/4, 2/3 w.p. 1/8 and 1 w.p. 3/8; all masses dyadic, so exact."""
    args = ("recall", [1, 1, 0], [0.5, 0.5, 0.5])
    d = C.metric_distribution(*args)  # 0 1/4, 1/2 1/4, 2/3 1/8, 1 3/8
    assert d.interval(0.5) == (0.0, 1.0)  # F(0) = 1/4 = alpha/2 exactly: Q(1/4) = 0
    assert d.mass(0.5, 2 / 3) == 0.375
    d = C.metric_distribution(*args, zero_division=1.0)  # 0 1/8, 1/2 1/4, 2/3 1/8, 1 1/2
    assert d.interval(0.5) == (0.5, 1.0)
    assert d.interval(0.75) == (0.0, 1.0)  # F(0) = 1/8 = alpha/2 exactly
    d = C.metric_distribution(*args, zero_division=np.nan)  # 1/7, 2/7, 1/7, 3/7 given defined
    assert d.interval(0.5) == (0.5, 1.0)
    assert (d.mean, d.p_undefined) == (pytest.approx(2 / 3, abs=1e-15), 0.125)
    assert d.values.tolist() == [0, 0.5, 2 / 3, 1]
    np.testing.assert_allclose(d.probs, np.array([1, 2, 1, 3]) / 7, rtol=1e-15)


def test_lazy_law_builds_its_support_once_and_only_when_asked():
    yp, p, labels = _random_case(6, 300)
    d = C.metric_distribution("f1", yp, p, labels)
    assert "metric='f1'" in repr(d)
    d.mean, d.interval(0.9), d.mass(0.2, 0.8)
    assert d._support is None
    assert d.values is d.values and d.probs is d.probs
    assert not d.values.flags.writeable and not d.probs.flags.writeable
    (a, b), (c, e) = d.interval(0.9, "hdi"), d.interval(0.9)
    assert b - a <= e - c


# ---------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize(("call", "match"), [
    (lambda: C.metric_distribution("f1", [1, 0], [0.5, 1.5]), "p must lie in"),
    (lambda: C.metric_distribution("f1", [1, 0], [0.5, np.nan]), "p has 1 NaN"),
    (lambda: C.metric_distribution("f1", [1, 0, 1], [0.5, 0.5]), "length mismatch"),
    (lambda: C.metric_distribution("f1", [1, 0], [0.5, 0.5], [1, 0, 1]), "labels has 3"),
    (lambda: C.metric_distribution("f1", [1, 2], [0.5, 0.5]), "y_pred must be binary"),
    (lambda: C.metric_distribution("f1", [1, 0], [0.5, 0.5], [1, 0.5]), "labels must be 0, 1"),
    (lambda: C.metric_distribution("auc", [1, 0], [0.5, 0.5]), "metric must be one of"),
    (lambda: C.metric_distribution("f1", [1, 0], [.5, .5], zero_division=2), "zero_division"),
    (lambda: C.metric_distribution("fbeta", [1, 0], [.5, .5], beta=-1), "beta must be"),
    (lambda: C.metric_distribution("f1", [1, 0], [.5, .5]).interval(1.0), "ci_prob"),
    (lambda: C.metric_distribution("f1", [1, 0], [.5, .5]).interval(0.9, "hpd"), "kind"),
    (lambda: C.metric_moments("f1", [1, 0], [-0.1, 0.5]), "p must lie in"),
    (lambda: C.metric_moments("f2", [1, 0], [0.5, 0.5]), "metric must be one of"),
    (lambda: C.metric_moments("f1", [], []), "y_pred is empty"),
    (lambda: C.auc_moments([0.1, 0.2], [0.5, np.nan]), "p has 1 NaN"),
    (lambda: C.auc_moments([0.1, np.inf], [0.5, 0.5]), "scores has 1 NaN or infinite"),
    (lambda: C.auc_moments([0.1, 0.2, 0.3], [0.5, 0.5]), "length mismatch"),
    (lambda: C.auc_numerator_moments([0.1, 0.2], [0.5, 0.5], ties="ge"), "ties must be one of"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
