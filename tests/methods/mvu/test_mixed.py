"""MVU with mixed data: the Gaussian copula imputer against a latent-normal generator with known
conditional laws, its fit, its margins, the MVU's c_hard against revealing the missing values,
DataFrames (dtypes and levels reach the classifier, rows and features keep their labels) and
bad input.

Tolerances: 4 standard errors of the Monte-Carlo frequencies compared (both sides' sizes), KS
tests at level 1e-3 with fixed seeds."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import bayeval as be
from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.copula import (
    CopulaImputer,
    FeatureCodec,
    level_probabilities,
    nominal_locations,
    truncated_normal,
)
from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
from tests.methods.mvu.synthetic import cov

# ------------------------------------------------------------------ latent-normal generator
# latents: income (continuous, log-normal margin), age (5 levels 30..34), smoker (bool),
# blood (3 unordered levels: one latent per level, identity block, centred cross-correlations)
NAMES = ["income", "age", "smoker", "blood"]
BLOOD = ["A", "B", "O"]
KINDS = ["continuous", "ordinal", "ordinal", "nominal"]
MU = nominal_locations([0.25, 0.25, 0.5])
AGE_CUT = np.array([-1.0, -0.3, 0.4, 1.1])
SMOKE_CUT = 0.5
INCOME = stats.lognorm(0.5, scale=40.0)
R = np.eye(6)
R[0, 1] = R[1, 0] = 0.5
R[0, 2] = R[2, 0] = -0.3
R[1, 2] = R[2, 1] = 0.4
R[0, 3:] = R[3:, 0] = 0.7 * np.array([2, -1, -1]) / np.sqrt(6)
R[2, 3:] = R[3:, 2] = 0.5 * np.array([-1, 2, -1]) / np.sqrt(6)


def latent(n, rng):
    return rng.multivariate_normal(np.zeros(6), R, size=n)


def codes(z):
    return np.column_stack([INCOME.ppf(special.ndtr(z[:, 0])),
                            30 + np.searchsorted(AGE_CUT, z[:, 1]),
                            z[:, 2] > SMOKE_CUT,
                            np.argmax(MU + z[:, 3:], axis=1)]).astype(float)


def frame(c, index=None):
    return pd.DataFrame({"income": c[:, 0], "age": c[:, 1].astype(int),
                         "smoker": c[:, 2].astype(bool),
                         "blood": pd.Categorical(np.array(BLOOD)[c[:, 3].astype(int)],
                                                 categories=BLOOD)}, index=index)


def true_imputer(sweeps=20):
    age = np.diff(np.concatenate([[0.0], special.ndtr(AGE_CUT), [1.0]]))
    smoke = special.ndtr(SMOKE_CUT)
    return CopulaImputer(R, [INCOME, (np.arange(30.0, 35.0), age), ([0.0, 1.0], [smoke, 1 - smoke]),
                             ([0.0, 1.0, 2.0], level_probabilities(MU))], KINDS, sweeps=sweeps)


def revealed(row, mask, n, rng):
    """Complete rows (codes) of the generator given the observed codes of ``row``: the income
    latent is conditioned on exactly, the discrete features by rejection."""
    z = latent(n, rng)
    if not mask[0]:
        z0 = special.ndtri(INCOME.cdf(row[0]))
        g = R[1:, 0]
        z = np.column_stack([np.full(n, z0), z0 * g + rng.multivariate_normal(
            np.zeros(5), R[1:, 1:] - np.outer(g, g), size=n)])
    c = codes(z)
    keep = np.ones(n, bool)
    for i in (1, 2, 3):
        if not mask[i]:
            keep &= c[:, i] == row[i]
    return c[keep]


def frequencies(values, levels):
    return (np.asarray(values)[:, None] == np.asarray(levels)).mean(0)


def agree(draws, truth, levels):
    """Level frequencies of two independent samples within 4 standard errors."""
    p, q = frequencies(draws, levels), frequencies(truth, levels)
    se = np.sqrt(q * (1 - q) * (1 / len(draws) + 1 / len(truth)))
    assert (np.abs(p - q) <= 4 * se + 1e-12).all(), (p, q, se)


# --------------------------------------------------------------------------- the pieces
def test_nominal_locations_give_the_level_probabilities():
    p = np.array([0.05, 0.15, 0.3, 0.5])
    mu = nominal_locations(p)
    np.testing.assert_allclose(level_probabilities(mu), p, atol=1e-10)
    assert abs(mu.mean()) < 1e-12
    rng = np.random.default_rng(0)
    votes = np.argmax(mu + rng.standard_normal((200_000, 4)), axis=1)
    agree(votes, np.repeat(np.arange(4), (p * 10**7).astype(int)), np.arange(4))
    for rare in ([1e-4, 0.3, 0.6999], [0.98, 0.01, 0.01], [1e-6, 1e-6, 1e-6, 1 - 3e-6]):
        mu = nominal_locations(rare)  # adaptive quadrature of the defining integral

        def density(t, k, mu=mu):
            others = np.delete(mu, k)
            return stats.norm.pdf(t - mu[k]) * np.prod(stats.norm.cdf(t - others))

        exact = [integrate.quad(density, -np.inf, np.inf, args=(k,), epsabs=1e-15)[0]
                 for k in range(len(rare))]
        np.testing.assert_allclose(exact, rare, rtol=1e-7)


def test_truncated_normal_matches_scipy_in_the_body_and_far_tails():
    rng = np.random.default_rng(1)
    for lo, hi in ((-0.5, 1.0), (3.0, np.inf), (-np.inf, -9.0), (8.0, 8.5)):
        z = truncated_normal(np.zeros(20_000), 1.0, lo, hi, rng)
        assert ((z >= lo) & (z <= hi)).all()
        assert stats.kstest(z, stats.truncnorm(lo, hi).cdf).pvalue > 1e-3


# ------------------------------------------------------------------ conditional draws
CASES = [  # (row codes, missing): each missing feature's law against the generator's
    ((np.nan, 32.0, 1.0, np.nan), (True, False, False, True)),
    ((55.0, np.nan, 0.0, 2.0), (False, True, False, False)),
    ((np.nan, np.nan, np.nan, 1.0), (True, True, True, False)),
    ((25.0, 34.0, np.nan, np.nan), (False, False, True, True)),
]


@pytest.mark.parametrize(("row", "mask"), CASES)
def test_conditional_draws_match_the_generator(row, mask):
    """Observed discrete features condition the latents (Gibbs); the missing features' laws
    equal the generator's given the same observed values (rejection sampling)."""
    row, mask = np.array(row), np.array(mask)
    draws = true_imputer().sample(row[None], mask[None], 20_000, random_seed=2)[0]
    truth = revealed(row, mask, 1_500_000, np.random.default_rng(3))
    assert len(truth) > 20_000
    kept = draws[:, ~mask]
    np.testing.assert_array_equal(kept, np.broadcast_to(row[~mask], kept.shape))
    for i in np.flatnonzero(mask):
        if i == 0:
            assert stats.ks_2samp(draws[:, 0], truth[:, 0]).pvalue > 1e-3
        else:
            agree(draws[:, i], truth[:, i], np.unique(truth[:, i]))


