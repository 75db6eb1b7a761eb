"""Sampling weights of the comparison and the ranking of systems (uniform weights, the Hájek
estimators computed directly, their sandwich variances against numerical influence functions,
unbiasedness under a stratified design, bad weights), and the p-values of the K-category judge
(z-tests, one-sided intervals, ppi_py)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy

import bayeval as be
from bayeval.methods.judge import compare_systems, rank_systems
from bayeval.methods.judge.compare import COMPARE_ESTIMATORS, joint_cells
from bayeval.methods.judge.ranking import weighted_scores
from bayeval.methods.judge.weighted import sampling_weights
from benchmarks.coverage_judge_compare_weights import THETA, simulate

FREQUENTIST = [e for e in COMPARE_ESTIMATORS if e != "bayes"]
COLUMNS = ["mean", "sd", "lower", "upper", "p_value"]


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def two():
    """Two systems under the verdict design (weights constant within the pairs of verdicts)."""
    return simulate(np.random.default_rng(1), "verdict", 2)


@pytest.fixture(scope="module")
def four():
    return simulate(np.random.default_rng(2), "verdict", 4)


# ------------------------------------------------------------------------ uniform weights
@pytest.mark.parametrize("mu_model", ["cell", "linear"])
def test_uniform_weights_give_the_unweighted_comparison(two, mu_model):
    y, yh, yu, *_ = two
    plain = quiet(compare_systems, y, yh, yu, method="all", mu_model=mu_model,
                  alternative="larger", null=0.01).summary().drop(index="bayes")
    ones = quiet(compare_systems, y, yh, yu, method="all", mu_model=mu_model,
                 alternative="larger", null=0.01, sample_weight=np.full(len(y), 3.0),
                 sample_weight_unlabeled=np.ones(len(yu))).summary()
    assert list(ones.index) == FREQUENTIST
    np.testing.assert_allclose(ones[COLUMNS].to_numpy(float), plain[COLUMNS].to_numpy(float),
                               rtol=0, atol=1e-12)


def test_uniform_weights_give_the_unweighted_eif_with_empty_cells():
    """Four-point ratings: some pairs of judge values have no labelled prompt."""
    rng = np.random.default_rng(5)
    y = rng.integers(1, 5, (40, 2)).astype(float)
    yh = np.clip(y + rng.integers(-1, 2, (40, 2)), 1, 4)
    yu = rng.integers(1, 5, (400, 2)).astype(float)
    kw = dict(method="eif", mu_model="cell", y_range=(1, 4))
    plain = quiet(compare_systems, y, yh, yu, **kw).summary()
    ones = quiet(compare_systems, y, yh, yu, sample_weight=np.ones(40), **kw).summary()
    assert len(np.setdiff1d(joint_cells([yh[:, 0], yh[:, 1]], [yu[:, 0], yu[:, 1]])[1],
                            joint_cells([yh[:, 0], yh[:, 1]], [yu[:, 0], yu[:, 1]])[0]))
    np.testing.assert_allclose(ones[COLUMNS].to_numpy(float), plain[COLUMNS].to_numpy(float),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["naive", "classical", "ppi", "ppi_pp", "eif"])
@pytest.mark.parametrize("mu_model", ["cell", "linear"])
def test_uniform_weights_give_the_unweighted_ranking(four, method, mu_model):
    y, yh, yu, *_ = four
    if method != "eif" and mu_model == "linear":
        pytest.skip("mu_model applies to the EIF")
    plain = quiet(rank_systems, y, yh, yu, method=method, mu_model=mu_model, random_seed=3)
    ones = quiet(rank_systems, y, yh, yu, method=method, mu_model=mu_model, random_seed=3,
                 sample_weight=np.full(len(y), 0.5), sample_weight_unlabeled=np.ones(len(yu)))
    for var in ("mean", "sd", "cov", "pair_mean", "pair_sd", "pair_p_value",
                "pair_p_value_adjusted", "pair_lower_adjusted", "prob_rank"):
        np.testing.assert_allclose(ones.closed_form[var], plain.closed_form[var], rtol=0,
                                   atol=1e-12, err_msg=var)


# ---------------------------------------------------------------- the Hájek estimators
def _hajek(y, yh, yu, w, v):
    """classical, PPI and the cell EIF of each column, computed from their definitions."""
    w, v = w / w.sum(), v / v.sum()
    classical = w @ y
    ppi = v @ yu + w @ (y - yh)
    cells = np.concatenate([yh, yu]) @ (2.0 ** np.arange(yh.shape[1]))
    omega = np.concatenate([w * len(w), v * len(v)])
    eif = 0.0
    for c in np.unique(cells):
        here = cells[: len(y)] == c
        share = omega[cells == c].sum() / omega.sum()
        eif = eif + share * (w[here] @ y[here]) / w[here].sum()
    return {"classical": classical, "ppi": ppi, "eif": eif}


def test_weighted_comparison_is_the_hajek_estimator_of_the_difference(two):
    y, yh, yu, w, v = two
    s = compare_systems(y, yh, yu, method="all", sample_weight=w,
                        sample_weight_unlabeled=v).summary()
    direct = _hajek(y, yh, yu, w, v)
    for name, theta in direct.items():
        assert s.loc[name, "mean"] == pytest.approx(theta[0] - theta[1], abs=1e-12), name
    # the weighted least-squares plane: a + b'x fitted with weights w, averaged with w and v
    design = np.column_stack([np.ones(len(y)), yh])
    coef = np.linalg.solve(design.T @ (w[:, None] * design), design.T @ (w * (y[:, 0] - y[:, 1])))
    wn, vn = sampling_weights(w, len(w), ""), sampling_weights(v, len(v), "")
    fit = np.concatenate([design, np.column_stack([np.ones(len(yu)), yu])]) @ coef
    linear = compare_systems(y, yh, yu, mu_model="linear", sample_weight=w,
                             sample_weight_unlabeled=v).summary().loc["eif", "mean"]
    assert linear == pytest.approx(np.concatenate([wn, vn]) @ fit / fit.size, abs=1e-12)


def test_weighted_scores_are_the_hajek_estimators_of_each_system(four):
    y, yh, yu, w, v = four
    for name, theta in _hajek(y, yh, yu, w, v).items():
        cf = rank_systems(y, yh, yu, method=name, sample_weight=w, sample_weight_unlabeled=v,
                          random_seed=0).closed_form
        np.testing.assert_allclose(cf["mean"], theta, rtol=0, atol=1e-12, err_msg=name)


# ------------------------------------------------------------- the sandwich variances
def _numerical_influence(estimate, omega, m, step=1e-6):
    """z_i = omega_i d(theta)/d(omega_i), by central differences, one row per item."""
    rows = []
    for i in range(omega.size):
        hi, lo = omega.copy(), omega.copy()
        hi[i] += step * omega[i]
        lo[i] -= step * omega[i]
        rows.append((estimate(hi[:m], hi[m:]) - estimate(lo[:m], lo[m:])) / (2 * step))
    return np.array(rows)


def _eif(y, cells_l, cells_u):
    """The cell EIF of each column as a function of the weights (one ratio over all items)."""
    size = int(max(cells_l.max(), cells_u.max())) + 1

    def estimate(w, v):
        big_w = np.bincount(cells_l, w, size)
        share = (big_w + np.bincount(cells_u, v, size)) / (w.sum() + v.sum())
        mu = np.stack([np.bincount(cells_l, w * col, size) for col in y.T], 1) / big_w[:, None]
        return share @ mu

    return estimate


def test_weighted_variances_are_the_sandwich_of_the_numerical_influence_functions(two):
    """Weights constant within the EIF's cells (the verdict design): the sum of squares of the
    numerical influence functions of the Hájek estimators is the closed form's variance."""
    y, yh, yu, w, v = two
    wn, vn = sampling_weights(w, len(w), ""), sampling_weights(v, len(v), "")
    omega, m = np.concatenate([wn, vn]), len(y)
    s = compare_systems(y, yh, yu, method="all", sample_weight=w,
                        sample_weight_unlabeled=v).summary()
    d, dh, du = y[:, :1] - y[:, 1:], yh[:, :1] - yh[:, 1:], yu[:, :1] - yu[:, 1:]
    k_l, k_u, _ = joint_cells(list(yh.T), list(yu.T))
    brute = {"classical": lambda a, b: (a @ d) / a.sum(),
             "ppi": lambda a, b: (b @ du) / b.sum() + (a @ (d - dh)) / a.sum(),
             "eif": _eif(d, k_l, k_u)}
    for name, fn in brute.items():
        z = _numerical_influence(fn, omega, m)
        assert s.loc[name, "sd"] == pytest.approx(np.sqrt(np.sum(z**2)), rel=1e-6), name


