"""MVU calibration: the reliability table, MVCE and its zero-variance identity, post-hoc scaling
of the Dirichlet concentration."""

import numpy as np
import pytest

from bayeval.methods.mvu.calibration import consistency, fit_scale, mvce, reliability


def test_mvce_binning_rule_and_zero_variance_identity():
    c = np.array([1.0, 0.95, 0.999, 0.5, 0.55, 0.649])
    table = reliability(c, [1, 1, 0, 0, 1, 1], [1, 1, 1, 0, 0, 1])
    assert table.index.tolist() == [5, 6, 9]  # floor(c * 10), c = 1 in the last bin
    assert table.loc[9, "count"] == 3
    y_part, y_full = np.array([0, 1, 1, 2, 2]), np.array([0, 1, 2, 2, 0])
    assert mvce(np.ones(5), y_part, y_full) == pytest.approx(1 - consistency(y_part, y_full),
                                                               abs=1e-15)
    expected = (3 * abs(2 / 3 - c[[0, 1, 2]].mean()) + 2 * abs(0.5 - c[[3, 4]].mean())
                + abs(1 - 0.649)) / 6
    assert mvce(c, [1, 1, 0, 0, 1, 1], [1, 1, 1, 0, 0, 1]) == pytest.approx(expected, abs=1e-15)


def test_scale_calibration_finds_the_true_concentration():
    rng = np.random.default_rng(5)
    mu = rng.dirichlet([2.0, 2.0, 2.0], size=3000)
    truth = np.array([rng.dirichlet(4 * m) for m in mu])
    lam, table = fit_scale(mu, truth.argmax(1), grid=(1.0, 2.0, 4.0, 8.0, 16.0))
    assert lam == 4.0
    assert table["mvce"].idxmin() == 4.0


def test_scale_at_the_grid_edge_warns():
    rng = np.random.default_rng(6)
    mu = rng.dirichlet([2.0, 2.0], size=500)
    with pytest.warns(UserWarning, match="end of the grid"):
        fit_scale(mu, mu.argmax(1), grid=(0.5, 1.0))  # the truth is a point mass