def test_strongly_correlated_observed_levels_get_enough_sweeps():
    """Three observed 3-level ordinals with latent correlations 0.85-0.9: 5 fixed Gibbs sweeps
    leave the missing continuous feature biased (its mean off by 10 SE); the sweeps grow with
    the Gauss-Seidel contraction and the law matches the generator's (rejection sampling)."""
    corr = np.array([[1, .9, .85, .8], [.9, 1, .9, .8], [.85, .9, 1, .8], [.8, .8, .8, 1]])
    cut = np.array([-0.5, 0.5])
    probs = np.diff(np.concatenate([[0.0], special.ndtr(cut), [1.0]]))
    imp = CopulaImputer(corr, [(np.arange(3.0), probs)] * 3 + [stats.norm()],
                        ["ordinal"] * 3 + ["continuous"], sweeps=5)
    z = np.random.default_rng(10).multivariate_normal(np.zeros(4), corr, size=1_000_000)
    levels = np.searchsorted(cut, z[:, :3])
    for observed in ([0, 0, 0], [2, 2, 2]):
        truth = z[(levels == observed).all(1), 3]
        draws = imp.sample([[*observed, np.nan]], [[False, False, False, True]], 20_000,
                           random_seed=11)[0, :, 3]
        se = truth.std() * np.sqrt(1 / len(draws) + 1 / len(truth))
        assert abs(draws.mean() - truth.mean()) <= 4 * se
        assert stats.ks_2samp(draws, truth).pvalue > 1e-3


