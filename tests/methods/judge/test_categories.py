"""The judge with K categories: estimators against independent computations (population values,
the binary estimators on each class indicator, a direct maximisation of the likelihood,
simulation), the exact posterior, coverage, and be.judge's handling of categories."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy

import bayeval as be
from bayeval.methods.judge import categories as cat
from bayeval.methods.judge import fast
from benchmarks.coverage_judge_categories import PI, WEIGHTS, M, run, simulate

TABLE = np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]])
UNLABELLED = np.array([450, 320, 230])
RUNNING = cat.ClassCounts(TABLE, UNLABELLED)
#: EM stops when no parameter moves by more than 1e-12; its error is then below this
EM = 1e-9
FREQUENTIST = ("naive", "classical", "rogan_gladen", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif",
               "mle")


def test_population_counts_give_the_truth():
    """Counts equal to their expectations: every corrected estimator returns pi exactly, naive
    the judge's shares M^T pi."""
    m, n = 1000.0, 9000.0
    c = cat.ClassCounts(m * PI[:, None] * M, n * PI @ M)
    for name, f in cat.by_name(c).items():
        expected = PI @ M if name == "naive" else PI
        np.testing.assert_allclose(f().estimate, expected, rtol=0, atol=EM if name == "mle"
                                   else 1e-12, err_msg=name)
    _, mm, _ = cat.mle_em(c)
    np.testing.assert_allclose(mm, M, atol=1e-9)
    np.testing.assert_allclose(cat.misclassification(c), M, atol=1e-12)


def test_prevalences_sum_to_one():
    rng = np.random.default_rng(1)
    c = simulate(200, 5000, 50, rng)
    for name, f in cat.by_name(c).items():
        est = f()
        np.testing.assert_allclose(est.estimate.sum(-1), 1, atol=1e-12, err_msg=name)
        if name != "naive":  # its covariance is the judge's shares': rows sum to 0 too
            np.testing.assert_allclose(est.cov.sum(-1), 0, atol=1e-12, err_msg=name)
    draws = cat.posterior_draws(RUNNING, np.full((3, 3), 0.5), 1000, rng)
    np.testing.assert_allclose(draws.sum(1), 1, atol=1e-12)


def _indicator(k):
    """The binary judge's Counts of the class-k indicators of the running example."""
    y, yhat = np.divmod(np.repeat(np.arange(9), TABLE.ravel()), 3)
    yhat_u = np.repeat(np.arange(3), UNLABELLED)
    return fast.Counts.from_labels(y == k, yhat == k, yhat_u == k), (y, yhat, yhat_u)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_each_class_is_the_binary_estimator_on_its_indicator(k):
    """naive, classical, PPI and PPI++ at a given lambda are ppi_py's binary formulas on the
    indicator 1{Y = k}; the EIF is the binary cell EIF with the judge's 3 labels as cells."""
    counts, (y, yhat, yhat_u) = _indicator(k)
    mo = fast.Moments.from_counts(counts)
    pairs = {"naive": (cat.naive(RUNNING), fast.naive(mo)),
             "classical": (cat.classical(RUNNING), fast.classical(mo)),
             "ppi": (cat.ppi_pp(RUNNING, 1.0), fast.ppi(mo)),
             "ppi_pp(0.37)": (cat.ppi_pp(RUNNING, 0.37), fast.ppi_pp(mo, 0.37))}
    c = np.bincount(yhat, minlength=3)
    s = np.bincount(yhat, weights=y == k, minlength=3)
    pairs["eif"] = (cat.eif(RUNNING), fast.eif_cells(c, s, np.bincount(yhat_u, minlength=3)))
    for name, (ours, binary) in pairs.items():
        assert ours.estimate[k] == pytest.approx(float(binary.estimate), abs=1e-12), name
        assert ours.se()[k] == pytest.approx(float(binary.se), abs=1e-12), name


