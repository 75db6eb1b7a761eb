"""ROC-AUC's moments split into the labelled rows' fixed part and the missing rows' part are the
moments of the completed rows: against every completion of a few missing labels, against the
moments of the whole completed rows (the computation they replace), and through
component_moments against the single-p path; the products of all-0 and all-1 completions skip
no value."""

import itertools

import numpy as np
import pytest

from bayeval.confusion_moments import (
    auc_count_moments,
    auc_count_moments_rows,
    ratio_moments,
)
from bayeval.methods.pemi.fast import Options, Rows, moments
from bayeval.methods.pemi.missing_auc import BLOCK, MissingAuc
from bayeval.methods.pemi.mixture import Components, component_moments

TIE = {"half": 0.5, "one": 1.0}


def data(n, decimals, missing, seed):
    """Scores rounded to ``decimals`` (ties when few), labels of rate ``score``, a share
    ``missing`` of them NaN, and probabilities of several maps for the missing rows."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.beta(2, 2, n), decimals)
    y = (rng.random(n) < s).astype(float)
    y[rng.random(n) < missing] = np.nan
    rows = Rows(s, (s >= 0.5).astype(np.int8), y)
    return rows, rng.random((7, rows.m))


def completed(rows, p_missing):
    """The completed probabilities of every row: the labels where known."""
    full = np.nan_to_num(rows.labels)
    full[rows.order] = p_missing
    return full


@pytest.mark.parametrize("ties", ["half", "one"])
def test_moments_are_those_of_every_completion_of_the_missing_labels(ties):
    """Eight missing labels among fourteen rows with tied scores (a labelled row tied with a
    missing one, and two missing rows tied): the mean, variances and covariance of A (the
    Mann-Whitney count) and D = N+ N- over the 2^8 completions, weighted by their
    probabilities."""
    s = np.array([0.1, 0.2, 0.2, 0.3, 0.4, 0.4, 0.4, 0.5, 0.6, 0.7, 0.7, 0.8, 0.9, 0.9])
    y = np.array([0, np.nan, 1, np.nan, 0, np.nan, np.nan, 1, np.nan, np.nan, 0, np.nan, 1,
                  np.nan])
    rows = Rows(s, (s >= 0.5).astype(np.int8), y)
    p = np.random.default_rng(1).random((3, rows.m))
    w = TIE[ties]
    xi = (s[:, None] > s[None, :]) + w * (s[:, None] == s[None, :])
    np.fill_diagonal(xi, 0.0)
    split = MissingAuc.of(rows, w).moments(p)
    for k in range(3):
        a, d, prob = [], [], []
        for bits in itertools.product((0, 1), repeat=rows.m):
            labels = np.nan_to_num(y)
            labels[rows.order] = bits
            a.append(labels @ xi @ (1 - labels))
            d.append(labels.sum() * (1 - labels).sum())
            prob.append(np.prod(np.where(bits, p[k], 1 - p[k])))
        a, d, prob = np.array(a), np.array(d), np.array(prob)
        ea, ed = prob @ a, prob @ d
        exact = (ea, prob @ (a - ea) ** 2, ed, prob @ (d - ed) ** 2, prob @ ((a - ea) * (d - ed)))
        np.testing.assert_allclose([x[k] for x in split], exact, rtol=1e-12)


@pytest.mark.parametrize("decimals", [2, 12])  # tied scores, and none
@pytest.mark.parametrize("ties", ["half", "one"])
def test_moments_equal_those_of_the_whole_completed_rows(decimals, ties):
    """Against auc_count_moments_rows on every row of the completed test set in score order
    (what component_moments computed per draw before), with probabilities at 0 and 1 among
    the missing rows, over more draws than one block."""
    rows, p = data(3000, decimals, 0.4, decimals)
    p[0, :10], p[1, :10] = 0.0, 1.0
    p = np.tile(p, (BLOCK // rows.m + 1, 1))
    w = TIE[ties]
    order = np.argsort(rows.scores, kind="stable")
    full = np.array([completed(rows, q)[order] for q in p])
    whole = auc_count_moments_rows(rows.scores[order], full, w)
    split = MissingAuc.of(rows, w).moments(p)
    for a, b in zip(whole, split, strict=True):
        # each sum runs over up to n terms of size up to n^2 (D's) or n^3 (the variances')
        scale = np.abs(a).max()
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-14 * rows.n * scale)
    for j in range(p.shape[0]):
        auc_a = ratio_moments(type(whole)(*(x[j] for x in whole)))
        auc_b = ratio_moments(type(split)(*(x[j] for x in split)))
        np.testing.assert_allclose(auc_b, auc_a, rtol=1e-12)


def test_no_labelled_row_and_no_missing_row():
    """Every label missing: the split holds no fixed part; none missing: the fixed pairs."""
    rows, _ = data(50, 2, 1.0, 3)
    p = np.random.default_rng(4).random((2, rows.m))
    split = MissingAuc.of(rows, 0.5).moments(p)
    for j in range(2):
        one = auc_count_moments(np.sort(rows.scores), completed(rows, p[j])[
            np.argsort(rows.scores, kind="stable")], 0.5)
        np.testing.assert_allclose([x[j] for x in split], one, rtol=1e-12)
    rows, _ = data(50, 2, 0.0, 5)
    known = MissingAuc.of(rows, 0.5)
    assert known.forward.size == 0
    order = np.argsort(rows.scores, kind="stable")
    expected = auc_count_moments(rows.scores[order], rows.labels[order], 0.5)
    assert known.known_num == expected.mean_num


@pytest.mark.parametrize("ties", ["half", "one"])
def test_component_moments_of_roc_auc_are_the_single_p_moments(ties):
    """Each component's ROC-AUC mean and variance equal the single-p PEMI-Gauss moments of the
    completed rows (fast.moments: auc_count_moments on the whole rows)."""
    rows, p = data(2000, 2, 0.3, 6)
    opts = Options(ties=ties)
    comps = Components(np.full(p.shape[0], 1 / p.shape[0]), lambda i: p[i])
    means, variances, _ = component_moments(rows, comps, ("roc_auc",), opts)["roc_auc"]
    for k in range(p.shape[0]):
        full = np.zeros(rows.n)
        full[rows.order] = p[k]
        np.testing.assert_allclose((means[k], variances[k]), moments(rows, full, "roc_auc", opts),
                                   rtol=1e-12)