def test_only_continuous_observed_is_exact_gaussian():
    """Income observed: the age latent is N(0.5 z0, 0.75), so its levels have closed-form
    probabilities; no Gibbs sweep is involved."""
    income = 60.0
    z0 = special.ndtri(INCOME.cdf(income))
    edges = np.concatenate([[-np.inf], AGE_CUT, [np.inf]])
    exact = np.diff(special.ndtr((edges - 0.5 * z0) / np.sqrt(0.75)))
    mask = np.array([[False, True, True, True]])
    draws = true_imputer(sweeps=1).sample([[income, np.nan, np.nan, np.nan]], mask, 40_000,
                                          random_seed=4)[0]
    p = frequencies(draws[:, 1], np.arange(30, 35))
    assert (np.abs(p - exact) <= 4 * np.sqrt(exact * (1 - exact) / 40_000)).all()


def test_fit_recovers_the_latent_correlation():
    """Stochastic EM on 8 independent training sets of 1,500 rows: the mean fitted correlation
    is within 4 standard errors (from the 8 fits' spread) of the generator's, and the margins
    are the training frequencies."""
    rng = np.random.default_rng(5)
    fits = []
    for rep in range(8):
        train = codes(latent(1500, rng))
        imp = CopulaImputer.fit(train, KINDS, iterations=100, random_seed=rep)
        fits.append(imp.corr)
        np.testing.assert_allclose(imp.margins[1].probs, frequencies(train[:, 1], range(30, 35)))
    fits = np.array(fits)
    se = fits.std(0, ddof=1) / np.sqrt(len(fits))
    off = ~np.eye(6, dtype=bool)
    assert (np.abs(fits.mean(0) - R)[off] <= 4 * se[off] + 1e-9).all()
    np.testing.assert_allclose(fits[:, 3:, 3:], np.broadcast_to(np.eye(3), (8, 3, 3)))
    assert np.abs(fits[:, [0, 1, 2]][:, :, 3:].sum(-1)).max() < 1e-12  # centred nominal block


def test_rows_with_everything_missing_get_the_training_margins():
    """All features missing: the imputations' law is the fitted margins, i.e. the training
    frequencies of every level and the training distribution of income."""
    rng = np.random.default_rng(6)
    train = codes(latent(3000, rng))
    imp = CopulaImputer.fit(train, KINDS, random_seed=0)
    draws = imp.sample(np.full((1, 4), np.nan), np.ones((1, 4), bool), 40_000, random_seed=1)[0]
    for i in (1, 2, 3):
        levels = np.unique(train[:, i])
        p, q = frequencies(draws[:, i], levels), frequencies(train[:, i], levels)
        assert (np.abs(p - q) <= 4 * np.sqrt(q * (1 - q) / len(draws))).all()
    assert stats.ks_2samp(draws[:, 0], train[:, 0]).pvalue > 1e-3
    assert draws[:, 0].min() >= train[:, 0].min() and draws[:, 0].max() <= train[:, 0].max()


# ------------------------------------------------------------------------------- the MVU
def classifier(train, y):
    return make_pipeline(
        ColumnTransformer([("oh", OneHotEncoder(), ["blood"]),
                           ("z", StandardScaler(), ["income", "age", "smoker"])]),
        LogisticRegression()).fit(train, y)