def test_two_categories_equal_the_binary_judge():
    """'no'/'yes' labels go through the K-category path; 'yes' equals the 0/1 judge for every
    estimator (mean, sd, interval), Rogan–Gladen and PPI++'s lambda included."""
    rng = np.random.default_rng(2)
    y = (rng.random(150) < 0.35).astype(int)
    yhat = np.where(rng.random(150) < 0.8, y, 1 - y)
    yhat_u = (rng.random(3000) < 0.4).astype(int)
    names = np.array(["no", "yes"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        binary = be.judge(y, yhat, yhat_u, method="all").summary()
        ours = be.judge(names[y], names[yhat], names[yhat_u], method="all").summary()
    for name in FREQUENTIST:
        row = ours.loc[(name, "prevalence", "yes")]
        for col in ("mean", "sd", "lower", "upper"):
            tol = EM if name == "mle" else 1e-12
            assert row[col] == pytest.approx(binary.loc[name, col], abs=tol), (name, col)


def test_weighted_score_and_its_variance_are_ppi_on_the_score():
    """w^T pi-hat with w^T Sigma w is PPI (and PPI++ at a fixed lambda) of the score
    Y_w = w[Y], Yhat_w = w[Yhat]: checks the covariance across classes."""
    _, (y, yhat, yhat_u) = _indicator(0)
    mo = fast.moments(WEIGHTS[y], WEIGHTS[yhat], WEIGHTS[yhat_u])
    for lam in (1.0, 0.37):
        mean, se = cat.ppi_pp(RUNNING, lam).weighted(WEIGHTS)
        ref = fast.ppi_pp(mo, lam)
        assert (mean, se) == pytest.approx((float(ref.estimate), float(ref.se)), abs=1e-12)


def test_mle_em_is_the_maximum_of_the_likelihood():
    """EM's (pi, M) equals a direct maximisation of the observed log-likelihood (BFGS on
    softmax coordinates) and the closed form rho_j mu_kj / pi_k."""
    def negloglik(x):
        pi = scipy.special.softmax(np.append(x[:2], 0))
        mm = scipy.special.softmax(np.column_stack([x[2:].reshape(3, 2), np.zeros(3)]), axis=1)
        return -(np.sum(TABLE * np.log(pi[:, None] * mm)) + UNLABELLED @ np.log(pi @ mm))

    fit = scipy.optimize.minimize(negloglik, np.zeros(8), method="BFGS",
                                  options={"gtol": 1e-9})
    pi_num = scipy.special.softmax(np.append(fit.x[:2], 0))
    pi, mm, iterations = cat.mle_em(RUNNING)
    assert iterations < cat.EM_MAX_ITER
    np.testing.assert_allclose(pi, pi_num, atol=1e-6)
    eif = cat.eif(RUNNING)
    np.testing.assert_allclose(pi, eif.estimate, atol=1e-10)
    c = TABLE.sum(0)
    rho = (c + UNLABELLED) / (TABLE.sum() + UNLABELLED.sum())
    np.testing.assert_allclose(mm, rho * (TABLE / c) / pi[:, None], atol=1e-9)


@pytest.mark.parametrize("name", ["rogan_gladen", "eif", "ppi", "ppi_pp"])
def test_covariances_match_the_simulated_ones(name):
    """The mean estimated variance of each prevalence and of the win rate equals the variance
    of the estimates over 4,000 simulated replicates (m = 300): within 4 Monte-Carlo SEs of a
    variance, sqrt(2 / R) relative."""
    rng = np.random.default_rng(3)
    c = simulate(300, 5000, 4000, rng)
    est = cat.by_name(c)[name]()
    values = np.column_stack([est.estimate, est.estimate @ WEIGHTS])
    predicted = np.column_stack([est.se() ** 2, est.weighted(WEIGHTS)[1] ** 2]).mean(0)
    ratio = values.var(0, ddof=1) / predicted
    assert np.abs(ratio - 1).max() < 4 * np.sqrt(2 / 4000) + 0.02, ratio  # + O(1/m) bias


def test_posterior_draws_match_the_exact_moments():
    rng = np.random.default_rng(4)
    alpha = np.full((3, 3), 0.5)
    draws = cat.posterior_draws(RUNNING, alpha, 200_000, rng)
    exact = cat.posterior_moments(RUNNING, alpha)
    sd = exact.se()
    assert np.abs(draws.mean(0) - exact.estimate).max() < 4 * sd.max() / np.sqrt(200_000)
    np.testing.assert_allclose(np.cov(draws.T), exact.cov, atol=4 * sd.max() ** 2
                               * np.sqrt(2 / 200_000))


def test_reduced_coverage_of_the_benchmark():
    """The benchmark at m = 100, R = 300: EIF, PPI++ and the posterior cover the prevalences and
    the win rate at 0.95 within 4 Monte-Carlo SEs; naive does not."""
    frame = run(300, m_grid=(100,), seed=11).set_index(["estimator", "estimand"])
    for name in ("eif", "ppi_pp", "bayes"):
        cover = frame.loc[name, "coverage"]
        assert (np.abs(cover - 0.95) < 4 * np.sqrt(0.95 * 0.05 / 300)).all(), (name, cover)
    assert frame.loc[("naive", "tie"), "coverage"] < 0.5


# =============================================================================== be.judge
def test_judge_with_categories_weights_and_a_categorical(tmp_path):
    """Strings, a pandas Categorical with a category only the judge uses, the win rate, and a
    lossless round trip through netCDF."""
    y = pd.Categorical(["A", "B", "tie", "A", "B", "A", "B", "tie"] * 4,
                       categories=["A", "tie", "B"])
    yhat = np.array(["A", "B", "A", "A", "B", "A", "tie", "tie"] * 4)
    ev = be.judge(y, yhat, ["A", "B", "tie", "A"] * 30, method="eif",
                  weights={"A": 1, "tie": 0.5, "B": 0})
    s = ev.summary()
    assert [i[2] for i in s.index] == ["A", "tie", "B", ""]
    mean = s["mean"].to_numpy()
    assert mean[3] == pytest.approx(mean[0] + 0.5 * mean[1], abs=1e-12)
    assert (s["lower"] <= s["mean"]).all() and (s["mean"] <= s["upper"]).all()
    back = be.load(ev.to_netcdf(tmp_path / "judge.nc"))
    assert type(back).__name__ == "JudgeClasses" and back.equals(ev)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"weights": {"A": 1, "B": 0}}, ValueError, r"missing: \['tie'\]"),
    ({"weights": {"A": 1, "B": 0, "tie": 0.5, "C": 2}}, ValueError, r"unknown: \['C'\]"),
    ({"weights": {"A": 1, "B": 1, "tie": 1}}, ValueError, "not all equal"),
    ({"weights": [1, 0.5, 0]}, TypeError, "weights must be a mapping"),
    ({"mu_model": "bins"}, ValueError, "with categories, mu_model is 'isotonic' or 'spline'"),
    ({"prior": np.ones((2, 2))}, ValueError, "3 x 3 array of positive"),
    ({"method": "rogan_gladen_adjusted"}, ValueError, "method must be one of"),
])
def test_bad_input_with_categories(kwargs, error, message):
    y = ["A", "B", "tie", "A", "B", "tie"] * 3
    with pytest.raises(error, match=message):
        be.judge(y, y, ["A", "B"], **kwargs)


