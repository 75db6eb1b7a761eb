"""bayeval.plots: every kind draws what it claims (overlays, intervals, panels), the registry."""

import matplotlib.dates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.collections import LineCollection
from scipy import stats

import bayeval as be
from bayeval import datasets, plots
from bayeval.evaluation import Evaluation

METRICS = ["accuracy", "precision", "recall", "specificity", "npv"]
N_PMF = 40  # trials of the synthetic binomial rates
P_PMF = {"accuracy": 0.3, "recall": 0.7}


@pytest.fixture(scope="module")
def pmf():
    """Binomial rates k/n: the exact PMF as fast path and independent draws of it."""
    support = np.arange(N_PMF + 1)
    probs = np.stack([stats.binom.pmf(support, N_PMF, p) for p in P_PMF.values()])
    p = np.array(list(P_PMF.values()))
    law = stats.binom(N_PMF, p)
    dims = ("metric",)
    closed = xr.Dataset(
        {"mean": (dims, p), "sd": (dims, law.std() / N_PMF),
         "lower": (dims, law.ppf(0.025) / N_PMF), "upper": (dims, law.ppf(0.975) / N_PMF),
         "pmf_value": (("metric", "support"), np.tile(support / N_PMF, (2, 1))),
         "pmf_prob": (("metric", "support"), probs)},
        coords={"metric": list(P_PMF)})
    rng = np.random.default_rng(0)
    x = rng.binomial(N_PMF, p, size=(1, 2000, 2)) / N_PMF
    draws = xr.DataTree.from_dict({"posterior_predictive": xr.Dataset(
        {"rate": (("chain", "draw", "metric"), x)}, coords={"metric": list(P_PMF)})})
    return Evaluation.create(method="synthetic", variant="both", closed_form=closed, draws=draws,
                             estimand="posterior_predictive/rate", iid_draws=True)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def lines(ax, label):
    return [line for line in ax.lines if line.get_label() == label]


def test_available_and_default_kinds(exact, both, pmf):
    assert plots.available(exact) == ["distribution", "intervals"]
    assert plots.available(both) == ["distribution", "intervals", "trace", "rank",
                                     "sensitivity"]
    # a closed form without PMF is best shown as intervals; draws or a PMF as distributions
    assert [plots.default_kind(e) for e in (exact, both, pmf)] == [
        "intervals", "distribution", "distribution"]


def test_distribution_overlays_the_exact_beta_and_marks_both_intervals(both):
    fig = plots.plot(both)
    assert [ax.get_title() for ax in fig.axes] == METRICS
    closed, drawn = both.summary("closed_form"), both.summary("draws")
    cf = both.closed_form
    for ax, metric in zip(fig.axes, METRICS, strict=True):
        (hist,) = ax.patches
        x, y = hist.get_xy().T  # the draws' histogram is a density: its area is 1
        assert 0.5 * abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))) == pytest.approx(1)
        # the conjugate fast path is drawn as its exact law, Beta(a + k, b + m - k)
        (curve,) = lines(ax, "fast path: exact Beta density")
        x, y = curve.get_data()
        a, b = float(cf["alpha"].sel(metric=metric)), float(cf["beta"].sel(metric=metric))
        np.testing.assert_allclose(y, stats.beta.pdf(x, a, b), rtol=1e-12)
        assert stats.beta.cdf(x[-1], a, b) - stats.beta.cdf(x[0], a, b) == pytest.approx(0.999)
        assert not lines(ax, "fast path: normal density")
        (fast,) = lines(ax, "fast path 95% ETI")
        np.testing.assert_allclose(fast.get_xdata(), closed.loc[metric, ["lower", "upper"]])
        (post,) = lines(ax, "posterior draws 95% ETI")
        np.testing.assert_allclose(post.get_xdata(), drawn.loc[metric, ["lower", "upper"]])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "posterior draws", "fast path: exact Beta density", "posterior draws 95% ETI",
        "fast path 95% ETI"]