def labelled(n, rng):
    z = latent(n, rng)
    eta = (1.2 * z[:, 0] + 0.8 * z[:, 1] - z[:, 2]
           + 1.5 * (np.argmax(MU + z[:, 3:], 1) == 1) - 0.3)
    return codes(z), rng.random(n) < special.expit(eta)


def with_missing(c, m, index):
    """A DataFrame of the rows as a user has them: None / NaN where missing."""
    rows = frame(np.where(m, np.array([1.0, 30.0, 0.0, 0.0]), c), index=index)
    for i, col in enumerate(NAMES):
        rows[col] = (rows[col].where(~m[:, i]) if col in ("income", "blood")
                     else rows[col].astype(object).where(~m[:, i], None))
    return rows


@pytest.fixture(scope="module")
def mixed():
    rng = np.random.default_rng(7)
    train, y = labelled(4000, rng)
    test, _ = labelled(16, rng)
    m = rng.random(test.shape) < 0.5
    m[0], m[1] = [True, False, False, True], False  # one row complete
    rows = with_missing(test, m, pd.Index([f"patient-{i:04d}" for i in range(500, 516)],
                                          name="patient"))
    clf = classifier(frame(train), y)
    truth = np.ones(len(test))
    for i in np.flatnonzero(m.any(1)):
        full = revealed(np.where(m[i], np.nan, test[i]), m[i], 400_000, rng)[:10_000]
        vote = (clf.predict_proba(frame(full))[:, 1] > 0.5).mean()
        truth[i] = max(vote, 1 - vote)
    return frame(train), clf, rows, m, truth


def test_c_hard_against_revealing_the_missing_values(mixed):
    """The MVU of the generator's own copula equals the brute-force c_hard (reveal the missing
    values from the generator, push them through the classifier) within 4 SE per row; the
    copula fitted on 4,000 training rows, chosen by default, within 0.01 on average (the
    tolerance of MVU summaries of smooth classifiers)."""
    train, clf, rows, _, truth = mixed
    ev = mvu(clf, rows, train=train, imputer=true_imputer(), draws=4000, random_seed=0)
    c = ev.closed_form["c_hard"].values
    se = np.sqrt(truth * (1 - truth) * (1 / 4000 + 1 / 10_000))
    assert (np.abs(c - truth) <= 4 * se + 1e-12).all()
    fitted = mvu(clf, rows, train=train, draws=4000, random_seed=0)
    assert "imputer='copula'" in fitted.warnings[0]
    assert fitted.meta["imputer"] == "copula"
    error = np.abs(fitted.closed_form["c_hard"].values - truth)
    assert error.mean() <= 0.01, error


class Recorder:
    """A classifier that records the DataFrames it is given."""

    def __init__(self, clf):
        self.clf, self.seen = clf, []
        self.feature_names_in_ = clf.feature_names_in_
        self.classes_ = clf.classes_

    def predict_proba(self, X):
        self.seen.append(X)
        return self.clf.predict_proba(X)


def test_the_classifier_gets_the_training_dtypes_and_levels(mixed, tmp_path):
    train, clf, rows, m, _ = mixed
    spy = Recorder(clf)
    shuffled = rows[["blood", "smoker", "income", "age"]]  # any column order
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. scikit-learn's "X does not have valid feature names"
        ev = mvu(spy, shuffled, train=train, draws=200, random_seed=0)
    for seen in spy.seen:
        assert list(seen.columns) == NAMES
        assert list(seen.dtypes) == list(train.dtypes)
        assert seen["blood"].cat.categories.tolist() == BLOOD
        assert seen["age"].between(30, 34).all() and seen["blood"].notna().all()
    imputed = pd.concat(spy.seen[1:])
    assert set(imputed["blood"]) == set(BLOOD) and set(imputed["smoker"]) == {False, True}
    assert ev.summary().index.tolist() == rows.index.tolist()
    assert ev.closed_form["feature"].values.tolist() == NAMES
    np.testing.assert_array_equal(ev.closed_form["missing"].values, m)
    assert ev.decide(0.9).index.tolist() == rows.index.tolist()
    ev.report(tmp_path / "mvu.html")
    html = (tmp_path / "mvu.html").read_text()
    assert "patient-0500" in html and "copula" in html
    ev.to_netcdf(tmp_path / "mvu.nc")
    back = be.load(tmp_path / "mvu.nc")
    assert back.closed_form["feature"].values.tolist() == NAMES
    assert back.closed_form["instance"].values.tolist() == rows.index.tolist()