def test_binary_labels_refuse_weights_and_few_labels_need_the_posterior():
    with pytest.raises(ValueError, match="weights apply to labels in K categories"):
        be.judge([0, 1, 0, 1], [0, 1, 1, 1], [0, 1], weights={0: 0, 1: 1})
    y = ["A", "A", "B", "B", "tie"]
    with pytest.raises(ValueError, match=r"fewer than 2 labelled items of 1 category "
                                         r"\('tie': 1\)"):
        be.judge(y, y, ["A", "B"])
    many = np.arange(300).astype(str)
    with pytest.raises(ValueError, match=r"300 categories \('0': 1, .*'17': 1 and 290 more\)"):
        be.judge(many[:40], many[:40], many)
    with pytest.raises(ValueError, match=r"y: 300 x 300 arrays .* 20,000 draws .* 13.4 GiB"):
        be.judge(many[:40], many[:40], many, method="bayes")
    post = be.judge(y, y, ["A", "B"], method="bayes", random_seed=0).summary()
    assert post["mean"].sum() == pytest.approx(1, abs=1e-12)


def test_rogan_gladen_is_refused_when_the_matrix_is_ill_conditioned():
    """A judge that calls A and B the same way: its condition number is named."""
    y = ["A"] * 10 + ["B"] * 10 + ["tie"] * 10
    yhat = (["A"] * 5 + ["B"] * 5) * 2 + ["tie"] * 10
    with pytest.raises(ValueError, match=r"condition number (inf|\d[\d.e+]*) > 100"):
        be.judge(y, yhat, ["A", "tie"] * 20, method="rogan_gladen")
    with pytest.warns(UserWarning, match="rogan_gladen left out"):
        ev = be.judge(y, yhat, ["A", "tie"] * 20, method="all")
    assert "rogan_gladen" not in ev.closed_form["estimator"].values