def test_distribution_draws_a_normal_only_where_the_fast_path_is_gaussian():
    # recall's interval is mean +- z sd (a Gaussian fast path); accuracy's is a logit-Wald one
    z = stats.norm.ppf(0.975)
    mean, sd = np.array([0.8, 0.6]), np.array([0.05, 0.04])
    logit = np.log(mean / (1 - mean)) + np.array([[-1], [1]]) * z * sd / (mean * (1 - mean))
    lower = np.array([1 / (1 + np.exp(-logit[0, 0])), mean[1] - z * sd[1]])
    upper = np.array([1 / (1 + np.exp(-logit[1, 0])), mean[1] + z * sd[1]])
    closed = xr.Dataset({k: ("metric", v) for k, v in
                         (("mean", mean), ("sd", sd), ("lower", lower), ("upper", upper))},
                        coords={"metric": ["accuracy", "recall"]})
    ev = Evaluation.create(method="synthetic", variant="gauss", closed_form=closed)
    fig = plots.plot(ev, "distribution")
    (recall,) = fig.axes  # accuracy has an interval only: no panel
    assert recall.get_title() == "recall"
    assert "1 with an interval only or undefined are in the intervals plot" in fig.get_suptitle()
    (curve,) = lines(recall, "fast path: normal density")
    x, y = curve.get_data()
    np.testing.assert_allclose(y, stats.norm.pdf(x, 0.6, 0.04), rtol=1e-12)


def test_distribution_of_an_exact_pmf_shows_its_bars_and_the_draws_frequencies(pmf):
    fig = plots.plot(pmf, "distribution")
    assert [ax.get_title() for ax in fig.axes] == list(P_PMF)
    for ax, p in zip(fig.axes, P_PMF.values(), strict=True):
        (bars,) = [c for c in ax.collections if isinstance(c, LineCollection)]
        heights = np.array([seg[1, 1] for seg in bars.get_segments()])
        law = stats.binom.pmf(np.arange(N_PMF + 1), N_PMF, p)
        np.testing.assert_allclose(np.sort(heights), np.sort(law[law > 0]), rtol=1e-12)
        (freq,) = lines(ax, "draws: frequencies on the support")
        assert freq.get_ydata().sum() == pytest.approx(1.0, abs=1e-12)
        assert np.isin(freq.get_xdata(), np.arange(N_PMF + 1) / N_PMF).all()
        (post,) = lines(ax, "predictive draws 95% ETI")
        assert post.get_xdata()[0] < p < post.get_xdata()[1]


def test_intervals_put_fast_path_and_draws_side_by_side(both, exact):
    fig = plots.plot(both, "intervals")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == METRICS
    fast, post = lines(ax, "fast path 95% ETI"), lines(ax, "posterior draws 95% ETI")
    assert len(fast) == len(post) == 5
    np.testing.assert_allclose([f.get_xdata() for f in fast],
                               both.summary("closed_form")[["lower", "upper"]])
    np.testing.assert_allclose([p.get_xdata() for p in post],
                               both.summary("draws")[["lower", "upper"]])
    only_fast = plots.plot(exact, "intervals").axes[0]
    assert len(lines(only_fast, "fast path 95% ETI")) == 5
    assert not lines(only_fast, "posterior draws 95% ETI")


def test_coords_choose_the_panels(both):
    fig = plots.plot(both, "distribution", coords={"metric": ["recall", "npv"]})
    assert [ax.get_title() for ax in fig.axes] == ["recall", "npv"]


def test_many_coordinates_are_capped_and_said_so():
    chunks, dims = [f"c{i}" for i in range(6)], ("chunk", "metric")
    shape = (len(chunks), len(METRICS))
    closed = xr.Dataset({k: (dims, np.full(shape, v)) for k, v in
                         (("mean", 0.5), ("sd", 0.1), ("lower", 0.3), ("upper", 0.7))},
                        coords={"chunk": chunks, "metric": METRICS})
    closed["alpha"], closed["beta"] = closed["mean"] * 10, (1 - closed["mean"]) * 10  # Beta laws
    ev = Evaluation.create(method="synthetic", variant="exact", closed_form=closed)
    fig = plots.plot(ev, "distribution")
    assert len(fig.axes) == 12
    assert fig.axes[0].get_title() == "c0, accuracy"
    assert "first 12 of 30" in fig.get_suptitle()


