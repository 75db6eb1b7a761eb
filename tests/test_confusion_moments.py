"""Tests of bayeval.confusion_moments: exact moments against enumeration, delta-method moments
against finite differences, closed forms and Monte Carlo (4-sigma rules: a Monte-Carlo mean within
4 standard errors plus the second-order term).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayeval import confusion_moments
from bayeval.confusion import label_rows, metric_distribution
from bayeval.confusion_moments import (
    auc_count_moments_rows,
    auc_moments,
    auc_numerator_moments,
    count_moments,
    metric_moments,
)
from bayeval.metrics import METRICS, from_counts, roc_auc
from tests.confusion_oracle import BETA, CASES, completions, moderate_case, oracle

NONLINEAR = ("recall", "specificity", "f1", "fbeta", "balanced_accuracy", "mcc")


# ---------------------------------------------------------------------------------------------
# exact moments against enumeration


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("metric", ["accuracy", "precision", "npv"])
def test_linear_moments_are_exact(case, metric):
    yp, p, labels, _ = CASES[case]
    values, probs, _ = oracle(case, metric, 0.0)
    mean = math.fsum(values * probs)
    got_mean, got_var = metric_moments(metric, yp, p, labels)
    assert abs(got_mean - mean) <= 1e-12
    assert abs(got_var - math.fsum((values - mean) ** 2 * probs)) <= 1e-12


def _pair_sums(name: str, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """A (Mann-Whitney count) and D = N+ N- of every completion, by the O(n^2) definition."""
    s = CASES[name][3]
    y, _ = completions(name)
    xi = (s[:, None] > s[None, :]) + (0.5 if ties == "half" else 1.0) * (s[:, None] == s[None, :])
    np.fill_diagonal(xi, 0)
    a = np.einsum("ki,ij,kj->k", y, xi, 1 - y)
    return a, y.sum(1) * (1 - y).sum(1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("ties", ["half", "one"])
def test_auc_numerator_moments_equal_enumeration(case, ties):
    _, p, labels, s = CASES[case]
    a, d = _pair_sums(case, ties)
    w = completions(case)[1]
    ma, md = a @ w, d @ w
    got = auc_numerator_moments(s, p, labels, ties=ties)
    want = (ma, ((a - ma) ** 2) @ w, md, ((d - md) ** 2) @ w, ((a - ma) * (d - md)) @ w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_auc_moments_match_quadratic_reference_with_ties():
    """O(n log n) against the O(n^2) matrix form of the same identities (n = 300)."""
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
        got = auc_numerator_moments(s, p, labels, ties=ties)
        np.testing.assert_allclose(got, want, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# delta-method moments


@pytest.mark.parametrize("metric", METRICS)
def test_derivatives_match_finite_differences(metric):
    """(g, g_T, g_F, g_TT, g_FF) against central differences of bayeval.metrics.from_counts."""
    yp, p, labels = moderate_case()
    rows = label_rows(yp, p, labels)
    t, f = rows.tp_known + rows.p_pos.sum(), rows.fn_known + rows.p_neg.sum()
    if metric == "mcc":
        got = confusion_moments._mcc_derivatives(rows.n_pos, rows.n_neg, t, f)
    else:
        terms = confusion_moments._ratio_terms(metric, rows.n_pos, rows.n_neg, BETA, t, f)
        got = confusion_moments._ratio_derivatives(terms, t, f)

    def g(t, f):
        return from_counts(metric, t, rows.n_pos - t, f, rows.n_neg - f, beta=BETA)

    h = 1e-3
    want = [g(t, f), (g(t + h, f) - g(t - h, f)) / (2 * h), (g(t, f + h) - g(t, f - h)) / (2 * h),
            (g(t + h, f) - 2 * g(t, f) + g(t - h, f)) / h**2,
            (g(t, f + h) - 2 * g(t, f) + g(t, f - h)) / h**2]
    np.testing.assert_allclose(got[:3], want[:3], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-4, atol=1e-9)


def test_recall_and_f1_variances_equal_the_closed_forms():
    """The closed forms of Dervovic & Cashmore (2025), to 1e-12 relative."""
    yp, p, labels = moderate_case()
    rows = label_rows(yp, p, labels)
    mu_u, mu_v = rows.p_pos.sum(), rows.p_neg.sum()
    s_u, s_v = (rows.p_pos * (1 - rows.p_pos)).sum(), (rows.p_neg * (1 - rows.p_neg)).sum()
    tp_k, fn_k, npp = rows.tp_known, rows.fn_known, rows.n_pos
    mz, mw = tp_k + mu_u, tp_k + fn_k + mu_u + mu_v
    recall = ((fn_k + mu_v) ** 2 * s_u + mz**2 * s_v) / mw**4
    mw1 = npp + tp_k + fn_k + mu_u + mu_v
    f1 = 4 * ((npp + tp_k + fn_k - tp_k + mu_v) ** 2 * s_u + mz**2 * s_v) / mw1**4
    assert metric_moments("recall", yp, p, labels)[1] == pytest.approx(recall, rel=1e-12)
    assert metric_moments("f1", yp, p, labels)[1] == pytest.approx(f1, rel=1e-12)
    assert metric_moments("recall", yp, p, labels, second_order=False)[0] == pytest.approx(
        mz / mw, rel=1e-12)


@pytest.mark.parametrize("metric", NONLINEAR)
def test_second_order_mean_is_closer_to_the_exact_mean(metric):
    yp, p, labels = moderate_case(seed=8, n=40)
    exact = metric_distribution(metric, yp, p, labels, beta=BETA).mean
    first = metric_moments(metric, yp, p, labels, beta=BETA, second_order=False)[0]
    second = metric_moments(metric, yp, p, labels, beta=BETA)[0]
    assert abs(second - exact) < 0.5 * abs(first - exact)


def test_moments_against_monte_carlo():
    """4-sigma rules (N = 200,000 completions).

    Means: |MC - mu| <= 4 MCSE + |b2| with b2 the second-order term. Standard deviations of the
    ratio metrics: within 4/sqrt(2N) + 2 %; of the linear ones (exact): within 4/sqrt(2N).
    """
    yp, p, labels = moderate_case()
    rng = np.random.default_rng(2024)
    n_draws = 200_000
    unknown = np.isnan(labels)
    y = np.tile(np.nan_to_num(labels), (n_draws, 1))
    y[:, unknown] = rng.random((n_draws, unknown.sum())) < p[unknown]
    tp, fn = y @ yp, y @ (1 - yp)
    fp, tn = yp.sum() - tp, (1 - yp).sum() - fn
    for metric in METRICS:
        draws = from_counts(metric, tp, fp, fn, tn, beta=BETA)
        first = metric_moments(metric, yp, p, labels, beta=BETA, second_order=False)[0]
        mean, var = metric_moments(metric, yp, p, labels, beta=BETA)
        mcse = draws.std() / math.sqrt(n_draws)
        b2 = abs(mean - first)
        assert abs(draws.mean() - first) <= 4 * mcse + b2, metric
        assert abs(draws.mean() - mean) <= 4 * mcse + b2, metric
        slack = 0.0 if metric in ("accuracy", "precision", "npv") else 0.02
        assert abs(draws.std() / math.sqrt(var) - 1) <= 4 / math.sqrt(2 * n_draws) + slack, metric


def test_auc_moments_against_monte_carlo():
    _, p, labels = moderate_case()
    rng = np.random.default_rng(5)
    s = np.round(rng.normal(size=p.size), 1)  # ties
    n_draws = 40_000
    unknown = np.isnan(labels)
    y = np.tile(np.nan_to_num(labels), (n_draws, 1)).astype(int)
    y[:, unknown] = rng.random((n_draws, unknown.sum())) < p[unknown]
    for ties in ("half", "one"):
        draws = roc_auc(y, s, ties=ties)
        first = auc_moments(s, p, labels, ties=ties, second_order=False)[0]
        mean, var = auc_moments(s, p, labels, ties=ties)
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
        first = auc_moments(s, p, labels, ties=ties, second_order=False)[0]
        second = auc_moments(s, p, labels, ties=ties)[0]
        wins += abs(second - exact) < 0.5 * abs(first - exact)
    assert wins >= 8


def test_degenerate_moments():
    """Undefined with probability 1 gives zero_division; all labels known gives variance 0."""
    yp = np.zeros(5, int)
    p = np.full(5, 0.3)
    assert metric_moments("precision", yp, p) == (0.0, 0.0)
    assert metric_moments("precision", yp, p, zero_division=1.0) == (1.0, 0.0)
    assert all(np.isnan(metric_moments("mcc", yp, p, zero_division=np.nan)))
    labels = np.array([1, 0, 1, 1, 0])
    y_pred = np.array([1, 1, 0, 1, 0])
    for metric in METRICS:
        mean, var = metric_moments(metric, y_pred, p, labels, beta=BETA)
        want = from_counts(metric, 2, 1, 1, 1, beta=BETA)
        assert (mean, var) == (pytest.approx(want, abs=1e-15), 0.0)
    mean, var = auc_moments([0.1, 0.4, 0.35, 0.8], p[:4], labels[:4])  # 1 of 3 pairs
    assert (mean, var) == (pytest.approx(1 / 3, abs=1e-15), 0.0)
    with pytest.raises(ValueError, match="single class"):
        auc_moments([0.1, 0.4], [0.3, 0.2], [1, 1])


# ---------------------------------------------------------------------------------------------
# input validation


@pytest.mark.parametrize(("call", "match"), [
    (lambda: metric_moments("f1", [1, 0], [-0.1, 0.5]), "p must lie in"),
    (lambda: metric_moments("f2", [1, 0], [0.5, 0.5]), "metric must be one of"),
    (lambda: metric_moments("f1", [], []), "y_pred is empty"),
    (lambda: count_moments("f2", 1, 1, mean_tp=0.5, mean_fn=0.5, var_tp=0.1,
                                             var_fn=0.1), "metric must be one of"),
    (lambda: count_moments("f1", 1, 1, mean_tp=0.5, mean_fn=0.5, var_tp=0.1,
                                             var_fn=0.1, zero_division=2), "zero_division"),
    (lambda: auc_moments([0.1, 0.2], [0.5, np.nan]), "p has 1 NaN"),
    (lambda: auc_moments([0.1, np.inf], [0.5, 0.5]),
     "scores has 1 NaN or infinite"),
    (lambda: auc_moments([0.1, 0.2, 0.3], [0.5, 0.5]), "length mismatch"),
    (lambda: auc_numerator_moments([0.1, 0.2], [0.5, 0.5], ties="ge"),
     "ties must be one of"),
])
def test_bad_input_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("decimals", [2, 12])  # tied scores, and none
@pytest.mark.parametrize("ties", ["half", "one"])
def test_rows_of_probabilities_have_the_moments_of_each_row(decimals, ties):
    """The moments of many completions of the same sorted rows at once (the draws of a map)
    are those of each row alone."""
    rng = np.random.default_rng(decimals)
    s = np.sort(np.round(rng.random(400), decimals))
    p = rng.random((5, 400))
    known = rng.random(400) < 0.4
    p[:, known] = rng.integers(0, 2, known.sum())  # known labels, the same in every row
    rows = auc_count_moments_rows(s, p, 0.5 if ties == "half" else 1.0)
    for j in range(5):
        one = auc_numerator_moments(s, p[j], ties=ties)
        np.testing.assert_allclose([x[j] for x in rows], one, rtol=1e-12)


@pytest.mark.parametrize("rows", [1, 3])
def test_long_rows_summed_in_blocks_equal_the_quadratic_form(monkeypatch, rows):
    """Distinct scores are summed in column blocks, the running sums carried across them: with
    blocks of 64 elements, 600 rows take up to ten blocks and keep the O(n^2) moments."""
    monkeypatch.setattr(confusion_moments, "_BLOCK", 64)
    rng = np.random.default_rng(5)
    n = 600
    s = np.sort(rng.random(n))
    p = rng.random((rows, n))
    got = auc_count_moments_rows(s, p, 0.5)
    xi = np.tril(np.ones((n, n)), -1)  # s_i > s_j for i > j
    off = 1 - np.eye(n)
    for j in range(rows):
        pt, q = p[j], 1 - p[j]
        v = pt * q
        c_num, c_den = xi @ q - xi.T @ pt, off @ (1 - 2 * pt)
        upper = np.triu(np.outer(v, v), 1).sum()
        want = (pt @ xi @ q, v @ c_num**2 + upper, pt @ off @ q, v @ c_den**2 + 4 * upper,
                v @ (c_num * c_den) + 2 * upper)
        np.testing.assert_allclose([x[j] for x in got], want, rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 5), (1, 8), (1, 100_003), (3, 1_001)])
def test_running_sums_are_numpys_cumsum(shape):
    """Grouped running sums (columns added as vectors) equal the one-at-a-time cumsum to
    rounding, tails shorter than a group and several rows included."""
    x = np.random.default_rng(0).random(shape)
    np.testing.assert_allclose(confusion_moments._running_sums(x), np.cumsum(x, axis=-1),
                               rtol=1e-13)
