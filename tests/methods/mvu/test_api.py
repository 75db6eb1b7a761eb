"""be.mvu: the paper's synthetic reproduction (App. E.3), exact linear-Gaussian answers, the PyMC
models and their checks, decisions, edge cases and bad input."""

import numpy as np
import pytest
from scipy import special
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.calibration import mvce
from bayeval.methods.mvu.estimators import GaussianImputer, alpha_max_variance
from bayeval.methods.mvu.fast import hard_confidence
from tests.methods.mvu.synthetic import CLF, cov


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(7357)
    x = rng.multivariate_normal([0, 0], cov(), size=10_000)
    return x, CLF.predict_proba(x).argmax(1)


def soft_mvce(ev, y_full):
    cf = ev.closed_form
    return mvce(cf["c_hard"].values, cf["y_soft"].values, y_full)


def synthetic_mvces(x, y_full, j):
    """MVCE of every method of Table 16 with feature j missing (exact c_hard)."""
    xm = x.copy()
    xm[:, j] = np.nan
    out = {"ground truth": soft_mvce(mvu(CLF, xm, imputer=GaussianImputer([0, 0], cov())),
                                     y_full),
           "generator S=100": soft_mvce(mvu(CLF, xm, imputer=GaussianImputer([0, 0], cov()),
                                            dirichlet="moments", draws=100, random_seed=j),
                                        y_full)}
    for name, c in (("corr 0.6", cov(0.6)), ("corr 0.8", cov(0.8)),
                    ("cov x0.25", cov(factor=0.25)), ("cov x4", cov(factor=4.0))):
        out[name] = soft_mvce(mvu(CLF, xm, imputer=GaussianImputer([0, 0], c)), y_full)
    x_hat = GaussianImputer([0, 0], cov()).conditional(xm, np.isnan(xm))[0]
    phi = CLF.predict_proba(x_hat)  # the paper's "mean imputation" is the conditional mean
    out["mean 0 var"] = mvce(np.ones(len(x)), phi.argmax(1), y_full)
    alpha = alpha_max_variance(phi, 0.99)
    out["mean 0.99 max var"] = mvce(hard_confidence(alpha)[1], phi.argmax(1), y_full)
    out["mean 0.99 max var, scale 0.1"] = mvce(hard_confidence(0.1 * alpha)[1], phi.argmax(1),
                                               y_full)
    return out


# reference mean and SD over 30 fresh datasets (exact c_hard); a single dataset lies within 4 SD
BANDS = {"mean 0 var": ((0.0683, 0.0028), (0.1274, 0.0038)),
         "ground truth": ((0.0038, 0.0013), (0.0053, 0.0016)),
         "mean 0.99 max var": ((0.1738, 0.0021), (0.1228, 0.0035))}


@pytest.fixture(scope="module")
def table16(synthetic):
    return [synthetic_mvces(*synthetic, j) for j in (0, 1)]


@pytest.mark.parametrize("j", [0, 1], ids=["X1 missing", "X2 missing"])
def test_synthetic_mvce_within_the_reference_bands(table16, j):
    got = table16[j]
    for name, bands in BANDS.items():
        centre, sd = bands[j]
        assert abs(got[name] - centre) <= 4 * sd, (name, got[name])
    # the Monte-Carlo generator (S = 100, moments Beta, exact c_hard) is as good as the truth
    centre, sd = BANDS["ground truth"][j]
    assert got["generator S=100"] <= centre + 4 * sd
    # the paper's calibration gain for 0.99 max variance is a float32 artefact: exactly, none
    assert abs(got["mean 0.99 max var, scale 0.1"] - got["mean 0.99 max var"]) <= 5e-4


def test_synthetic_ordering_of_the_feature_average(table16):
    avg = {k: (table16[0][k] + table16[1][k]) / 2 for k in table16[0]}
    assert avg["ground truth"] < min(avg["corr 0.6"], avg["corr 0.8"])
    assert max(avg["corr 0.6"], avg["corr 0.8"]) < avg["cov x0.25"] < avg["cov x4"]
    assert avg["cov x4"] < avg["mean 0 var"] < avg["mean 0.99 max var"]


