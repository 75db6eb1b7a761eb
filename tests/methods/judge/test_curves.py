"""Cross-fitted calibration curves of the EIF estimator (mu_model="isotonic" and "spline"): the
estimate against a plain loop over the folds, the isotonic fit against pool-adjacent-violators
by hand, the spline's fit against its optimality conditions and a known curve, the coverage of
the intervals, and bad input."""

import numpy as np
import pytest
from scipy import special

from bayeval import judge
from bayeval.methods.judge import curves
from benchmarks.coverage_judge_curves import coverage, run

FOLDS = 5


def scored(m=60, n_total=1000, seed=0):
    """0/1 outcomes with P(Y = 1) = p ~ Beta(0.4, 0.6) and a judge's continuous score of p."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.4, 0.6, n_total)
    y = (rng.random(n_total) < p).astype(int)
    s = special.expit(0.2 * special.logit(p) + 0.8 + rng.normal(0, 0.05, n_total))
    return y[:m], s[:m], s[m:]


def brute_force(y, s, s_u, curve, rng):
    """The cross-fitted EIF estimate and se by a plain loop: fold k of a random permutation,
    every fold's curve fitted on the others, the sums written out."""
    m, n = y.size, s_u.size
    fold = np.empty(m, dtype=int)
    fold[rng.permutation(m)] = np.arange(m) % FOLDS
    span = (min(s.min(), s_u.min()), max(s.max(), s_u.max()))
    mu_l, mu_u = np.zeros(m), np.zeros(n)
    for k in range(FOLDS):
        fit = curves.fit_curve(curve, s[fold != k], y[fold != k], span)
        for j in range(m):
            if fold[j] == k:
                mu_l[j] = fit.predict(s[j : j + 1])[0]
        mu_u += fit.predict(s_u) / FOLDS
    n_total = m + n
    theta = (sum(mu_l) + sum(mu_u)) / n_total + sum(y - mu_l) / m
    mu_bar = (sum(mu_l) + sum(mu_u)) / n_total
    resid_bar = sum(y - mu_l) / m
    var = (sum((v - mu_bar) ** 2 for v in [*mu_l, *mu_u]) / n_total**2
           + sum((r - resid_bar) ** 2 for r in y - mu_l) / m**2)
    return theta, np.sqrt(var)


@pytest.mark.parametrize("curve", curves.CURVES)
def test_cross_fitted_eif_equals_a_loop_over_folds(curve):
    y, s, s_u = scored()
    ev = judge(y, s, s_u, mu_model=curve, random_seed=7)
    theta, se = brute_force(y, s, s_u, curve, np.random.default_rng(7))
    got = ev.closed_form.sel(estimator="eif")
    assert abs(float(got["mean"]) - theta) < 1e-12 and abs(float(got["sd"]) - se) < 1e-12
    data = ev.tree["data"].to_dataset()
    assert str(data["mu_model"].values) == curve and int(data["folds"]) == FOLDS
    # two groups draw their folds one after the other from the one seed
    y2, s2, s2_u = scored(seed=1)
    ev = judge({"a": y, "b": y2}, {"a": s, "b": s2}, {"a": s_u, "b": s2_u}, mu_model=curve,
               random_seed=7)
    rng = np.random.default_rng(7)
    for group, args in (("a", (y, s, s_u)), ("b", (y2, s2, s2_u))):
        theta, se = brute_force(*args, curve, rng)
        got = ev.closed_form.sel(estimator="eif", group=group)
        assert abs(float(got["mean"]) - theta) < 1e-12 and abs(float(got["sd"]) - se) < 1e-12
    # a graded outcome (identity link) through eif_curve, and the seed decides the folds
    rating = np.round(4 * np.r_[s, s_u] + np.random.default_rng(3).normal(0, 0.3, 1000), 1)
    est = curves.eif_curve(rating[:60], s, s_u, curve=curve, random_seed=11)
    theta, se = brute_force(rating[:60], s, s_u, curve, np.random.default_rng(11))
    assert abs(est.estimate - theta) < 1e-12 and abs(est.se - se) < 1e-12
    other = curves.eif_curve(rating[:60], s, s_u, curve=curve, random_seed=12)
    assert other.estimate != est.estimate


def pool_adjacent_violators(values, weights):
    """The increasing least-squares fit by hand: merge adjacent blocks while they decrease."""
    blocks = []  # [mean, weight, size]
    for v, w in zip(values, weights, strict=True):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (a, wa, na), (b, wb, nb) = blocks.pop(-2), blocks.pop()
            blocks.append([(a * wa + b * wb) / (wa + wb), wa + wb, na + nb])
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks])


