"""CBPE's reference period in the results: the reference chunks, estimated and realized."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import bayeval as be
from bayeval import plots
from bayeval.methods.cbpe.api import ALERT_SD
from bayeval.methods.cbpe.result import CBPEEvaluation

METRICS = ["accuracy", "precision", "recall", "f1", "roc_auc"]
VARS = ["mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin", "p_alert"]


@pytest.fixture(scope="module")
def design():
    """An over-confident model (its scores need the default calibration) with a reference of
    2,400 labelled rows in chunks of 400 and 1,200 analysis rows."""
    rng = np.random.default_rng(7)
    p_ref, p_new = rng.beta(2, 2, 2400), rng.beta(2.4, 2, 1200)
    labels = (rng.random(2400) < p_ref).astype(int)
    return p_ref ** 0.7, labels, p_new ** 0.7


@pytest.fixture(scope="module")
def ev(design):
    scores, labels, new = design
    return be.cbpe(new, reference=(scores, labels), chunk_size=400, metrics=METRICS,
                   random_seed=3)


def hand_metrics(y, s, threshold=0.5):
    pred = s >= threshold
    tp, fp = np.sum(pred & (y == 1)), np.sum(pred & (y == 0))
    fn, tn = np.sum(~pred & (y == 1)), np.sum(~pred & (y == 0))
    pos, neg = s[y == 1], s[y == 0]
    auc = (np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :]))
    return {"accuracy": (tp + tn) / y.size, "precision": tp / (tp + fp), "recall": tp / (tp + fn),
            "f1": 2 * tp / (2 * tp + fp + fn), "roc_auc": auc}


def test_reference_chunks_realized_equal_the_metrics_by_hand(ev, design):
    scores, labels, _ = design
    ref = ev.reference
    assert isinstance(ev, CBPEEvaluation)
    assert ref["chunk"].values.tolist() == [f"[{i}:{i + 399}]" for i in range(0, 2400, 400)]
    assert set(ref["period"].values) == {"reference"}
    for k, chunk in enumerate(ref["chunk"].values):
        rows = slice(400 * k, 400 * (k + 1))
        by_hand = hand_metrics(labels[rows], scores[rows])
        for metric in METRICS:
            assert ref["realized"].sel(chunk=chunk, metric=metric).item() == pytest.approx(
                by_hand[metric], abs=1e-12)
    assert (ref["n_labelled"] == 400).all()
    # one label flipped: the hand computation no longer matches
    flipped = labels[:400].copy()
    flipped[0] = 1 - flipped[0]
    assert ref["realized"].sel(chunk="[0:399]", metric="accuracy").item() != pytest.approx(
        hand_metrics(flipped, scores[:400])["accuracy"], abs=1e-12)


def test_reference_chunks_estimated_as_analysis_data(ev, design):
    """Each reference chunk's estimate is what cbpe gives with its scores as the analysis
    (same reference, so the same calibration map and posterior draws)."""
    scores, labels, _ = design
    ref = ev.reference
    for k in (0, 3):
        rows = slice(400 * k, 400 * (k + 1))
        alone = be.cbpe(scores[rows], reference=(scores, labels), chunk_size=400,
                        metrics=METRICS, random_seed=3).closed_form.isel(chunk=0)
        mine = ref.isel(chunk=k)
        for var in VARS:
            np.testing.assert_allclose(mine[var].values, alone[var].values, rtol=0, atol=1e-12,
                                       err_msg=var)
    # a score moved in the chunk passed alone: its estimate differs
    moved = scores[:400].copy()
    moved[0] = 1 - moved[0]
    other = be.cbpe(moved, reference=(scores, labels), chunk_size=400, metrics=METRICS,
                    random_seed=3).closed_form.isel(chunk=0)
    assert np.abs(other["mean"].values - ref["mean"].isel(chunk=0).values).max() > 1e-6


@pytest.mark.parametrize("options", [{"noise": "beta", "kappa": 200.0, "calibration": "none"},
                                     {"noise": "binning", "calibration": "none"}])
def test_reference_chunks_estimated_with_a_noise_model(design, options):
    scores, labels, new = design
    metrics = ["accuracy", "f1"]
    ev = be.cbpe(new, reference=(scores, labels), chunk_size=400, metrics=metrics,
                 random_seed=3, **options)
    alone = be.cbpe(scores[800:1200], reference=(scores, labels), chunk_size=400,
                    metrics=metrics, random_seed=3, **options).closed_form.isel(chunk=0)
    for var in VARS:
        np.testing.assert_allclose(ev.reference.isel(chunk=2)[var].values, alone[var].values,
                                   rtol=0, atol=1e-12, err_msg=var)


def test_thresholds_come_from_exactly_the_reference_chunks(ev):
    ref, cf = ev.reference, ev.closed_form
    realized = ref["realized"]
    data = ev.tree["data"].to_dataset()["reference_realized"]
    np.testing.assert_array_equal(data.values, realized.values)  # the same chunks, once
    centre, spread = realized.mean("chunk"), realized.std("chunk")
    lower = np.maximum(centre - ALERT_SD * spread, 0.0)
    upper = np.minimum(centre + ALERT_SD * spread, 1.0)
    for table in (cf.isel(chunk=0), ref.isel(chunk=-1)):
        np.testing.assert_allclose(table["lower_threshold"].values, lower.values, atol=1e-15)
        np.testing.assert_allclose(table["upper_threshold"].values, upper.values, atol=1e-15)
    # a chunk left out would move them
    assert not np.allclose(realized.isel(chunk=slice(1, None)).mean("chunk"), centre,
                           atol=1e-9)
    alert = (ref["realized"] < ref["lower_threshold"]) | (ref["realized"] > ref["upper_threshold"])
    np.testing.assert_array_equal(ref["alert_realized"].values, alert.values)


def test_summary_periods(ev):
    analysis = ev.summary()
    assert analysis.index.names == ["chunk", "metric"]
    assert analysis.equals(ev.summary(period="analysis"))
    assert "realized" not in analysis  # no analysis labels: the default table is unchanged
    reference = ev.summary(period="reference")
    assert reference.index.names == ["chunk", "metric"] and len(reference) == 6 * len(METRICS)
    assert "reference period" in reference.attrs["caption"]
    both = ev.summary(period="all")
    assert both.index.names == ["period", "chunk", "metric"]
    assert both.index.get_level_values("period").unique().tolist() == ["reference", "analysis"]
    for period, alone in (("reference", reference), ("analysis", analysis)):
        np.testing.assert_array_equal(both.xs(period, level="period")["mean"].values,
                                      alone["mean"].values)


def test_saved_and_loaded_with_its_reference(ev, tmp_path):
    back = be.load(ev.to_netcdf(tmp_path / "ev.nc"))
    assert isinstance(back, CBPEEvaluation) and back == ev
    assert back.summary(period="reference").equals(ev.summary(period="reference"))


def test_the_chunks_plot_shows_the_reference_chunks(ev):
    fig = plots.plot(ev, "chunks", coords={"metric": ["accuracy", "f1"]})
    ref = ev.reference
    for ax in fig.axes:
        metric = ax.get_title(loc="left")
        (estimate,) = [line for line in ax.lines if line.get_label() == "estimate (reference)"]
        (realized,) = [line for line in ax.lines if line.get_label() == "realized (reference)"]
        np.testing.assert_array_equal(estimate.get_ydata(), ref["mean"].sel(metric=metric))
        np.testing.assert_array_equal(realized.get_ydata(), ref["realized"].sel(metric=metric))
        (analysis,) = [line for line in ax.lines if line.get_label() == "estimate"]
        (separator,) = [line for line in ax.lines if line.get_label() == "reference | analysis"]
        # before the first analysis chunk, and the separator between them
        assert realized.get_xdata().max() < separator.get_xdata()[0] < analysis.get_xdata()[0]
    matplotlib.pyplot.close(fig)


def test_bad_input(ev, design):
    with pytest.raises(ValueError, match="period"):
        ev.summary(period="references")
    with pytest.raises(ValueError, match="source='closed_form'"):
        ev.summary(source="draws", period="reference")
    without = be.cbpe(design[2], chunk_size=400, metrics=["accuracy"])
    assert without.reference is None
    with pytest.raises(ValueError, match="no reference was given"):
        without.summary(period="all")