def test_exact_binary_answer_is_a_normal_cdf_and_monte_carlo_agrees():
    x = np.array([[np.nan, 0.9], [0.4, np.nan], [np.nan, -1.5]])
    imp = GaussianImputer([0, 0], cov())
    ev = mvu(CLF, x, imputer=imp)
    c = cov()[0, 1]  # x1 | x2 ~ N(c x2, 0.3 - c^2); x2 | x1 ~ N(c x1 / 0.3, 1 - c^2 / 0.3)
    m = np.array([c * 0.9 + 0.9 - 1, 0.4 + c / 0.3 * 0.4 - 1, c * -1.5 - 1.5 - 1])
    s = np.sqrt([0.3 - c**2, 1 - c**2 / 0.3, 0.3 - c**2])
    np.testing.assert_allclose(ev.closed_form["c_hard"], special.ndtr(np.abs(m) / s),
                               atol=1e-12)
    t = 0.3  # cost-sensitive: class 1 when phi_1 > t
    evt = mvu(CLF, x, imputer=imp, threshold=t)
    p1 = special.ndtr((m - special.logit(t)) / s)
    np.testing.assert_allclose(evt.closed_form["c_hard"], np.maximum(p1, 1 - p1), atol=1e-12)
    mc = mvu(CLF, x, imputer=imp, method="mc", draws=40_000, random_seed=1).closed_form
    exact = ev.closed_form["c_hard"].values
    assert np.all(np.abs(mc["c_hard"].values - exact)
                  <= 4 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-12)
    np.testing.assert_allclose(mc["c_hard_se"], np.sqrt(mc["c_hard"] * (1 - mc["c_hard"])
                                                        / 40_000))


def test_exact_multiclass_answer_is_an_orthant_probability():
    iris = load_iris()
    clf = LogisticRegression(max_iter=2000).fit(iris.data, iris.target)
    x = iris.data[::10].copy()
    x[:, 2] = np.nan
    x[::2, 3] = np.nan
    exact = mvu(clf, x, train=iris.data, random_seed=0).closed_form["c_hard"].values
    mc = mvu(clf, x, train=iris.data, method="mc", draws=40_000,
             random_seed=1).closed_form["c_hard"].values
    assert np.all(np.abs(mc - exact) <= 4 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-3)


def test_a_function_classifier_gets_the_vote_or_the_dirichlet_asked_for():
    iris = load_iris()
    clf = LogisticRegression(max_iter=2000).fit(iris.data, iris.target)
    predict = lambda z: clf.predict_proba(z)  # noqa: E731  (a function: its linearity is unknown)
    x = iris.data[::30].copy()
    x[:, 0] = np.nan
    ev = mvu(predict, x, train=iris.data, draws=300, random_seed=2)
    assert "vote frequency" in ev.warnings[0] and "alpha" not in ev.closed_form
    ev = mvu(predict, x, train=iris.data, draws=300, dirichlet="mle", random_seed=2)
    assert np.isfinite(ev.closed_form["alpha"]).all()


def test_model_a_both_passes_its_check(small):
    train, x = small
    ev = mvu(CLF, x, train=train, method="both", random_seed=3)
    assert ev.check().attrs["passed"]
    assert ev.diagnostics().attrs["ok"]
    s = ev.summary()
    assert {"mcse_mean", "r_hat", "y_hard", "c_hard", "c_hard_lower", "c_hard_upper"} <= set(s)
    rows = s.iloc[:4]
    assert np.all(rows["c_hard_lower"] <= rows["c_hard"])
    assert np.all(rows["c_hard"] <= rows["c_hard_upper"])
    assert s.loc[4, "c_hard"] == 1.0
    plug_in = mvu(CLF, x, train=train).closed_form["c_hard"].values
    assert np.all(np.abs(plug_in - s["c_hard"].values) <= s["c_hard_upper"] - s["c_hard_lower"])


def test_model_c_laplace_passes_its_check(small):
    train, x = small
    ev = mvu(CLF, x, train=train, imputer="dmv", method="both", random_seed=4)
    assert ev.meta["iid_draws"]
    assert ev.check().attrs["passed"]
    exact = mvu(CLF, x, imputer=GaussianImputer([0, 0], cov())).closed_form["c_hard"].values
    assert np.abs(ev.closed_form["c_hard"].values - exact).max() < 0.05