def test_the_copula_on_gaussian_features_agrees_with_the_exact_gaussian():
    """On the paper's Gaussian features the copula (empirical margins, normal-score
    correlation) reproduces the exact Gaussian c_hard of a linear classifier: mean difference
    0.01 at most (20,000 training rows, 4,000 draws)."""
    rng = np.random.default_rng(8)
    train = rng.multivariate_normal([0, 0], cov(), size=20_000)
    x = rng.multivariate_normal([0, 0], cov(), size=30)
    x[:15, 0], x[15:, 1] = np.nan, np.nan
    clf = LinearClassifier([[1.0, 1.0]], [-1.0])
    exact = mvu(clf, x, train=train).closed_form["c_hard"].values
    copula = mvu(clf, x, train=train, imputer="copula", draws=4000, random_seed=0)
    assert np.abs(copula.closed_form["c_hard"].values - exact).mean() <= 0.01


# ---------------------------------------------------------------------------- bad input
def test_bad_input_is_refused_with_its_name(mixed):
    train, clf, rows, _, _ = mixed
    odd = rows.copy()
    odd["blood"] = odd["blood"].astype(object)
    odd.iloc[0, odd.columns.get_loc("blood")] = "AB"
    with pytest.raises(ValueError, match=r"X\['blood'\] has the level 'AB'"):
        mvu(clf, odd, train=train)
    with pytest.raises(ValueError, match=r"X\['age'\] must hold numbers"):
        mvu(clf, rows.assign(age="old"), train=train)
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) \['smoker', 'blood'\]"):
        mvu(clf, rows[NAMES], train=train.astype({"age": float, "smoker": float})
            .drop(columns="blood").assign(blood=0.0))
    with pytest.raises(ValueError, match="imputer='mean' treats every feature as a number"):
        mvu(clf, rows, train=train, imputer="mean")
    with pytest.raises(ValueError, match="copula imputer has no generative model"):
        mvu(clf, rows, train=train, method="pymc")
    with pytest.raises(ValueError, match="needs train"):
        mvu(LinearClassifier([[1.0, 1.0]], [0.0]), [[np.nan, 1.0]], imputer="copula")
    with pytest.raises(ValueError, match=r"train\['age'\] must hold numbers"):
        FeatureCodec(train).encode(train.assign(age="x"), "train")
    with pytest.raises(ValueError, match="kinds must give one of"):
        CopulaImputer(np.eye(1), [[0.0, 1.0]], ["interval"])
    with pytest.raises(ValueError, match=r"corr must be a symmetric \(4, 4\)"):
        CopulaImputer(np.eye(3), [[0.0, 1.0], ([0, 1, 2], [0.2, 0.3, 0.5])],
                      ["continuous", "nominal"])
    with pytest.raises(ValueError, match="sorted distinct levels and positive probabilities"):
        CopulaImputer(np.eye(1), [([1, 0], [0.5, 0.5])], ["ordinal"])
    with pytest.raises(ValueError, match="train must be at least 2 complete rows"):
        CopulaImputer.fit([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(ValueError, match="unknown level 5"):
        true_imputer().sample([[np.nan, 30.0, 1.0, 5.0]], [[True, False, False, False]], 10)
    with pytest.raises(ValueError, match="mnar= shifts the conditional Gaussian"):
        mvu(clf, rows, train=train, mnar=0.5)


def test_a_sampler_object_gets_the_codes():
    """A sampler object on a frame with an integer column receives the codes (here the values
    themselves): the same answer as on the frame cast to float, where no codec is involved."""
    rng = np.random.default_rng(9)
    train = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),
                          "n": rng.integers(0, 3, 200)})
    clf = LogisticRegression().fit(train, train["a"] + train["n"] > 1)
    rows = pd.DataFrame({"a": [np.nan, 0.3], "b": [0.1, np.nan], "n": [1, 2]})
    imp = GaussianImputer(train.mean().to_numpy(), np.cov(train.to_numpy(float), rowvar=False))
    ev = mvu(clf, rows, train=train, imputer=imp, draws=300, random_seed=0)
    plain = mvu(clf, rows.astype(float), train=train.astype(float), imputer=imp, draws=300,
                random_seed=0)
    assert ev.meta["imputer"] == "GaussianImputer"
    np.testing.assert_allclose(ev.closed_form["c_hard"].values,
                               plain.closed_form["c_hard"].values, atol=1e-12)


