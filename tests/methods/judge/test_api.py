"""be.judge: its input handling and outputs, scored judges, the ppi_py shim, groups, planning,
warnings, bad input and the renamed arguments."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeval.methods.judge import (
    fast,
    judge,
    labels_needed,
    ppi_mean_ci,
    ppi_mean_pointestimate,
)


def test_scored_judge_through_judge():
    """mu_model: cells, bins for continuous scores, a line (= PPI++ at lambda = (n/N) b);
    Rogan–Gladen and the MLE need a binary judge."""
    rng = np.random.default_rng(13)
    y = (rng.random(3000) < 0.4).astype(int)
    score = np.clip(0.5 * y + rng.normal(0.3, 0.2, 3000), 0, 1)
    args = (y[:300], score[:300], score[300:])
    ev = judge(*args, method="all")
    assert list(ev.summary().index) == ["naive", "classical", "ppi", "ppi_pp",
                                        "ppi_pp_unclipped", "eif"]
    assert "not computed: rogan_gladen, rogan_gladen_adjusted, mle" in ev.meta["description"]
    bins = judge(*args).summary().loc["eif"]
    assert abs(bins["mean"] - 0.4) < 4 * bins["sd"]
    line = judge(*args, mu_model="linear").summary().loc["eif", "mean"]
    mo = fast.moments(*args)
    lam = 2700 / 3000 * mo.cov / mo.yhat_var
    assert line == pytest.approx(float(fast.ppi_pp(mo, lam).estimate), abs=1e-12)
    with pytest.raises(ValueError, match="needs binary judge labels"):
        judge(*args, method="mle")



# ============================================================================ ppi_py shim
def ppi_py_transcription(Y, Yhat, Yhat_unlabeled, alpha, lam):
    """ppi_py 0.2.3's ppi_mean_ci for 1-D inputs, line by line (np.cov / np.std, ddof as there)."""
    n, N = Y.size, Yhat_unlabeled.size
    if lam is None:
        cov = np.mean((Y - Y.mean()) * (Yhat - Yhat.mean())) * 2
        var = np.cov(np.concatenate([Yhat, Yhat_unlabeled]))
        lam = float(np.clip(cov / (2 * (1 + n / N) * var), 0, 1))
    est = (lam * Yhat_unlabeled).mean() + (Y - lam * Yhat).mean()
    se = np.sqrt((lam * Yhat_unlabeled).std() ** 2 / N + (Y - lam * Yhat).std() ** 2 / n)
    z = stats.norm.ppf(1 - alpha / 2)
    return est - z * se, est + z * se


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
def test_ppi_shim_matches_ppi_py(sim, lam):
    rng = np.random.default_rng(15)
    d = [sim.simulate(0.35, 0.7, 0.85, 120, 5000, 1, rng),
         sim.simulate(0.6, 0.55, 0.5, 80, 900, 1, rng)]
    for c in d:
        y, yhat, yhat_u = (a.astype(float) for a in sim.items(sim.subset(c, 0)))
        lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=lam)
        ref = ppi_py_transcription(y, yhat, yhat_u, 0.1, lam)
        np.testing.assert_allclose([lo[0], hi[0]], ref, rtol=0, atol=1e-12)
        assert lo.shape == hi.shape == (1,)
        ppi_py = pytest.importorskip("ppi_py")
        np.testing.assert_allclose(np.ravel(ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1,
                                                               lam=lam)), [lo[0], hi[0]],
                                   rtol=0, atol=1e-10)
        np.testing.assert_allclose(ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam),
                                   ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam),
                                   rtol=0, atol=1e-10)


def test_ppi_shim_one_sided_and_its_link_to_judge(sim):
    y, yhat, yhat_u = sim.items(sim.RUNNING_EXAMPLE)
    lo, hi = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, alternative="larger")
    two_lo, _ = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert lo[0] == pytest.approx(two_lo[0], abs=1e-14) and np.isinf(hi[0])
    with pytest.warns(UserWarning, match="does not help PPI"):
        s = judge(y, yhat, yhat_u, method="all", ci_kind="wald", ci_prob=0.9).summary()
    both = ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert [s.loc["ppi_pp", "lower"], s.loc["ppi_pp", "upper"]] == pytest.approx(
        [both[0][0], both[1][0]], abs=1e-12)
    with pytest.raises(ValueError, match="length mismatch: Y has 200, Yhat has 199"):
        ppi_mean_ci(y, yhat[:-1], yhat_u)
    with pytest.raises(ValueError, match="lam is undefined"):
        ppi_mean_ci([1, 0, 1], [1, 1, 1], [1, 1])