def test_nothing_missing_means_final_decisions_at_no_cost():
    x = np.array([[0.1, 0.2], [1.0, 1.5]])
    ev = mvu(CLF, x, imputer="zero")
    assert (ev.closed_form["c_hard"] == 1).all() and (ev.closed_form["sd"] == 0).all()
    assert "no feature is missing" in ev.warnings[0]
    decision = ev.decide(0.99)
    assert not decision["collect"].any() and decision.attrs["total_expected_cost"] == 0.0


def test_rows_with_everything_missing_get_the_prior_mvu():
    rng = np.random.default_rng(6)
    train = rng.multivariate_normal([0, 0], cov(), size=20_000)
    x = np.array([[np.nan, np.nan], [np.nan, np.nan], [0.3, np.nan]])
    c = mvu(CLF, x, train=train).closed_form["c_hard"].values
    assert c[0] == c[1]
    imp = GaussianImputer.fit(train)
    z_mean, z_var = imp.mean.sum() - 1, imp.cov.sum()  # z = x1 + x2 - 1 under the marginal
    assert c[0] == pytest.approx(special.ndtr(abs(z_mean) / np.sqrt(z_var)), abs=1e-12)
    share = (CLF.predict_proba(train).argmax(1) == 0).mean()  # the classifier's class shares
    assert abs(c[0] - share) <= 4 * np.sqrt(share * (1 - share) / len(train))


def test_explicit_mask_and_sensor_groups():
    rng = np.random.default_rng(8)
    train = rng.multivariate_normal([0, 0], cov(), size=500)
    x = train[:4].copy()
    mask = np.array([[1, 0], [0, 1], [0, 0], [1, 1]])
    a = mvu(CLF, x, mask=mask, train=train).closed_form
    b = mvu(CLF, np.where(mask, np.nan, x), train=train).closed_form
    assert a.identical(b)
    np.testing.assert_array_equal(a["n_missing"], [1, 1, 0, 2])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(predict_proba=object()), "predict_proba must be a fitted classifier"),
    (dict(X=np.ones((2, 3))), "X has 3 features but train has 2"),
    (dict(train=np.array([[0.0, np.nan], [1.0, 2.0]])), "train has 1 NaN"),
    (dict(train=np.array([[0.0, 1.0]])), "train has 1 row; .* at least 2 complete rows"),
    (dict(train=None), "needs train"),
    (dict(mask=np.ones((3, 2))), "mask must be 0/1"),
    (dict(mask=np.zeros((2, 2))), "X has NaN where mask says"),
    (dict(threshold=1.2), "threshold must lie in"),
    (dict(weights=[1.0, -1.0]), "weights must be 2 positive"),
    (dict(scale=0.0), "scale"),
    (dict(method="gibbs"), "method must be one of"),
    (dict(imputer="knn"), "imputer must be one of"),
    (dict(imputer="mean", heuristic_param=1.5), "heuristic_param"),
    (dict(imputer="mean", method="pymc"), "has no generative model"),
    (dict(method="pymc", ci_kind="hdi"), "ci_kind='hdi' needs"),
    (dict(draws=1), "draws must be an integer >= 2"),
])
def test_bad_input(kwargs, message):
    args = dict(predict_proba=CLF, X=np.array([[np.nan, 1.0], [0.5, 0.2]]),
                train=np.random.default_rng(0).normal(size=(50, 2)))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        mvu(args.pop("predict_proba"), args.pop("X"), **args)


def test_classifier_fitted_on_other_features():
    clf = LogisticRegression().fit(np.random.default_rng(0).normal(size=(40, 3)), [0, 1] * 20)
    with pytest.raises(ValueError, match="fitted on 3"):
        mvu(clf, np.array([[np.nan, 1.0]]), imputer="zero")


def test_old_n_draws_keyword_warns_and_gives_the_same_answer():
    x = np.array([[np.nan, 0.9], [0.4, np.nan]])
    imp = GaussianImputer([0, 0], cov())
    new = mvu(CLF, x, imputer=imp, method="mc", draws=500, random_seed=1)
    with pytest.warns(FutureWarning, match=r"mvu\(n_draws=\) is now mvu\(draws=\)"):
        old = mvu(CLF, x, imputer=imp, method="mc", n_draws=500, random_seed=1)
    assert old.closed_form.identical(new.closed_form)
    with pytest.raises(TypeError, match="both n_draws= and its new name draws="):
        mvu(CLF, x, imputer=imp, n_draws=500, draws=500)
