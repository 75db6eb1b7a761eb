"""MVU's own figure: the hard confidence's histogram and its reliability curve, registered as
the default plot kind of MVU evaluations."""

import numpy as np

from bayeval import plots
from bayeval.methods.mvu import mvu, reliability


def lines(ax, label):
    return [line for line in ax.lines if line.get_label() == label]


def test_confidence_shows_the_histogram_and_the_reliability_of_c_hard(data):
    X = data.X[:40].copy()
    X[np.random.default_rng(0).random(X.shape) < 0.3] = np.nan
    ev = mvu(data.classifier.predict_proba, X, train=data.X[40:], random_seed=0)
    assert plots.default_kind(ev) == "confidence"
    cf = ev.closed_form
    left, right = plots.plot(ev).axes
    heights = [p.get_height() for p in left.patches]
    assert sum(heights) == 40
    edges = np.linspace(0, 1, 21)
    np.testing.assert_array_equal(heights, np.histogram(cf["c_hard"].values, edges)[0])
    table = reliability(cf["c_hard"].values, cf["y_hard"].values, cf["y_soft"].values)
    (curve,) = lines(right, "share with y_hard = y_soft")
    np.testing.assert_allclose(curve.get_xdata(), table["confidence"])
    np.testing.assert_allclose(curve.get_ydata(), table["consistency"])
    assert [t.get_text() for t in right.texts] == [str(n) for n in table["count"]]