# ================================================================================== groups
def test_groups_are_independent_fits():
    """Several judges on the same human labels (a DataFrame, shared y) equal one fit each."""
    rng = np.random.default_rng(16)
    y = (rng.random(2000) < 0.45).astype(int)
    judges = pd.DataFrame({name: np.where(y == 1, rng.random(2000) < q1, rng.random(2000) > q0)
                           .astype(int) for name, q0, q1 in
                           (("cheap", 0.65, 0.7), ("strong", 0.85, 0.9))})
    with pytest.warns(UserWarning, match=r"\[cheap\] the judge does not help PPI"):
        ev = judge(y[:250], judges.iloc[:250], judges.iloc[250:], method="all")
    s = ev.summary()
    assert s.index.names == ["estimator", "group"]
    for name in judges:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the cheap judge's, as above
            one = judge(y[:250], judges[name][:250], judges[name][250:],
                        method="all").summary()
        pd.testing.assert_frame_equal(s.xs(name, level="group"), one, check_names=False,
                                      rtol=0, atol=1e-15)
    data = ev.tree["data"].to_dataset()
    assert data["kappa"].sel(group="strong") > data["kappa"].sel(group="cheap")
    assert s.loc[("eif", "strong"), "sd"] < s.loc[("eif", "cheap"), "sd"]


# ================================================================================ planning
def test_labels_needed_delivers_the_half_width(sim):
    """The planned m gives the target half-width: z times the sd of 4,000 simulated EIF
    estimates matches it within 4 sigma plus the O(1/m) asymptotic error (3 %)."""
    theta, q0, q1, n_total, h = 0.3, 0.85, 0.8, 20_000, 0.025
    p = theta * q1 + (1 - theta) * (1 - q0)
    rho2 = theta * (1 - theta) * (q0 + q1 - 1) ** 2 / (p * (1 - p))
    m = labels_needed(h, theta=theta, rho2=rho2, n_total=n_total)
    z = fast.z_value(0.95)
    assert z**2 * theta * (1 - theta) * (rho2 / n_total + (1 - rho2) / m) <= h**2
    assert 200 < m < labels_needed(h, theta=theta, rho2=0.0)
    rng = np.random.default_rng(17)
    c = sim.subset(c := sim.simulate(theta, q0, q1, m, n_total - m, 4000, rng), sim.usable(c))
    sd = fast.eif_cells(*c.cells()).estimate.std(ddof=1)
    assert z * sd == pytest.approx(h, rel=4 / np.sqrt(2 * 4000) + 0.03)
    with pytest.raises(ValueError, match="out of reach"):
        labels_needed(0.001, theta=0.3, rho2=0.5, n_total=10_000)
    with pytest.raises(ValueError, match="rho2 must lie in"):
        labels_needed(0.03, theta=0.3, rho2=1.5)


# ====================================================================== warnings, bad input
def test_warnings_name_what_is_wrong(sim):
    y, yhat, yhat_u = sim.items(fast.Counts(30, 0, 20, 40, t1=500, t0=700))  # empty (Y=1, judge=0)
    with pytest.warns(UserWarning, match=r"empty labelled cell\(s\) \(Y=1, judge=0\)"):
        ev = judge(y, yhat, yhat_u, method="all")
    assert any("empty labelled cell" in w for w in ev.warnings)
    weak = sim.items(fast.Counts(30, 25, 25, 30, t1=500, t0=500))  # kappa ~ 0.09
    with pytest.warns(UserWarning, match="weak judge"):
        judge(*weak)
    outside = sim.items(fast.Counts(10, 2, 30, 60, t1=100, t0=900))  # RG raw < 0
    with pytest.warns(UserWarning, match="rogan_gladen = -0.4667 lies outside"):
        judge(*outside, method="rogan_gladen")


