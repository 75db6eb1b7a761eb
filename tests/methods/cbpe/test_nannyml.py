"""CBPE against NannyML where NannyML is installed (the ``bench`` extra): the same alert
thresholds (mean +- 3 sd of the reference chunks' realized metrics) and alerts on weekly chunks of
a drifting DataFrame, and NannyML's point estimates of the confusion cells, business value and
average precision to 1e-9. Without NannyML the thresholds are checked against its rule written
out (the outputs against exact enumeration: test_outputs.py)."""

import numpy as np
import pytest

from bayeval.methods.cbpe import cbpe
from benchmarks.bench_cbpe import (
    ALERT_WEEKS,
    SEED,
    alerts_vs_nannyml,
    outputs_vs_nannyml,
    weekly,
)


def test_alerts_equal_nannyml_s():
    pytest.importorskip("nannyml")
    result = alerts_vs_nannyml()
    assert result["ok"], result["note"]


def test_outputs_equal_nannyml_s_point_estimates():
    pytest.importorskip("nannyml")
    result = outputs_vs_nannyml()
    assert result["ok"], result["note"]


def test_thresholds_are_nannyml_s_rule_on_the_reference_weeks():
    rng = np.random.default_rng(SEED)
    ref = weekly("2024-01-01", np.zeros(ALERT_WEEKS), rng)
    analysis = weekly("2024-03-25", np.r_[np.zeros(6), np.linspace(0.5, 3, 6)], rng)
    ev = cbpe("score", data=analysis, y_pred="y_pred", chunks="ts", chunk_period="W",
              reference=ref, labels="y_true", metrics=["accuracy", "f1"], random_seed=0)
    weeks = ref["ts"].dt.to_period("W")
    for metric in ("accuracy", "f1"):
        realized = []
        for _, week in ref.groupby(weeks):
            tp = ((week.y_pred == 1) & (week.y_true == 1)).sum()
            if metric == "accuracy":
                realized.append((week.y_pred == week.y_true).mean())
            else:
                realized.append(2 * tp / ((week.y_pred == 1).sum() + (week.y_true == 1).sum()))
        centre, spread = np.nanmean(realized), np.nanstd(realized)  # NannyML: np.nanstd, 3 sd
        cf = ev.closed_form.sel(metric=metric)
        assert float(cf["lower_threshold"][0]) == pytest.approx(max(centre - 3 * spread, 0))
        assert float(cf["upper_threshold"][0]) == pytest.approx(min(centre + 3 * spread, 1))
        alert = (cf["mean"] < cf["lower_threshold"]) | (cf["mean"] > cf["upper_threshold"])
        np.testing.assert_array_equal(cf["alert"].values, alert.values)