def test_trace_and_rank_come_from_arviz(both):
    fig = plots.plot(both, "trace")
    assert len(fig.axes) == 2 * len(METRICS)  # density and trace per metric
    labels = " ".join(ax.get_ylabel() for ax in fig.axes)
    assert all(m in labels for m in METRICS)
    assert all(len(ax.lines) >= 2 for ax in fig.axes)  # one line per chain
    fig = plots.plot(both, "rank")
    assert len(fig.axes) == len(METRICS)
    assert all(m in ax.get_title() for ax, m in zip(fig.axes, METRICS, strict=True))


def test_sensitivity_plots_the_table(both):
    table = both.sensitivity()
    fig = plots.plot(both, "sensitivity")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table.index)
    (prior,), (likelihood,) = lines(ax, "prior"), lines(ax, "likelihood")
    np.testing.assert_array_equal(prior.get_xdata(), table["prior"])
    np.testing.assert_array_equal(likelihood.get_xdata(), table["likelihood"])
    (threshold,) = lines(ax, "threshold 0.05")
    assert threshold.get_xdata()[0] == 0.05


def test_sensitivity_flags_an_informative_prior(data):
    # Beta(60, 20) against recall 99/106: prior-data conflict (tests/test_evaluation.py)
    ev = be.labelled(data.scores, data.labels, prior=(60.0, 20.0), metrics="recall",
                     method="pymc", random_seed=1, sample_kwargs={"draws": 300, "tune": 300})
    (ax,) = plots.plot(ev, "sensitivity").axes
    assert [t.get_text() for t in ax.texts] == ["prior-data conflict"]
    assert lines(ax, "prior")[0].get_xdata()[0] > 0.05


def test_a_kind_that_does_not_apply_names_the_valid_ones(exact):
    with pytest.raises(ValueError, match=r"kind='trace' does not apply .* without MCMC; valid "
                                         r"kinds for it: distribution, intervals\."):
        plots.plot(exact, "trace")
    with pytest.raises(ValueError, match=r"'pmf' is not a plot kind; valid kinds for this "
                                         r"evaluation: distribution, intervals\."):
        plots.plot(exact, "pmf")


def test_a_method_adds_a_kind_with_one_function(exact, monkeypatch):
    # the registry is the core's: undo the registrations below when the test ends
    monkeypatch.setitem(plots.KINDS, "counts", None)
    monkeypatch.setitem(plots.KINDS, "chunks", plots.KINDS["chunks"])

    @plots.register("counts", "successes per metric", applies=plots.for_methods("labelled"))
    def counts(ev, color="k"):
        fig, ax = plt.subplots()
        ax.bar(ev.closed_form["metric"].values, ev.closed_form["successes"].values, color=color)
        return fig

    @plots.register("chunks", "per chunk", applies=plots.for_methods("cbpe"))
    def chunks(ev):
        raise AssertionError("not for labelled evaluations")

    assert plots.available(exact) == ["distribution", "intervals", "counts"]
    fig = plots.plot(exact, "counts", color="tab:green")
    assert [p.get_height() for p in fig.axes[0].patches] == list(
        exact.closed_form["successes"].values)
    with pytest.raises(ValueError, match="specific to method cbpe"):
        plots.plot(exact, "chunks")
    monkeypatch.setitem(plots.DEFAULT_KINDS, "labelled", "counts")
    assert plots.default_kind(exact) == "counts"