def test_a_judge_no_better_than_chance(sim):
    """kappa <= 0: Rogan–Gladen is left out of "all" (it divides by kappa) and refused alone;
    the EIF still answers (close to the human labels' mean)."""
    y, yhat, yhat_u = sim.items(fast.Counts(20, 30, 35, 25, t1=600, t0=400))
    with pytest.warns(UserWarning) as caught:
        ev = judge(y, yhat, yhat_u, method="all")
    said = " ".join(str(w.message) for w in caught)
    assert "no better than chance" in said and "rogan_gladen_adjusted left out" in said
    assert "rogan_gladen" not in ev.summary().index
    assert "mle" in ev.summary().index
    assert ev.summary().loc["eif", "mean"] == pytest.approx(50 / 110, abs=0.02)
    with pytest.raises(ValueError, match=r"kappa = q0 \+ q1 - 1, which is -0\.1"):
        judge(y, yhat, yhat_u, method="rogan_gladen")


def test_a_group_with_a_chance_judge_leaves_rogan_gladen_out_there_only(sim):
    """Several groups: Rogan–Gladen is NaN for the group whose kappa <= 0 (its warning says
    so) and estimated for the others."""
    bad_counts = fast.Counts(20, 30, 35, 25, t1=600, t0=400)
    good_counts = fast.Counts(45, 5, 8, 52, t1=600, t0=400)
    (y_bad, bad, bad_u), (y_good, good, good_u) = sim.items(bad_counts), sim.items(good_counts)
    with pytest.warns(UserWarning) as caught:
        ev = judge({"bad": y_bad, "good": y_good}, {"bad": bad, "good": good},
                   {"bad": bad_u, "good": good_u}, method="all")
    said = [str(w.message) for w in caught]
    assert any(m.startswith("[bad] rogan_gladen, rogan_gladen_adjusted left out") for m in said)
    assert not any(m.startswith("[good]") for m in said)
    rg = ev.closed_form["mean"].sel(estimator="rogan_gladen")
    assert np.isnan(float(rg.sel(group="bad"))) and np.isfinite(float(rg.sel(group="good")))
    alone = judge(y_good, good, good_u, method="rogan_gladen").closed_form["mean"]
    assert float(rg.sel(group="good")) == pytest.approx(alone.item(), abs=1e-12)
    assert "NaN where not" in ev.meta["description"]