def test_the_codec_round_trips_every_dtype():
    """encode then decode gives back the training frame, dtypes and levels included; missing
    values (None, NaN, pd.NA) become NaN codes."""
    train = pd.DataFrame({
        "x": [0.5, -1.0, 2.0, 0.0],
        "n": pd.array([3, 1, 2, 3], dtype="Int64"),
        "k": np.array([7, 5, 5, 6], dtype=np.int32),
        "flag": [True, False, True, True],
        "size": pd.Categorical(["S", "L", "M", "S"], categories=["S", "M", "L"], ordered=True),
        "colour": ["red", "blue", "green", "red"],
        "city": pd.array(["Oslo", "Rome", "Oslo", "Lima"], dtype="string"),
    })
    codec = FeatureCodec(train)
    assert codec.kinds == ["continuous", "ordinal", "ordinal", "ordinal", "ordinal", "nominal",
                           "nominal"]
    pd.testing.assert_frame_equal(codec.decode(codec.encode(train, "train")), train)
    rows = pd.DataFrame({"x": [np.nan], "n": pd.array([pd.NA], dtype="Int64"), "k": [None],
                         "flag": [None], "size": pd.Categorical([None], categories=["S", "M", "L"]),
                         "colour": [np.nan], "city": pd.array([pd.NA], dtype="string")})
    assert np.isnan(codec.encode(rows, "X")).all()
    imp = CopulaImputer.fit(pd.concat([train] * 5), random_seed=0)  # coded as by the codec
    assert imp.kinds == codec.kinds
    draws = imp.sample(codec.encode(rows, "X"), np.ones((1, 7), bool), 50, random_seed=0)[0]
    back = codec.decode(draws)
    assert list(back.dtypes) == list(train.dtypes)
    assert set(back["colour"]) <= {"red", "blue", "green"} and set(back["n"]) <= {1, 2, 3}


# ------------------------------------------------------------------ decisions with costs
#: predict False, predict True (a missed True costs 3), refer (0.4 whatever the class)
LOSS = np.array([[0.0, 3.0], [1.0, 0.0], [0.4, 0.4]])


@pytest.fixture(scope="module")
def costly():
    """Six rows of the generator with 1 to 3 missing features (discrete ones among both the
    observed and the missing), the generator's own copula as the imputer, and the truth of each
    row: 20,000 complete rows revealed from the generator given what is observed."""
    rng = np.random.default_rng(31)
    train, y = labelled(3000, rng)
    clf = classifier(frame(train), y)
    test, _ = labelled(6, rng)
    m = np.array([[True, False, True, False], [False, True, False, True],
                  [True, True, False, False], [False, False, True, True],
                  [True, True, True, False], [False, True, False, False]])
    rows = with_missing(test, m, pd.Index([f"p{i}" for i in range(6)], name="patient"))
    truth = [clf.predict_proba(frame(revealed(np.where(m[i], np.nan, test[i]), m[i], 600_000,
                                              rng)[:20_000])) for i in range(6)]
    return frame(train), clf, rows, m, truth