def test_the_ranking_covariance_is_that_of_the_numerical_influence_functions(four):
    y, yh, yu, w, v = four
    wn, vn = sampling_weights(w, len(w), ""), sampling_weights(v, len(v), "")
    k_l, k_u, _ = joint_cells(list(yh.T), list(yu.T))
    z = _numerical_influence(_eif(y, k_l, k_u), np.concatenate([wn, vn]), len(y))
    cov = rank_systems(y, yh, yu, sample_weight=w, sample_weight_unlabeled=v,
                       random_seed=0).closed_form["cov"].values
    # central differences: relative error ~1e-7 of the matrix's scale
    np.testing.assert_allclose(cov, z.T @ z, rtol=1e-6, atol=1e-6 * np.diag(cov).max())


def test_two_systems_of_the_ranking_are_the_weighted_comparison(two):
    y, yh, yu, w, v = two
    for method in ("ppi", "eif"):
        for mu_model in ("cell", "linear"):
            diff = rank_systems(y, yh, yu, method=method, mu_model=mu_model, sample_weight=w,
                                sample_weight_unlabeled=v, random_seed=0).differences()
            comp = compare_systems(y, yh, yu, method=method, mu_model=mu_model,
                                   sample_weight=w, sample_weight_unlabeled=v).summary()
            np.testing.assert_allclose(diff[["mean", "sd", "p_value"]].to_numpy(float)[0],
                                       comp[["mean", "sd", "p_value"]].to_numpy(float)[0],
                                       rtol=0, atol=1e-12, err_msg=(method, mu_model))