def test_no_silent_nan_on_small_random_data(sim):
    """200 small data sets: every estimate, se and bound is finite, or the call is refused."""
    rng = np.random.default_rng(18)
    refused = 0
    for _ in range(200):
        m = int(rng.integers(6, 40))
        rates, n = rng.uniform(0.05, 0.95, 3), int(rng.integers(5, 500))
        c = sim.subset(sim.simulate(*rates, m, n, 1, rng), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                cf = judge(*sim.items(c), method="all").closed_form
            except ValueError:
                refused += 1
                continue
        assert all(np.isfinite(cf[v]).all() for v in ("mean", "sd", "lower", "upper"))
    assert refused < 100


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (([0, 1, np.nan, 1], [0, 1, 1, 1], [0, 1]), {}, "y has 1 NaN"),
    (([0, 1, 2, 1], [0, 1, 1, 1], [0, 1]), {}, "fewer than 2 labelled items of 2 categories"),
    (([0, 1, 1, 0], [0, 1, 1], [0, 1]), {}, "length mismatch: y has 4, yhat has 3"),
    (([0, 1, 1, 1, 1], [0, 1, 0, 1, 1], [0, 1]), {}, "1 negative label"),
    (([0, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1]), {}, "single value"),
    (([0, 0, 1, 1], [1, 1, 1, 1], [1, 0, 1]), {}, "every labelled item"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "best"}, "method must be one of"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"ci_kind": "exact"}, "ci_kind must be one of"),
    (([0, 0, 1, 1], [0, 1, 0, 1], []), {}, "yhat_unlabeled is empty"),
    (([0, 0, 1, 1], [0, 0.5, 0, 1], [0, 1]), {"method": "pymc"}, "needs binary judge"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "pymc", "prior": {"eta": (1, 1)}},
     "prior has unknown key"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "pymc", "prior": {"q1": (0, 1)}},
     "prior\\['q1'\\] must be two positive"),
    (([0, 0, 1, 1], [0, 1, 0, 1], [0, 1]), {"method": "both", "prior": {"q1": (5, 1)}},
     "no exact closed form"),
    (({"a": [0, 0, 1, 1]}, {"b": [0, 1, 0, 1]}, [0, 1]), {}, "yhat has groups \\['b'\\]"),
    (({"a": [0, 0, 1, 1, 1]}, [0, 1, 0, 1], [0, 1]), {}, "y\\['a'\\] has 5, yhat\\['a'\\] has 4"),
])
def test_bad_input_is_refused_with_a_clear_message(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        judge(*args, **kwargs)


def test_old_argument_names_still_work_with_a_warning(sim):
    """estimator= and ci= are method= and ci_kind=."""
    y, yhat, yhat_u = sim.items(sim.RUNNING_EXAMPLE)
    new = judge(y, yhat, yhat_u, method="ppi_pp", ci_kind="wald")
    with pytest.warns(FutureWarning, match=r"judge\(estimator=\) is now judge\(method=\)"):
        old = judge(y, yhat, yhat_u, estimator="ppi_pp", ci_kind="wald")
    assert old.tree.equals(new.tree) and old.meta["variant"] == "ppi_pp"
    with pytest.warns(FutureWarning, match=r"judge\(ci=\) is now judge\(ci_kind=\)"):
        old = judge(y, yhat, yhat_u, method="ppi_pp", ci="wald")
    assert old.tree.equals(new.tree)
    with pytest.raises(TypeError, match="both estimator= and its new name method="):
        judge(y, yhat, yhat_u, method="eif", estimator="eif")



# ============================================================== estimates outside [0, 1]
@pytest.mark.parametrize("ci_kind", ["logit", "wald"])
def test_an_estimate_outside_0_1_is_projected_and_inside_its_interval(ci_kind):
    """PPI of 1.25 (ppi_py's number, unclipped): reported as 1, its interval [raw +- z se]
    clipped to [0, 1], and a note; an estimate inside [0, 1] keeps its interval."""
    with pytest.warns(UserWarning, match=r"ppi = 1.2500 lies outside \[0, 1\]: reported as 1"):
        ev = judge([0, 0, 1, 1], [0, 0, 0, 1], [1], method="ppi", ci_kind=ci_kind)
    row = ev.summary().loc["ppi"]
    raw = ppi_mean_pointestimate([0, 0, 1, 1], [0, 0, 0, 1], [1], lam=1)[0]
    assert raw == pytest.approx(1.25, abs=1e-12) and row["mean"] == 1.0
    assert row["lower"] <= row["mean"] <= row["upper"] <= 1.0
    if ci_kind == "wald":  # the raw interval clipped: 1.25 - 1.96 se
        lo, _ = ppi_mean_ci([0, 0, 1, 1], [0, 0, 0, 1], [1], alpha=0.05, lam=1)
        assert row["lower"] == pytest.approx(lo[0], abs=1e-12)


def test_every_reported_interval_contains_its_estimate():
    """Small random data sets, every estimator and both kinds: lower <= mean <= upper in
    [0, 1] (the logit interval's clamp at 1e-6 no longer leaves an estimate of 0 outside)."""
    rng = np.random.default_rng(21)
    seen_outside = 0
    for _ in range(150):
        m, n = int(rng.integers(4, 12)), int(rng.integers(1, 6))
        y, yhat = rng.integers(0, 2, (2, m))
        yhat_u = rng.integers(0, 2, n)
        for kind in ("logit", "wald"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    s = judge(y, yhat, yhat_u, method="all", ci_kind=kind).summary()
                except ValueError:
                    break
            seen_outside += any("lies outside" in str(w.message) for w in caught)
            assert not any(issubclass(w.category, RuntimeWarning) for w in caught)
            assert (s["lower"] <= s["mean"]).all() and (s["mean"] <= s["upper"]).all(), s
            assert s["mean"].between(0, 1).all(), s
    assert seen_outside > 0  # the rule was exercised


def test_ppi_with_the_judge_equal_to_y_and_one_unlabelled_item():
    """s^2(Y - Yhat) is 0 but its expansion rounds to -5.6e-17: no NaN se, no RuntimeWarning."""
    y = np.array([1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1])
    mo = fast.Moments.from_counts(fast.Counts.from_labels(y, y, [0]))  # judge's binary path
    assert mo.y_var + mo.yhat_var - 2 * mo.cov < 0  # the rounding this guards against
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        s = judge(y, y, [0], method="all").summary()
        line = fast.eif_linear(mo)
    assert s.loc["ppi", "sd"] == 0.0 and np.isfinite(s.to_numpy()).all()
    assert np.isfinite(line.se)