# ---------------------------------------------------------------------- method-specific
@pytest.fixture(scope="module")
def cbpe_ev():
    from bayeval.methods.cbpe.api import cbpe
    ref = datasets.calibrated_scores(1000, random_seed=0)
    ana = datasets.calibrated_scores(1000, random_seed=1)
    # a tight band on accuracy so that some chunks are in alert
    return cbpe(ana.scores, reference=(ref.scores, ref.labels), labels=ana.labels,
                chunk_size=200, metrics=["accuracy", "recall", "precision"], method="exact",
                alert_thresholds={"accuracy": (0.67, 0.9)}, random_seed=0)


def test_chunks_show_estimates_realized_values_thresholds_and_alerts(cbpe_ev):
    assert plots.default_kind(cbpe_ev) == "chunks"
    assert "chunks" in plots.available(cbpe_ev)
    fig = plots.plot(cbpe_ev)
    fig.canvas.draw()
    cf = cbpe_ev.closed_form.drop_sel(chunk="all")
    names = list(cf["chunk"].values)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["accuracy", "recall", "precision"]
    # a shared time axis, labelled under the last row: 5 short keys after 5 reference chunks
    # and a gap, every other one (11 positions of 9 characters do not fit in 70)
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == names[::2]
    n_alerts = 0
    for ax in fig.axes:
        m = cf.sel(metric=ax.get_title(loc="left"))
        (estimate,) = lines(ax, "estimate")
        np.testing.assert_array_equal(estimate.get_xdata(), np.arange(len(names)))
        np.testing.assert_array_equal(estimate.get_ydata(), m["mean"].values)
        band = ax.collections[0]  # fill_between: the interval as a band (then the reference's)
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.min() == pytest.approx(m["lower"].min()) and ys.max() == pytest.approx(
            m["upper"].max())
        (realized,) = lines(ax, "realized")
        np.testing.assert_array_equal(realized.get_ydata(), m["realized"].values)
        thresholds = lines(ax, "alert thresholds")
        assert sorted(t.get_ydata()[0] for t in thresholds) == pytest.approx(
            [float(m["lower_threshold"][0]), float(m["upper_threshold"][0])])
        assert all(t.get_linestyle() == "--" for t in thresholds)
        alerts = lines(ax, "alert")
        shown = len(alerts[0].get_xdata()) if alerts else 0
        assert shown == int(m["alert"].sum())
        # every alert is annotated with its p_alert; the panel counts the alerts
        flagged = np.flatnonzero(m["alert"])
        assert [t.get_text() for t in ax.texts if t.get_text() != "reference"] == [
            f"{p:.2f}" for p in m["p_alert"].values[flagged]]
        assert ax.get_title(loc="right").startswith(f"{shown} of {len(names)} chunks in alert")
        if alerts:
            np.testing.assert_array_equal(alerts[0].get_xdata(), flagged)
        n_alerts += shown
    assert n_alerts == int(cf["alert"].sum()) > 0
    fig = plots.plot(cbpe_ev, "chunks", coords={"metric": ["recall"]})
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["recall"]


