"""MVUEvaluation: the decision rule with its expected costs, the summary's columns and
intervals, and the round trip through netCDF."""

import numpy as np
import pytest
from scipy import stats

from bayeval.evaluation import load
from bayeval.methods.mvu import MVUEvaluation, mvu
from tests.methods.mvu.synthetic import CLF


def test_decide_collects_below_the_threshold_with_expected_costs(small):
    train, x = small
    ev = mvu(CLF, x, train=train)
    c = ev.closed_form["c_hard"].values
    d = ev.decide(0.95, collect_cost=0.02, change_cost=2.0)
    np.testing.assert_array_equal(d["collect"], c < 0.95)
    np.testing.assert_allclose(d["expected_cost"], np.where(c < 0.95, 0.02, 2 * (1 - c)))
    by_cost = ev.decide(collect_cost=0.02, change_cost=2.0)
    np.testing.assert_array_equal(by_cost["collect"], 2 * (1 - c) > 0.02)
    with pytest.raises(ValueError, match="threshold"):
        ev.decide()


def test_summary_and_netcdf_round_trip(small, tmp_path):
    train, x = small
    ev = mvu(CLF, x, train=train, imputer="mean", heuristic="scale_prob", ci_kind="hdi")
    s = ev.summary()
    assert list(s.columns[:4]) == ["mean", "sd", "lower", "upper"]
    assert {"y_hard", "c_hard", "y_soft", "c_soft", "n_missing"} <= set(s.columns)
    assert s.index.name == "instance" and "hdi" in s.caption
    alpha = ev.closed_form["alpha"].values[:4]
    law = stats.beta(alpha[np.arange(4), s["y_hard"][:4]],
                     alpha.sum(1) - alpha[np.arange(4), s["y_hard"][:4]])
    np.testing.assert_allclose(law.cdf(s["upper"][:4]) - law.cdf(s["lower"][:4]), 0.95,
                               atol=1e-8)
    path = tmp_path / "mvu.nc"
    ev.to_netcdf(path)
    back = MVUEvaluation(load(path).tree)
    assert back.equals(ev) and back.summary().equals(s)
