"""ROC-AUC's law in CBPE: the exact law of short windows against every labelling, the switch to
the normal law, ``method="both"``'s check on the windows where the normal law failed it, and the
partitioned path's equality."""

import itertools
import warnings

import numpy as np
import pytest

from bayeval.calibration import make_calibrator
from bayeval.calibration_map import map_posterior
from bayeval.confusion import MetricDistribution
from bayeval.methods.cbpe.api import cbpe
from bayeval.methods.cbpe.auc import (
    AUC_EXACT_MAP_ROWS,
    AUC_EXACT_ROWS,
    auc_cells,
    exact_auc_law,
    window_auc_law,
)
from bayeval.methods.cbpe.fast import NormalLaw, Window

SEED = 20261125


def enumerated_law(s, p, zero_division=0.0):
    """ROC-AUC over every labelling, Y_i ~ Bernoulli(p_i): {value: probability}, pairs counted
    directly (a tie 1/2); one class gives ``zero_division``."""
    law = {}
    for y in itertools.product((0, 1), repeat=s.size):
        y = np.array(y, bool)
        weight = float(np.prod(np.where(y, p, 1.0 - p)))
        pos, neg = s[y], s[~y]
        if pos.size and neg.size:
            value = (((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum())
                     / (pos.size * neg.size))
        else:
            value = zero_division
        law[float(value)] = law.get(float(value), 0.0) + weight
    return law


def as_dict(d: MetricDistribution):
    return dict(zip(d.values.tolist(), d.probs.tolist(), strict=True))


def assert_same_law(got: dict, want: dict, tol=1e-12):
    for value in set(got) | set(want):
        assert abs(got.get(value, 0.0) - want.get(value, 0.0)) <= tol, (value, got, want)


WINDOWS = {
    "two rows": (np.array([0.3, 0.7]), np.array([0.3, 0.8])),
    "all tied": (np.full(5, 0.5), np.array([0.1, 0.5, 0.5, 0.9, 0.2])),
    "tie groups": (np.array([0.1, 0.1, 0.4, 0.4, 0.4, 0.8, 0.9, 0.9]),
                   np.array([0.2, 0.3, 0.5, 0.1, 0.7, 0.6, 0.9, 0.95])),
    "0 and 1": (np.array([0.0, 0.0, 0.2, 0.6, 1.0, 1.0]),
                np.array([0.0, 0.0, 0.2, 0.6, 1.0, 1.0])),
    "near 1": (np.full(4, 1 - 1e-9), np.full(4, 1 - 1e-9)),
    "not monotone": (np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]),
                     np.array([0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6])),
}


@pytest.mark.parametrize("zero_division", [0.0, 1.0])
@pytest.mark.parametrize("name", list(WINDOWS))
def test_exact_law_equals_every_labelling(name, zero_division):
    s, p = WINDOWS[name]
    got = exact_auc_law(s, p, zero_division)
    assert_same_law(as_dict(got), enumerated_law(s, p, zero_division))
    single = np.prod(p) + np.prod(1 - p)
    assert abs(got.p_undefined - single) < 1e-12


def test_exact_law_without_zero_division_is_conditioned_on_both_classes():
    s, p = WINDOWS["tie groups"]
    want = enumerated_law(s, p, np.nan)
    undefined = sum(w for v, w in want.items() if np.isnan(v))
    want = {v: w / (1 - undefined) for v, w in want.items() if not np.isnan(v)}
    assert_same_law(as_dict(exact_auc_law(s, p, np.nan)), want)


def test_exact_law_mixed_over_draws_is_the_mean_of_their_laws():
    rng = np.random.default_rng(SEED)
    s = np.sort(rng.random(6).round(1))
    draws = rng.random((3, 6))
    want = {}
    for row in draws:
        for value, weight in enumerated_law(s, row).items():
            want[value] = want.get(value, 0.0) + weight / 3
    values, probs = auc_cells(s, draws)
    got = as_dict(MetricDistribution.from_cells("roc_auc", values, probs, 0.0))
    assert_same_law(got, want)