# ------------------------------------------------------------------ stratified design
def test_weights_remove_the_bias_of_a_stratified_design():
    """300 samples labelling hard prompts five times as often: the weighted differences (two
    systems) and PPI++ scores (four) are unbiased within 4 Monte-Carlo SEs; unweighted PPI is
    not. The weighted cell EIF of four systems (16 cells of about 12 labelled prompts, weights
    varying within them) keeps the ratio estimators' small-sample bias, a fifth of the
    unweighted one's and about a third of its sd."""
    rng = np.random.default_rng(20261125)
    errors = {"eif": [], "ppi_pp": [], "plain_ppi": [], "rank": []}
    cells = {"weighted": [], "none": []}
    for _ in range(300):
        y, yh, yu, w, v = simulate(rng, "stratified", 2)
        for name in ("eif", "ppi_pp"):
            cf = compare_systems(y, yh, yu, method=name, sample_weight=w,
                                 sample_weight_unlabeled=v).closed_form
            errors[name].append(float(cf["mean"][0]) - (THETA[0] - THETA[1]))
        cf = compare_systems(y, yh, yu, method="ppi").closed_form
        errors["plain_ppi"].append(float(cf["mean"][0]) - (THETA[0] - THETA[1]))
        y, yh, yu, w, v = simulate(rng, "stratified", 4)
        errors["rank"].append(weighted_scores(y, yh, yu, "ppi_pp", "cell", w, v)[0] - THETA)
        cells["weighted"].append(weighted_scores(y, yh, yu, "eif", "cell", w, v)[0] - THETA)
        cells["none"].append(weighted_scores(y, yh, yu, "eif", "cell")[0] - THETA)
    for name, e in errors.items():
        e = np.asarray(e)
        ratio = np.abs(e.mean(0)) / (e.std(0) / np.sqrt(len(e)))
        assert (ratio > 5).all() if name == "plain_ppi" else (ratio < 4).all(), (name, ratio)
    bias = {k: np.abs(np.mean(e, axis=0)) for k, e in cells.items()}
    assert (bias["weighted"] < bias["none"] / 5).all() and (bias["none"] > 0.05).all(), bias


# ------------------------------------------------------------------------- bad weights
@pytest.mark.parametrize(("kwargs", "match"), [
    ({"sample_weight": np.ones(5)}, "sample_weight"),
    ({"sample_weight": [1, 1, -1, 1, 1, 1]}, "sample_weight must be finite and non-negative"),
    ({"sample_weight_unlabeled": [1, np.nan, 1]}, "sample_weight_unlabeled has 1 NaN"),
    ({"sample_weight": np.ones(6), "method": "bayes"}, "method='bayes' .* no sampling weights"),
])
def test_bad_weights_are_refused_naming_the_argument(kwargs, match):
    y = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [1, 1]])
    yu = np.array([[1, 0], [0, 1], [1, 1]])
    for fn in (compare_systems, rank_systems):
        with pytest.raises(ValueError, match=match):
            quiet(fn, y, y, yu, **kwargs)


def test_unpaired_weights_are_a_dict_per_system_and_pandas_weights_align_by_index(two):
    y, yh, yu, w, _ = two
    data = {"A": y[:, 0], "B": y[:, 1]}
    with pytest.raises(ValueError, match="paired=False takes sample_weight as a dict"):
        rank_systems(data, data, {"A": yu[:, 0], "B": yu[:, 1]}, paired=False, sample_weight=w)
    frame = [pd.DataFrame(a, columns=["A", "B"]) for a in (y, yh)]
    shuffled = pd.Series(w).sample(frac=1, random_state=0)
    a = compare_systems(*frame, yu, sample_weight=shuffled).summary()
    b = compare_systems(*frame, yu, sample_weight=w).summary()
    np.testing.assert_array_equal(a.to_numpy(float), b.to_numpy(float))


