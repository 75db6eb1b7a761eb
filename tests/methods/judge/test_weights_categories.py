"""Sampling weights of the judge with K categories (prevalences and the win rate counting a tie
as half) and the EIF with cross-fitted curves of a judge's score: against the unweighted
estimators, the weighted binary and graded estimators on each class indicator and on the score,
and coverage under a stratified design."""

import warnings

import numpy as np
import pytest

import bayeval as be
from bayeval.methods.judge import categories as cat
from bayeval.methods.judge import weighted
from bayeval.methods.judge.categories_weighted import rogan_gladen, weighted_by_name
from benchmarks.coverage_judge_weights import (
    CLASS_THETA,
    CLASSES,
    WIN,
    WIN_THETA,
    category_design,
)

FREQUENTIST = ("naive", "classical", "rogan_gladen", "ppi", "ppi_pp", "ppi_pp_unclipped", "eif",
               "mle")
SCORE = np.array([WIN[k] for k in CLASSES])


def _data(seed=0, design="stratified"):
    return category_design(np.random.default_rng(seed), design)


def _summary(y, yhat, yhat_u, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return be.judge(y, yhat, yhat_u, weights=WIN, ci_kind="wald", **kw).summary()


def test_uniform_weights_give_the_unweighted_estimators():
    y, yh, yu, *_ = _data()
    plain = _summary(y, yh, yu, method="all")
    ones = _summary(y, yh, yu, method="all", sample_weight=np.full(y.size, 2.0),
                    sample_weight_unlabeled=np.ones(yu.size))
    plain = plain.drop(index="bayes", level=0)
    assert list(ones.index) == list(plain.index)
    np.testing.assert_allclose(ones.to_numpy(float), plain.to_numpy(float), rtol=0, atol=1e-9)


def test_uniform_weights_give_the_unweighted_covariances():
    """The polarised covariances equal categories' closed forms (EM's mle aside: 1e-9)."""
    y, yh, yu, *_ = _data(1)
    codes = [np.array([CLASSES.index(x) for x in a]) for a in (y, yh, yu)]
    counts = cat.ClassCounts.from_codes(*codes, 3)
    ours, theirs = weighted_by_name(*codes, 3), cat.by_name(counts)
    for name in FREQUENTIST:
        a, b = ours[name](), theirs[name]()
        np.testing.assert_allclose(a.estimate, b.estimate, rtol=0, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(a.cov, b.cov, rtol=0, atol=1e-15, err_msg=name)


def test_each_weighted_prevalence_is_the_weighted_binary_estimator_on_its_indicator():
    """classical, naive and PPI (lambda = 1) of class k are judge()'s weighted estimators of the
    0/1 indicators 1{y = k}, 1{judge = k}."""
    y, yh, yu, _, _, w, v = _data()
    s = _summary(y, yh, yu, method="all", sample_weight=w, sample_weight_unlabeled=v)
    for k in CLASSES:
        b = be.judge((y == k).astype(int), (yh == k).astype(int), (yu == k).astype(int),
                     method="all", sample_weight=w, sample_weight_unlabeled=v,
                     ci_kind="wald").summary()
        for e in ("naive", "classical", "ppi"):
            got = s.loc[(e, "prevalence", k), ["mean", "sd"]].to_numpy(float)
            np.testing.assert_allclose(got, b.loc[e, ["mean", "sd"]].to_numpy(float), rtol=0,
                                       atol=1e-12, err_msg=(k, e))


def test_the_weighted_win_rate_and_its_variance_are_the_graded_estimators_of_the_score():
    """w'pi-hat and sqrt(w' Sigma w) are the weighted graded estimators of the mean of the
    score w[Y] with the judge's w[verdict] (its cells: the judge's labels): this checks the
    polarised covariance across classes."""
    y, yh, yu, _, _, w, v = _data()
    s = _summary(y, yh, yu, method="all", sample_weight=w, sample_weight_unlabeled=v)
    score = {k: WIN[k] for k in CLASSES}
    g = be.judge(np.vectorize(score.get)(y), np.vectorize(score.get)(yh),
                 np.vectorize(score.get)(yu), y_range=(0, 1), method="all", mu_model="cell",
                 sample_weight=w, sample_weight_unlabeled=v, ci_kind="wald").summary()
    for e in ("classical", "ppi", "eif"):
        got = s.loc[(e, "weighted", ""), ["mean", "sd"]].to_numpy(float)
        np.testing.assert_allclose(got, g.loc[e, ["mean", "sd"]].to_numpy(float), rtol=0,
                                   atol=1e-12, err_msg=e)


def test_the_shared_lambda_is_ppi_py_s_overall_lambda_of_the_weighted_indicators():
    """PPI++ at the reported lam is ppi_pp; lam is the sum of the classes' weighted terms."""
    y, yh, yu, _, _, w, v = _data()
    sw, sv = w / w.mean(), v / v.mean()
    terms = np.sum([weighted.lambda_terms(weighted.Sample(
        (y == k) * 1.0, (yh == k) * 1.0, (yu == k) * 1.0, sw, sv)) for k in CLASSES], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = be.judge(y, yh, yu, method="ppi_pp_unclipped", sample_weight=w,
                      sample_weight_unlabeled=v)
    assert abs(float(ev.tree["data"]["lam_unclipped"]) - terms[0] / terms[1]) < 1e-12


def test_weighted_ppi_and_ppi_pp_are_ppi_py_s_multivariate_weighted_means():
    """ppi_py's ppi_mean_pointestimate on the (m, K) class indicators with w, w_unlabeled and
    lam_optim_mode="overall" (one lambda for all classes), to 1e-10."""
    ppi_py = pytest.importorskip("ppi_py")
    y, yh, yu, _, _, w, v = _data()
    codes = [np.array([CLASSES.index(x) for x in a]) for a in (y, yh, yu)]
    ind = [(c[:, None] == np.arange(3)).astype(float) for c in codes]
    fns = weighted_by_name(*codes, 3, w, v)
    for name, lam in (("ppi_pp", None), ("ppi", 1.0), ("classical", 0.0)):
        theirs = ppi_py.ppi_mean_pointestimate(*ind, lam=lam, w=w, w_unlabeled=v,
                                               lam_optim_mode="overall")
        np.testing.assert_allclose(fns[name]().estimate, np.ravel(theirs), rtol=0, atol=1e-10,
                                   err_msg=name)


def test_two_category_weighted_rogan_gladen_is_the_binary_one():
    y, yh, yu, _, _, w, v = _data(2)
    a, ah, au = ((x == "A").astype(int) for x in (y, yh, yu))
    est = rogan_gladen(1 - a, 1 - ah, 1 - au, 2, w / w.mean(), v / v.mean())
    binary = weighted.rogan_gladen(weighted.Sample.of(a, ah, au, w, v))
    assert abs(est.estimate[0] - binary.estimate) < 1e-12
    assert abs(np.sqrt(est.cov[0, 0]) - binary.se) < 1e-12


def test_two_categories_with_a_score_are_the_binary_judge_s_weighted_curve_eif():
    """Isotonic fits of 1{y = k} and 1 - 1{y = k} sum to 1: class A's prevalence is the
    binary judge's weighted isotonic EIF (the same folds from the same seed)."""
    y, _, _, s, s_u, w, v = _data(3)
    two = np.where(y == "A", "A", "other")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = be.judge(two, s, s_u, mu_model="isotonic", random_seed=4, ci_kind="wald",
                      sample_weight=w, sample_weight_unlabeled=v).summary()
        b = be.judge((y == "A").astype(int), s, s_u, mu_model="isotonic", random_seed=4,
                     method="eif", ci_kind="wald", sample_weight=w,
                     sample_weight_unlabeled=v).summary()
    got = ev.loc[("eif", "prevalence", "A"), ["mean", "sd"]].to_numpy(float)
    np.testing.assert_allclose(got, b.loc["eif", ["mean", "sd"]].to_numpy(float), rtol=0,
                               atol=1e-12)


def test_score_curves_give_prevalences_summing_to_one_and_the_win_rate():
    y, _, _, s, s_u, w, v = _data(4)
    out = _summary(y, s, s_u, mu_model="spline", method="all", random_seed=0, sample_weight=w,
                   sample_weight_unlabeled=v)
    for e in ("classical", "eif"):
        prev = out.loc[(e, "prevalence"), "mean"]
        assert abs(prev.sum() - 1) < 1e-12
        assert abs(out.loc[(e, "weighted", ""), "mean"] - prev[list(CLASSES)] @ SCORE) < 1e-12


def test_weighted_estimators_cover_under_a_stratified_design():
    """R = 150 replicates of benchmarks.coverage_judge_weights' stratified three-category design
    (hard prompts labelled 5 times as often): the weighted EIF (of the judge's labels, and of
    the isotonic curves of its score, monotone or not) and PPI++ cover the prevalences and the
    win rate within 4 Monte-Carlo SEs of 0.95 (SE = 0.018); the unweighted EIF's win rate is
    biased by more than 5 of its SEs."""
    reps, rng = 150, np.random.default_rng(9)
    truth = dict(zip(CLASSES, CLASS_THETA, strict=True)) | {"": WIN_THETA}
    hits, plain = {}, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for r in range(reps):
            y, yh, yu, s, s_u, w, v = category_design(rng, "stratified")
            kw = {"sample_weight": w, "sample_weight_unlabeled": v, "weights": WIN,
                  "ci_kind": "wald"}
            out = be.judge(y, yh, yu, method="all", **kw).summary()
            curve = be.judge(y, s, s_u, mu_model="isotonic", random_seed=r, **kw).summary()
            plain.append(be.judge(y, yh, yu, weights=WIN).summary().loc[
                ("eif", "weighted", ""), "mean"] - WIN_THETA)
            for name, table, e in (("eif", out, "eif"), ("ppi_pp", out, "ppi_pp"),
                                   ("isotonic", curve, "eif")):
                for (_, _, k), row in table.xs(e, level=0, drop_level=False).iterrows():
                    hits.setdefault((name, k), []).append(
                        row["lower"] <= truth[k] <= row["upper"])
    se = np.sqrt(0.95 * 0.05 / reps)
    for key, h in hits.items():
        assert abs(np.mean(h) - 0.95) <= 4 * se, key
    plain = np.array(plain)
    assert abs(plain.mean()) > 5 * plain.std() / np.sqrt(reps)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "bayes", "sample_weight": np.ones(6)}, "has no sampling weights"),
    ({"method": "pymc", "sample_weight": np.ones(6)}, "has no sampling weights"),
    ({"sample_weight": np.ones(5)}, r"sample_weight must hold one weight per item \(6\)"),
    ({"sample_weight_unlabeled": [1, -1]}, "sample_weight_unlabeled must be finite"),
    ({"null": 1.5}, r"null must lie in \[0, 1\] for the prevalence"),
    ({"null": {"score": 0.5}}, r"null must be a number or a mapping with the keys"),
    ({"method": "pymc", "null": 0.5}, "null and alternative give the z-tests"),
    ({"alternative": "above"}, "alternative"),
])
def test_bad_weighted_category_input(kwargs, message):
    y = ["A", "B", "tie", "A", "B", "tie"]
    with pytest.raises(ValueError, match=message):
        be.judge(y, y, ["A", "B"], **kwargs)


def test_bad_scored_category_input():
    y = np.array(["A", "B", "tie"] * 10)
    s = np.linspace(0, 1, 30)
    with pytest.raises(ValueError, match="method='ppi' needs the judge's labels"):
        be.judge(y, s, s, mu_model="spline", method="ppi")
    with pytest.raises(ValueError, match=r"yhat is 0\.5 on every labelled item"):
        be.judge(y, np.full(30, 0.5), s, mu_model="isotonic")
    with pytest.raises(ValueError, match="folds=31 exceeds the 30 labelled items"):
        be.judge(y, s, s, mu_model="spline", folds=31)