def test_bayes_actions_of_copula_votes_match_revealing_the_missing_values(costly):
    """The cost-optimal action now, the expected loss once the missing values are collected and
    the probability that the complete row calls for another action, from the copula's
    imputations pushed through the classifier, against the generator's truth: within 4
    standard errors of both Monte-Carlo samples (the run's draws for the action now)."""
    train, clf, rows, _, truth = costly
    draws = 4000
    ev = mvu(clf, rows, train=train, imputer=true_imputer(), draws=draws, random_seed=0)
    tab = ev.bayes_actions(LOSS, ["no", "yes", "refer"], draws=20_000, random_seed=1)
    assert (tab["loss_after_se"] > 0).all()
    names = np.array(["no", "yes", "refer"])
    sure = 0
    for i, phi in enumerate(truth):
        n = len(phi)
        assert n >= 10_000
        risk = phi @ LOSS.T  # (n, actions)
        now = risk.mean(0)
        order = np.argsort(now)
        se_now = np.sqrt(risk.var(0) * (1 / n + 1 / draws))
        if now[order[1]] - now[order[0]] > 4 * (se_now[order[0]] + se_now[order[1]]):
            sure += 1
            assert tab["action"].iloc[i] == names[order[0]], (i, now, tab.iloc[i])
        best = risk.min(1)
        se = np.sqrt(tab["loss_after_se"].iloc[i] ** 2 + best.var() / n)
        assert abs(tab["loss_after"].iloc[i] - best.mean()) <= 4 * se, (i, best.mean(), se)
        action = list(names).index(tab["action"].iloc[i])
        change = np.mean(risk.argmin(1) != action)
        p = tab["p_change"].iloc[i]
        assert abs(p - change) <= 4 * np.sqrt(change * (1 - change) * (1 / n + 1 / 20_000)) + 1e-12
    assert sure >= 5
    # the same rule from the imputations summarised by a Dirichlet (dirichlet="mle") is close
    mle = mvu(clf, rows, train=train, imputer=true_imputer(), draws=draws, random_seed=0,
              dirichlet="mle").bayes_actions(LOSS, ["no", "yes", "refer"])
    assert (mle["action"] == tab["action"]).mean() >= 5 / 6


def test_copula_plans_reveal_the_missing_values(costly, tmp_path):
    """decide(costs=) under the copula: revealing every missing feature changes the decision
    with probability 1 - c_hard (the truth's, within 4 SE of the plan's 64 revealed rows and
    the truth) and leaves c_hard = 1; a run read back from disk is refused (the copula is not
    saved)."""
    train, clf, rows, m, truth = costly
    ev = mvu(clf, rows, train=train, imputer=true_imputer(), draws=4000, random_seed=0)
    plan = ev.decide(0.999, costs={"income": 1.0, "age": 1.0, "smoker": 1.0, "blood": 1.0})
    assert plan["collect"].sum() >= 3
    planner = ev.planner
    for i in np.flatnonzero(plan["collect"].to_numpy()):
        vote = (truth[i][:, 1] > 0.5).mean()
        flip_truth = min(vote, 1 - vote)
        flip, gain = planner.reveal(i, [list(np.flatnonzero(m[i]))])
        np.testing.assert_allclose(planner.c[i] + gain[0], 1.0, atol=1e-12)
        se = np.sqrt(flip_truth * (1 - flip_truth) * (1 / 64 + 1 / len(truth[i])))
        assert abs(flip[0] - flip_truth) <= 4 * se + 1 / 64, (i, flip, flip_truth)
        assert plan["plan"].iloc[i] != ""
    by = plan.attrs["by_feature"]
    assert set(by.index.get_level_values("feature")) <= set(NAMES)
    assert ((by["p_flip"] >= 0) & (by["p_flip"] <= 1)).all()
    back = be.load(ev.to_netcdf(tmp_path / "mvu.nc"))
    with pytest.raises(ValueError, match="a copula run in the session that ran it"):
        back.decide(0.9, costs=1.0)
    with pytest.raises(ValueError, match="a copula run in the session that ran it"):
        back.bayes_actions(LOSS, ["no", "yes", "refer"])