def test_exact_law_up_to_the_limit_and_the_normal_law_beyond():
    """At the limit (64 rows, tie groups) the law sums to 1 on [0, 1] with the exact probability
    of one class; one more row gets the normal law."""
    rng = np.random.default_rng(SEED)
    s = np.sort(rng.random(AUC_EXACT_ROWS).round(1))
    p = rng.random(AUC_EXACT_ROWS)
    values, probs = auc_cells(s, p)
    assert abs(probs.sum() - 1) < 1e-12 and np.nanmin(values) >= 0 and np.nanmax(values) <= 1
    assert abs(probs[np.isnan(values)].sum() - (np.prod(p) + np.prod(1 - p))) < 1e-15
    exact, _ = window_auc_law(Window(s, p, s >= 0.5), 0.0)
    longer = np.r_[s, 1.0]
    normal, _ = window_auc_law(Window(longer, np.r_[p, 0.5], longer >= 0.5), 0.0)
    assert isinstance(exact, MetricDistribution) and isinstance(normal, NormalLaw)


def test_the_map_draws_shorten_the_exact_windows():
    rng = np.random.default_rng(SEED)
    ref = rng.random(300)
    y = rng.random(300) < ref
    post = map_posterior(make_calibrator("platt", 0.5).fit(ref, y), ref, y, random_seed=0)
    for n, exact in ((AUC_EXACT_MAP_ROWS, True), (AUC_EXACT_MAP_ROWS + 1, False)):
        s = np.sort(rng.random(n))
        w = Window(s, post.plugin.predict(s), s >= 0.5)
        law, _ = window_auc_law(w, 0.0, post, post.sums(*w))
        assert isinstance(law, MetricDistribution) is exact
    s = np.sort(rng.random(5))  # exact: the mean of the draws' enumerated laws
    law, _ = window_auc_law(Window(s, post.plugin.predict(s), s >= 0.5), 0.0, post)
    want = {}
    for row in post.predict(s):
        for value, weight in enumerated_law(s, row).items():
            want[value] = want.get(value, 0.0) + weight / post.draws
    assert_same_law(as_dict(law), want)


def test_both_passes_its_check_on_tiny_windows():
    """Two rows, tied scores, extreme scores: the normal law's 95 % interval held all the draws
    (interval_mass 1.0 against 0.95) and its variance missed by half; the exact law passes."""
    scores = np.r_[0.3, 0.7, 0.5, 0.5, 0.5, 0.2, 1e-9, 1 - 1e-9, 0.5, 0.999]
    keys = np.repeat(["two", "tied", "extreme"], [2, 4, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = cbpe(scores, chunks=keys, metrics=["roc_auc"], method="both", random_seed=SEED)
    table = ev.check()
    assert table["passed"].all(), table
    assert ev.closed_form["exact"].values.all()


def test_partitioned_path_gives_the_same_exact_laws():
    """Short chunks (and a short whole period) carry their rows through the reduction: the
    dask path's laws equal the in-memory ones, PMFs included."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    from bayeval import scale

    rng = np.random.default_rng(SEED)
    scores = rng.random(40).round(1)
    scores[:3] = [0.0, 1.0, 1.0]
    args = dict(n_chunks=5, metrics=["roc_auc", "f1"])
    mem = cbpe(scores, **args).closed_form
    with dask.config.set(scheduler="synchronous"):
        part = scale.cbpe(da.from_array(scores, chunks=7), **args).closed_form
    assert mem["exact"].values.all() and part["exact"].values.all()
    for name in ("mean", "sd", "lower", "upper", "interval_mass", "p_undefined", "plugin"):
        np.testing.assert_allclose(part[name], mem[name], rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(part["pmf_prob"].fillna(-1), mem["pmf_prob"].fillna(-1),
                               rtol=0, atol=1e-12)


def test_partitioned_path_mixes_short_chunks_over_the_map_draws():
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    from bayeval import scale

    rng = np.random.default_rng(SEED)
    ref = rng.random(200)
    reference = (ref, (rng.random(200) < ref).astype(int))
    scores = rng.random(30)
    args = dict(chunk_size=10, metrics=["roc_auc"], reference=reference, random_seed=1)
    mem = cbpe(scores, **args).closed_form
    with dask.config.set(scheduler="synchronous"):
        part = scale.cbpe(da.from_array(scores, chunks=8), **args).closed_form
    assert mem["exact"].values.tolist() == [[True]] * 3 + [[False]]  # the whole period: 30 rows
    np.testing.assert_array_equal(part["exact"], mem["exact"])
    for name in ("mean", "sd", "lower", "upper", "interval_mass"):
        np.testing.assert_allclose(part[name], mem[name], rtol=0, atol=1e-12, err_msg=name)