def overlaps(labels) -> int:
    """Pairs of visible, non-empty tick labels whose drawn boxes intersect."""
    boxes = [t.get_window_extent() for t in labels if t.get_visible() and t.get_text()]
    return sum(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


@pytest.fixture(scope="module")
def weekly():
    """CBPE over 52 weekly chunks keyed by pandas' period labels (2024-01-01/2024-01-07)."""
    import pandas as pd

    from bayeval.methods.cbpe.api import cbpe
    ref = datasets.calibrated_scores(2000, random_seed=0)
    ana = datasets.calibrated_scores(52 * 40, random_seed=1)
    keys = pd.Series(pd.date_range("2024-01-01", periods=52 * 40, freq="252min")
                     ).dt.to_period("W").astype(str).to_numpy()
    return cbpe(ana.scores, reference=(ref.scores, ref.labels), chunks=keys,
                metrics=["accuracy", "f1"], random_seed=0)


def test_chunks_keyed_by_dates_sit_on_a_date_axis_without_overlapping_labels(weekly):
    import matplotlib.dates as mdates
    fig = plots.plot(weekly, "chunks")
    fig.canvas.draw()
    keys = [c for c in weekly.closed_form["chunk"].values if c != "all"]
    assert len(keys) == 52 and keys[0] == "2024-01-01/2024-01-07"
    for ax in fig.axes:
        (estimate,) = lines(ax, "estimate")
        days = np.asarray(estimate.get_xdata()).astype("datetime64[D]")
        assert str(days[0]) == "2024-01-01"  # each period at its start
        assert (np.diff(days) == np.timedelta64(7, "D")).all()
        assert isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
    bottom = fig.axes[-1].get_xticklabels()  # the shared axis is labelled under the last row
    assert overlaps(bottom) == 0
    assert 3 <= len([t for t in bottom if t.get_text()]) <= 12


def test_many_chunks_with_long_keys_show_every_kth_label_without_overlap():
    keys = [f"batch-{i:03d}-of-the-spring-campaign" for i in range(60)]
    dims = ("chunk", "metric")
    closed = xr.Dataset({k: (dims, np.full((61, 1), v)) for k, v in
                         (("mean", 0.5), ("sd", 0.1), ("lower", 0.3), ("upper", 0.7))},
                        coords={"chunk": [*keys, "all"], "metric": ["accuracy"]})
    ev = Evaluation.create(method="cbpe", variant="exact", closed_form=closed)
    fig = plots.plot(ev, "chunks")
    fig.canvas.draw()
    (ax,) = fig.axes
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert shown[0] == keys[0] and set(shown) <= set(keys) and 2 <= len(shown) < 10
    assert overlaps(ax.get_xticklabels()) == 0


def test_chunks_of_evaluations_gathered_by_group_get_one_column_each():
    from bayeval import scale
    from bayeval.methods.cbpe.api import cbpe
    rng = np.random.default_rng(0)
    groups = {"model_a": rng.beta(2, 2, 300), "model_b": rng.beta(2, 3, 300)}
    ev = scale.map_evaluations(lambda s: cbpe(s, chunk_size=100, metrics=["accuracy"]), groups)
    fig = plots.plot(ev, "chunks")
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["model_a: accuracy",
                                                             "model_b: accuracy"]
    for ax, group in zip(fig.axes, groups, strict=True):
        (estimate,) = lines(ax, "estimate")
        expected = ev.closed_form["mean"].sel(group=group, metric="accuracy").values[:-1]
        np.testing.assert_array_equal(estimate.get_ydata(), expected)


def bars(ax, label):
    """[x0, x1] per row of the horizontal bars (``hlines``) labelled ``label``."""
    (collection,) = [c for c in ax.collections if c.get_label() == label]
    return np.array([seg[:, 0] for seg in collection.get_segments()])


def bodies(ax, label):
    """(x range, y range) of each violin labelled ``label``, in drawing order."""
    paths = [c.get_paths()[0].vertices for c in ax.collections if c.get_label() == label]
    return [((v[:, 0].min(), v[:, 0].max()), (v[:, 1].min(), v[:, 1].max())) for v in paths]


def test_bounds_draw_the_identified_and_the_covering_interval():
    from bayeval.methods.bounds.api import bounds
    w = datasets.weak_labels(2000, min_votes=1, random_seed=0)
    ev = bounds(w.y_pred, w.weak_labels)
    assert plots.default_kind(ev) == "bounds"
    table = ev.summary()
    (ax,) = plots.plot(ev).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == list(table.index)
    identified = bars(ax, "identified interval [L, U]")
    covering = bars(ax, "covering interval 95% ETI")
    np.testing.assert_allclose(identified, table[["lower_bound", "upper_bound"]])
    np.testing.assert_allclose(covering, table[["lower", "upper"]])
    # the covering interval contains the identified one
    assert ((covering[:, 0] <= identified[:, 0]) & (identified[:, 1] <= covering[:, 1])).all()
    assert not bodies(ax, "posterior of L and of U")  # no draws, no posterior


@pytest.fixture(scope="module")
def bounds_both():
    from bayeval.methods.bounds.api import bounds
    w = datasets.weak_labels(2000, min_votes=1, random_seed=0)
    return bounds(w.y_pred, w.weak_labels, method="both", random_seed=1,
                  sample_kwargs={"draws": 300, "tune": 300})


def test_bounds_show_the_posterior_of_each_bound_and_of_the_metric(bounds_both):
    ev = bounds_both
    post = ev.tree["posterior"].to_dataset()
    metrics = list(ev.closed_form["metric"].values)
    (ax,) = plots.plot(ev).axes
    # around the plug-in bounds of the fast path
    np.testing.assert_allclose(bars(ax, "identified interval [L, U]"),
                               ev.summary("closed_form")[["lower_bound", "upper_bound"]])
    # per metric (row -i): a violin of the lower bound's and of the upper bound's draws above
    # the row, spanning exactly their range, and one of the metric's draws below it
    bound_violins = bodies(ax, "posterior of L and of U")
    metric_violins = bodies(ax, "posterior of the metric")
    assert len(bound_violins) == 2 * len(metrics) and len(metric_violins) == len(metrics)
    for i, metric in enumerate(metrics):
        for var, (x, y) in zip(["lower_bound", "upper_bound"], bound_violins[i::len(metrics)],
                               strict=True):
            d = post[var].sel(metric=metric).values
            np.testing.assert_allclose(x, (d.min(), d.max()), rtol=1e-12)
            # half a violin: up to its half-width 0.4 (to rounding: -2 + 0.4 vs -1.6)
            assert y[0] == pytest.approx(-i) and -i + 0.3 < y[1] <= -i + 0.4 + 1e-12
        x, y = metric_violins[i]
        d = post["value"].sel(metric=metric).values
        np.testing.assert_allclose(x, (d.min(), d.max()), rtol=1e-12)
        assert -i - 0.4 - 1e-12 <= y[0] < -i - 0.3 and y[1] == pytest.approx(-i)
    # the lower bound's posterior sits at L, the upper bound's at U: each mean nearer its own
    # bound than the other (their sds are the reported SEs, which hold the fitted label model's
    # error: 0.03-0.14 here, for bounds 0.32-0.35 apart)
    lo, hi = (post[v].mean(("chain", "draw")) for v in ("lower_bound", "upper_bound"))
    cf = ev.closed_form
    low, up = cf["lower_bound"], cf["upper_bound"]
    assert (abs(lo - low) < abs(lo - up)).all() and (abs(hi - up) < abs(hi - low)).all()


def test_bounds_without_fast_path_show_the_posterior_means(bounds_both):
    ev = type(bounds_both)(bounds_both.tree.drop_nodes("closed_form"))  # as method="pymc"
    (ax,) = plots.plot(ev).axes
    table = ev.summary()
    np.testing.assert_allclose(bars(ax, "identified interval [L, U] (posterior means)"),
                               table[["lower_bound", "upper_bound"]])
    np.testing.assert_allclose(bars(ax, "covering interval 95% ETI"), table[["lower", "upper"]])
    assert len(bodies(ax, "posterior of L and of U")) == 2 * len(table)


def test_chunks_of_draws_alone_show_their_mean_interval_and_the_data():
    from bayeval.methods.cbpe.api import cbpe
    ref = datasets.calibrated_scores(1000, random_seed=0)
    ana = datasets.calibrated_scores(600, random_seed=1)
    ev = cbpe(ana.scores, reference=(ref.scores, ref.labels), labels=ana.labels, chunk_size=200,
              metrics=["accuracy"], method="pymc", draws=300, random_seed=2,
              alert_thresholds={"accuracy": (0.7, 0.9)})
    fig = plots.plot(ev, "chunks")
    (ax,) = fig.axes
    draws = ev.draws.sel(metric="accuracy").drop_sel(chunk="all")
    (estimate,) = lines(ax, "estimate")
    np.testing.assert_allclose(estimate.get_ydata(), draws.mean(("chain", "draw")).values)
    band = ax.collections[0]  # then the reference chunks' (estimated by the fast path)
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(float(draws.quantile(0.025, ("chain", "draw")).min()))
    data = ev.tree["data"].to_dataset().sel(metric="accuracy").drop_sel(chunk="all")
    (realized,) = lines(ax, "realized")
    np.testing.assert_array_equal(realized.get_ydata(), data["realized"].values)
    assert sorted(t.get_ydata()[0] for t in lines(ax, "alert thresholds")) == [0.7, 0.9]


def test_a_metric_without_pmf_among_pmfs_is_drawn_as_its_normal_law():
    # CBPE's exact laws: PMFs for the count metrics, a normal law for ROC-AUC (its PMF is NaN)
    from bayeval.methods.cbpe import cbpe
    ref = datasets.calibrated_scores(600, random_seed=0)
    ev = cbpe(datasets.calibrated_scores(400, random_seed=1).scores,
              reference=(ref.scores, ref.labels), metrics=["accuracy", "roc_auc"], random_seed=0)
    (ax,) = plots.plot(ev, "distribution", coords={"metric": "roc_auc", "chunk": "all"}).axes
    (curve,) = lines(ax, "fast path: normal density")
    auc = ev.closed_form.sel(metric="roc_auc", chunk="all")
    peak = curve.get_xdata()[np.argmax(curve.get_ydata())]
    assert abs(peak - float(auc["mean"])) < 0.05 * float(auc["upper"] - auc["lower"])


def test_intervals_of_an_undefined_metric_say_so():
    from bayeval.methods.bounds.api import bounds
    # no item is predicted positive: precision (and f1) have no value
    ev = bounds([0, 0, 0, 0], [[1, 1], [0, 0], [1, 0], [0, -1]], label_model="majority_vote")
    table = ev.summary()
    undefined = table.index[table["mean"].isna()].tolist()
    assert "precision" in undefined
    (ax,) = plots.plot(ev, "intervals").axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [m + " (undefined)" if m in undefined else m for m in table.index]
    assert len(lines(ax, "fast path 95% ETI")) == len(table) - len(undefined)


def test_distribution_is_offered_only_where_there_is_a_distribution(exact, pmf):
    judge = be.judge([1, 0, 1, 1, 0, 1, 0, 1], [1, 0, 1, 0, 0, 1, 1, 1],
                     [1, 0, 1, 1, 0, 0, 1, 1, 1, 0], method="all")
    assert "distribution" not in plots.available(judge)
    assert "distribution" in plots.available(exact)  # its exact Beta laws
    assert "distribution" in plots.available(pmf)
    with pytest.raises(ValueError, match="no draws and no exact law"):
        plots.plot(judge, "distribution")


def test_sensitivity_shows_the_most_sensitive_quantities_and_counts_the_rest(both,
                                                                           monkeypatch):
    import pandas as pd
    rng = np.random.default_rng(0)
    names = [f"w[{i}]" for i in range(40)]
    frame = pd.DataFrame({"prior": rng.uniform(0, 0.1, 40), "likelihood": rng.uniform(0, 0.2, 40),
                          "diagnosis": "ok"}, index=pd.Index(names, name="quantity"))
    monkeypatch.setattr(both, "sensitivity", lambda var_names=None: frame)
    (ax,) = plots.plot(both, "sensitivity", top=10).axes
    largest = frame[["prior", "likelihood"]].max(axis=1)
    expected = [n for n in names if n in set(largest.nlargest(10).index)]  # in their order
    assert [t.get_text() for t in ax.get_yticklabels()] == expected
    assert "10 most sensitive of 40 quantities (30 more" in ax.figure.get_suptitle()


def test_tipping_points_are_where_the_estimate_leaves_the_mar_interval():
    rng = np.random.default_rng(3)
    scores = rng.random(600)
    labels = (rng.random(600) < scores).astype(float)
    labels[(rng.random(600) < 0.5) & (labels == 1)] = np.nan  # positives missing more often
    ev = be.pemi(scores, labels, metrics=["precision", "recall"], mnar=(0.0, 2.0),
                 random_seed=0)
    ds = ev.tree["delta_sensitivity"].to_dataset()
    tips = plots.tipping_points(ev)
    for metric, t in tips.iterrows():
        m = ds.sel(metric=metric)
        assert (t["mar_lower"], t["mar_upper"]) == (float(m["lower"].sel(delta=0)),
                                                    float(m["upper"].sel(delta=0)))
        for side in ("below", "above"):
            if np.isfinite(t[side]):  # the interpolated estimate there is on the MAR interval
                at = np.interp(t[side], m["delta"].values, m["mean"].values)
                assert min(abs(at - t["mar_lower"]), abs(at - t["mar_upper"])) < 1e-12
    assert np.isfinite(tips[["below", "above"]].to_numpy()).any()
    fig = plots.plot(ev, "tipping")
    for ax, (metric, t) in zip(fig.axes, tips.iterrows(), strict=True):
        marked = sorted(line.get_xdata()[0] for line in lines(ax, "tipping point"))
        assert marked == sorted(v for v in (t["below"], t["above"]) if np.isfinite(v))
        assert ax.get_title().startswith(metric)
    no_prior = be.pemi(scores, labels, metrics=["precision"])
    assert "tipping" not in plots.available(no_prior)
    with pytest.raises(ValueError, match=r"mnar=\(mean, sd\)"):
        plots.tipping_points(no_prior)


def test_chunks_of_k_classes_get_a_panel_per_class_where_the_metric_has_one():
    rng = np.random.default_rng(0)
    ref = rng.dirichlet([2, 2, 2], 900)
    labels = np.array([rng.choice(3, p=r) for r in ref])
    ev = be.cbpe(rng.dirichlet([2, 2, 2], 400), reference=(ref, labels), chunk_size=200,
                 metrics=["accuracy", "recall"], random_seed=0)
    assert "chunks" in plots.available(ev)
    fig = plots.plot(ev, "chunks")
    mean = ev.closed_form["mean"].drop_sel(chunk="all")
    expected = ["accuracy"] + [f"{k}: recall" for k in mean["class"].values]
    assert np.isfinite(mean.sel(metric="recall")).all()
    assert np.isfinite(mean.sel(metric="accuracy")).sum() == mean.sizes["chunk"]
    assert [ax.get_title(loc="left") for ax in fig.axes] == expected
    assert len(expected) == 1 + 3  # accuracy once, recall per class
    # with every metric, the first twelve coordinates hold no law (other classes' accuracy is
    # NaN, ...): the panels are those that do
    full = be.cbpe(rng.dirichlet([2, 2, 2], 400), reference=(ref, labels), chunk_size=200,
                   random_seed=0)
    assert "distribution" in plots.available(full)
    assert len(plots.plot(full, "distribution").axes) == plots.MAX_PANELS


def test_chunks_show_the_reference_period_before_the_analysis_and_no_date_of_its_own():
    rng = np.random.default_rng(0)
    ref = rng.beta(2, 2, 3000)
    labels = (rng.random(3000) < ref).astype(int)
    weeks = np.repeat(pd.date_range("2024-01-01", periods=6, freq="W-MON").astype(str), 500)
    ev = be.cbpe(rng.beta(2.5, 2, 3000), reference=(ref, labels), chunks=weeks,
                 metrics=["accuracy"], random_seed=0)
    realized = ev.tree["data"].to_dataset()["reference_realized"]
    assert realized.sizes == {"reference_chunk": 6, "metric": 1}
    ax = plots.plot(ev, "chunks").axes[0]
    (line,) = lines(ax, "realized (reference)")
    np.testing.assert_allclose(line.get_ydata(), realized.sel(metric="accuracy").values)
    first = matplotlib.dates.date2num(np.datetime64("2024-01-01"))
    assert (matplotlib.dates.date2num(line.get_xdata()) < first).all()
    assert min(ax.get_xticks()) >= first