def test_isotonic_is_pool_adjacent_violators():
    s = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    fit = curves.Isotonic.fit(s, y)
    # scores 1..5 have means 0, 1/2 (two items), 0, 1, 0: 1/2 and 0 pool to 1/3, then 1 and 0
    assert np.allclose(fit.value, [0, 1 / 3, 1 / 3, 1 / 2, 1 / 2], atol=1e-15)
    assert np.allclose(fit.value, pool_adjacent_violators([0, 0.5, 0, 1, 0], [1, 2, 1, 1, 1]),
                       atol=1e-15)
    assert np.allclose(fit.predict([0.0, 1.5, 3.5, 9.0]), [0, 1 / 6, 5 / 12, 1 / 2], atol=1e-15)
    # outcomes that fall with the score give the decreasing fit
    down = curves.Isotonic.fit(s, 1 - y)
    assert np.allclose(down.value, 1 - fit.value, atol=1e-15)
    rng = np.random.default_rng(0)
    for _ in range(20):
        s, y = rng.integers(0, 8, 30).astype(float), rng.random(30)
        _, where = np.unique(s, return_inverse=True)
        count = np.bincount(where)
        means = np.bincount(where, weights=y) / count
        fit = curves.Isotonic.fit(s, y)
        want = (pool_adjacent_violators(means, count) if np.cov(s, y)[0, 1] >= 0
                else -pool_adjacent_violators(-means, count))
        assert np.allclose(fit.value, want, atol=1e-12)


def test_spline_fit():
    """The identity link keeps straight lines (the penalty's null space); the logistic fit
    solves its penalised score equations and recovers a known curve."""
    s = np.linspace(0.1, 0.9, 40)
    line = curves.PSpline.fit(s, 2 + 3 * s)
    assert np.max(np.abs(line.predict([0.1, 0.37, 0.9]) - (2 + 3 * np.array([0.1, 0.37, 0.9])))
                  ) < 1e-6
    rng = np.random.default_rng(1)
    s = rng.random(20000)
    truth = special.expit(6 * (s - 0.4) ** 2 * np.sign(s - 0.4) * 4)
    y = (rng.random(20000) < truth).astype(float)
    fit = curves.PSpline.fit(s, y, link="logit")
    basis = curves.bspline_basis(s, *fit.span)
    diff = np.diff(np.eye(basis.shape[1]), 2, axis=0)
    penalty = fit.lam * diff.T @ diff + np.eye(basis.shape[1]) / curves.COEF_SD**2
    score = basis.T @ (y - special.expit(basis @ fit.coef))
    assert np.max(np.abs(score - penalty @ fit.coef)) < 1e-6 * np.max(np.abs(score)) + 1e-6
    grid = np.linspace(0.05, 0.95, 19)
    want = special.expit(6 * (grid - 0.4) ** 2 * np.sign(grid - 0.4) * 4)
    # about 20,000 / edf items per local mean: binomial sd <= 0.5 / sqrt(20000 / 10) = 0.011
    assert np.max(np.abs(fit.predict(grid) - want)) < 4 * 0.011
    assert 3 < fit.edf < 15


def test_coverage_and_width():
    """benchmarks.coverage_judge_curves, the hedging judge (E[Y | s] a steep S-curve), R = 200
    per m: the curves cover within 3 MC SE of 0.95; their intervals are narrower than the
    line's and PPI++'s (paired differences beyond 3 MC SE; measured 10-53 SE) and, at m = 200
    where the bins cover, not wider than the bins'. (At m <= 50 the bins' intervals are the
    narrowest because their standard error is too small: coverage 0.91 at m = 50, 0.75 at
    m = 20 with R = 1,000.)"""
    frame = run(200, judges=("hedging",), labelled=(50, 200),
                estimators=("ppi_pp", "bins", "linear", "isotonic", "spline"))
    cov = coverage(frame)
    for m in (50, 200):
        for est in ("eif_isotonic", "eif_spline"):
            row = cov.loc[("hedging", m, est)]
            se = np.sqrt(0.95 * 0.05 / row["replications"])
            assert abs(row["coverage"] - 0.95) < 3 * se, (m, est, row["coverage"])
    width = (frame.assign(width=frame["upper"] - frame["lower"])
             .pivot_table(index=["m", "replicate"], columns="estimator", values="width"))

    def paired(m, a, b):
        d = width.loc[m, a] - width.loc[m, b]
        return d.mean(), d.std() / np.sqrt(d.size)

    narrower = [(200, "eif_spline", "eif_linear"), (200, "eif_spline", "ppi_pp"),
                (200, "eif_isotonic", "eif_linear"), (200, "eif_isotonic", "ppi_pp"),
                (50, "eif_spline", "eif_linear"), (50, "eif_spline", "ppi_pp")]
    for m, a, b in narrower:
        diff, se = paired(m, a, b)
        assert diff < -3 * se, (m, a, b, diff, se)
    diff, se = paired(200, "eif_spline", "eif_bins")
    assert diff < 3 * se, (diff, se)


def test_bad_input():
    y, s, s_u = scored()
    cases = [
        (dict(mu_model="splines"), "mu_model must be one of"),
        (dict(mu_model="spline", folds=1), "folds must be an integer >= 2"),
        (dict(mu_model="isotonic", folds=2.0), "folds must be an integer >= 2"),
        (dict(mu_model="spline", folds=61), "folds=61 exceeds the 60 labelled items"),
        (dict(mu_model="bins", folds=5), "folds applies to the cross-fitted curves"),
        (dict(folds=5), "folds applies to the cross-fitted curves"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            judge(y, s, s_u, **kwargs)
    with pytest.raises(ValueError, match="curve must be one of"):
        curves.eif_curve(y, s, s_u, curve="loess")
    with pytest.raises(ValueError, match="length mismatch: y has 60, yhat has 59"):
        curves.eif_curve(y, s[:59], s_u)
    with pytest.raises(ValueError, match=r"y .*NaN"):
        curves.eif_curve(np.r_[np.nan, y[1:]], s, s_u)