# ---------------------------------------------------------- p-values of K categories
WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}


@pytest.fixture(scope="module")
def categories():
    rng = np.random.default_rng(3)
    truth = rng.choice(["A", "tie", "B"], size=2000, p=[0.45, 0.2, 0.35])
    said = np.where(rng.random(2000) < 0.8, truth, rng.choice(["A", "tie", "B"], 2000))
    pi = np.where(said == "tie", 0.2, 0.06)
    lab = rng.random(2000) < pi
    return truth[lab], said[lab], said[~lab], 1 / pi[lab], 1 / (1 - pi[~lab])


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("alternative", ["two-sided", "larger", "smaller"])
def test_category_p_values_are_the_normal_z_tests(categories, weighted, alternative):
    y, yh, yu, w, v = categories
    kw = {"sample_weight": w, "sample_weight_unlabeled": v} if weighted else {}
    base = quiet(be.judge, y, yh, yu, method="all", weights=WIN, ci_kind="wald", **kw)
    ev = quiet(be.judge, y, yh, yu, method="all", weights=WIN, ci_kind="wald", null=0.4,
               alternative=alternative, **kw)
    s, raw = ev.summary(), base.summary()
    freq = s.drop(index="bayes", level=0, errors="ignore")
    z = (raw.loc[freq.index, "mean"] - 0.4) / raw.loc[freq.index, "sd"]
    assert (raw.loc[freq.index, "mean"].between(0, 1)).all()  # reported = raw estimates here
    expected = {"two-sided": 2 * scipy.stats.norm.sf(np.abs(z)),
                "larger": scipy.stats.norm.sf(z), "smaller": scipy.stats.norm.cdf(z)}
    np.testing.assert_allclose(freq["p_value"], expected[alternative], rtol=1e-10, atol=1e-15)
    assert s.loc["eif", "p_value"].notna().all()
    if not weighted:
        assert s.loc["bayes", "p_value"].isna().all()
    if alternative == "two-sided":  # the Wald interval excludes 0.4 where p < 0.05
        out = (freq["lower"] > 0.4) | (freq["upper"] < 0.4)
        assert (out == (freq["p_value"] < 0.05)).all()
    else:
        ends = s["upper"] if alternative == "larger" else s["lower"]
        assert (ends == (1.0 if alternative == "larger" else 0.0)).all()
        z1 = scipy.stats.norm.ppf(0.95)
        bound = raw["mean"] - z1 * raw["sd"] if alternative == "larger" else \
            raw["mean"] + z1 * raw["sd"]
        other = s["lower"] if alternative == "larger" else s["upper"]
        np.testing.assert_allclose(other[freq.index], bound[freq.index], rtol=0, atol=1e-12)


def test_category_nulls_per_metric_and_with_a_judge_s_score(categories):
    y, yh, yu, *_ = categories
    s = be.judge(y, yh, yu, weights=WIN, null={"weighted": 0.5}).summary()
    assert s.loc[("eif", "prevalence")]["p_value"].isna().all()
    z = (s.loc[("eif", "weighted", ""), "mean"] - 0.5) / s.loc[("eif", "weighted", ""), "sd"]
    assert s.loc[("eif", "weighted", ""), "p_value"] == pytest.approx(
        2 * scipy.stats.norm.sf(abs(z)), rel=1e-10)
    rng = np.random.default_rng(0)
    score = {"A": 1.0, "tie": 0.0, "B": -1.0}
    sc, scu = (np.array([score[x] for x in a]) + rng.normal(0, 0.5, len(a)) for a in (yh, yu))
    s = quiet(be.judge, y, sc, scu, mu_model="spline", null=0.3, alternative="smaller",
              random_seed=0).summary()
    z = (s["mean"] - 0.3) / s["sd"]
    np.testing.assert_allclose(s["p_value"], scipy.stats.norm.cdf(z), rtol=1e-10)
    assert (s["lower"] == 0).all()


@pytest.mark.parametrize("alternative", ["two-sided", "larger"])
def test_category_p_values_are_ppi_py_s(categories, alternative):
    ppi_py = pytest.importorskip("ppi_py")
    y, yh, yu, *_ = categories
    classes = ["A", "B", "tie"]
    hot = [(np.asarray(a)[:, None] == np.array(classes)).astype(float) for a in (y, yh, yu)]
    s = be.judge(y, yh, yu, method="all", null=0.3, alternative=alternative).summary()
    for name, lam in (("ppi", 1.0), ("ppi_pp", None), ("classical", 0.0)):
        theirs = ppi_py.ppi_mean_pval(*hot, null=0.3, alternative=alternative, lam=lam)
        ours = s.loc[(name, "prevalence"), "p_value"].to_numpy(float)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-14, err_msg=name)
