"""Fuzzing every public entry function: random valid input gives finite results inside the
metrics' ranges; random invalid input gives a ValueError or TypeError naming the argument.

The budget is :mod:`tests.fuzz.budget`'s (a few examples here, many under ``make fuzz``).
Failing examples that hypothesis shrank are kept as regression tests in the tests of their
module (e.g. ``tests/methods/cbpe/test_api.py``'s extreme scores).
"""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import bayeval as be
from bayeval import scale
from bayeval.methods.cbpe.api import METRICS as CBPE_METRICS
from bayeval.metrics import REGISTRY
from tests.fuzz.budget import budget

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# scores: uniform, and the extremes that broke the moments (all near 0 or 1, subnormal, ties)
EXTREMES = [0.0, 1.0, 0.5, 1e-300, 1e-200, 1e-170, 1e-16, 1e-9, 1 - 1e-9, 1 - 1e-16]
SCORE = st.one_of(st.floats(0, 1), st.sampled_from(EXTREMES))
SLACK = 1e-9


def scores(min_size=1, max_size=40):
    return st.lists(SCORE, min_size=min_size, max_size=max_size).map(np.array)


def assert_in_ranges(ev, ranges=None):
    """Every row of the summary: finite mean, sd >= 0, lower <= upper, all inside the range
    of its metric (``ranges``: one (low, high) for every row instead)."""
    frame = ev.summary()
    metric = (frame.index.get_level_values("metric") if "metric" in frame.index.names
              else None)
    for i, (_, row) in enumerate(frame.iterrows()):
        low, high = ranges or (REGISTRY[metric[i]].low, REGISTRY[metric[i]].high)
        assert np.isfinite(row["mean"]), row
        assert low - SLACK <= row["mean"] <= high + SLACK, row
        assert row["sd"] >= 0, row
        assert low - SLACK <= row["lower"] <= row["upper"] + SLACK <= high + 2 * SLACK, row


# ----------------------------------------------------------------------------- valid input
@budget(15)
@given(data=st.data(), threshold=st.floats(0, 1), prior=st.tuples(
    st.floats(0.01, 50), st.floats(0.01, 50)))
def test_labelled_valid(data, threshold, prior):
    s = data.draw(scores())
    labels = data.draw(st.lists(st.integers(0, 1), min_size=s.size, max_size=s.size))
    assert_in_ranges(be.labelled(s, labels, threshold=threshold, prior=prior))


@budget(15)
@given(data=st.data(), zero_division=st.sampled_from([0.0, 1.0]),
       metrics=st.lists(st.sampled_from(sorted(CBPE_METRICS)), min_size=1,
                        max_size=4, unique=True))
def test_cbpe_valid(data, zero_division, metrics):
    s = data.draw(scores())
    size = data.draw(st.none() | st.integers(1, s.size))
    ev = be.cbpe(s, chunk_size=size, metrics=metrics, zero_division=zero_division)
    assert_in_ranges(ev)
    if s.size <= 12:  # the partitioned path gives the same numbers
        other = scale.cbpe(s, chunk_size=size, metrics=metrics, zero_division=zero_division)
        np.testing.assert_allclose(other.summary()["mean"], ev.summary()["mean"], atol=1e-9)


@budget(10)
@given(s=scores(1, 7), zero_division=st.sampled_from([0.0, 1.0]))
def test_cbpe_roc_auc_of_a_short_window_is_its_law_over_every_labelling(s, zero_division):
    """Windows of a few rows (ties, scores at and near 0 and 1): ROC-AUC's mean and sd are those
    of the 2^n labellings."""
    ev = be.cbpe(s, metrics=["roc_auc"], zero_division=zero_division)
    row = ev.closed_form.sel(chunk="all", metric="roc_auc")
    values, weights = [], []
    for y in itertools.product((False, True), repeat=s.size):
        y = np.array(y)
        weights.append(np.prod(np.where(y, s, 1.0 - s)))
        pos, neg = s[y], s[~y]
        values.append(((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum())
                      / (pos.size * neg.size) if pos.size and neg.size else zero_division)
    values, weights = np.array(values), np.array(weights)
    mean = weights @ values
    assert bool(row["exact"]) and abs(float(row["mean"]) - mean) < 1e-12
    assert abs(float(row["sd"]) - np.sqrt(max(weights @ (values - mean) ** 2, 0.0))) < 1e-7


@budget(6, long=100)
@given(data=st.data())
def test_cbpe_with_a_reference_valid(data):
    n = data.draw(st.integers(20, 60))
    ref = data.draw(scores(n, n))
    labels = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    assume(0 < labels.sum() < n)
    ev = be.cbpe(data.draw(scores(2, 30)), reference=(ref, labels), random_seed=0,
                 calibration_uncertainty=data.draw(st.booleans()))
    assert_in_ranges(ev)


@budget(12)
@given(data=st.data(), given_p=st.booleans())
def test_pemi_valid(data, given_p):
    s = data.draw(scores(2, 40))
    labels = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=s.size,
                                         max_size=s.size)))
    known = labels[~np.isnan(labels)]
    if not given_p:  # the calibration map is fitted on the labelled rows: both classes
        assume(known.size >= 4 and 0 < known.sum() < known.size)
    p = data.draw(scores(s.size, s.size)) if given_p else None
    assert_in_ranges(be.pemi(s, labels, p=p, random_seed=0,
                             calibration_uncertainty=data.draw(st.booleans())))


@budget(15)
@given(data=st.data(), method=st.sampled_from(["eif", "ppi_pp", "ppi_pp_unclipped", "ppi",
                                               "rogan_gladen", "classical", "naive", "all"]))
def test_judge_valid(data, method):
    n = data.draw(st.integers(2, 40))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    yhat = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    unlabeled = data.draw(st.lists(st.integers(0, 1), min_size=1, max_size=60))
    try:
        ev = be.judge(y, yhat, unlabeled, method=method)
    except ValueError as err:  # a judge constant on the items, or no better than chance
        assert "yhat" in str(err) or "y " in str(err), err
        return
    frame = ev.summary()
    finite = frame[np.isfinite(frame["mean"])]
    assert len(finite), frame
    # every reported estimate in [0, 1] (one outside is reported at its projection) and in its
    # own interval
    assert finite["mean"].between(-SLACK, 1 + SLACK).all(), frame
    assert finite["lower"].between(-SLACK, 1 + SLACK).all(), frame
    assert (finite["lower"] <= finite["mean"] + SLACK).all(), frame
    assert (finite["mean"] <= finite["upper"] + SLACK).all(), frame


@budget(15)
@given(data=st.data(), label_model=st.sampled_from(["majority_vote", "dawid_skene"]))
def test_bounds_valid(data, label_model):
    n, lfs = data.draw(st.integers(3, 40)), data.draw(st.integers(1, 4))
    y_pred = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    weak = np.array(data.draw(st.lists(st.lists(st.integers(-1, 1), min_size=lfs,
                                                max_size=lfs), min_size=n, max_size=n)))
    assume((weak >= 0).any(axis=1).all())  # every item has a vote
    assume(0 < y_pred.sum() < n)
    try:
        ev = be.bounds(y_pred, weak, label_model=label_model)
    except ValueError as err:  # a label model that cannot be fitted says so
        assert "weak_labels" in str(err) or "label_model" in str(err), err
        return
    frame = ev.summary()
    for col in [c for c in frame.columns if c in ("lower_bound", "upper_bound", "mean")]:
        values = frame[col][np.isfinite(frame[col])]
        assert values.between(-1 - SLACK, 1 + SLACK).all(), frame


@budget(15)
@given(data=st.data())
def test_mvu_valid(data):
    d = data.draw(st.integers(1, 3))
    rows = data.draw(st.lists(st.lists(st.one_of(st.floats(-3, 3), st.just(np.nan)),
                                       min_size=d, max_size=d), min_size=1, max_size=8))
    x = np.array(rows, dtype=float)
    weights = np.linspace(0.5, 1.5, d)
    train = np.random.default_rng(0).normal(size=(60, d))
    ev = be.mvu(lambda v: 1 / (1 + np.exp(-(v @ weights))), x, train=train)
    frame = ev.summary()
    for col in ("c_hard", "c_soft", "mean"):
        if col in frame:
            assert frame[col].between(-SLACK, 1 + SLACK).all(), frame


@budget(12)
@given(data=st.data())
def test_scale_functions_valid(data):
    s = data.draw(scores(2, 40))
    p = data.draw(scores(s.size, s.size))
    labels = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]),
                                         min_size=s.size, max_size=s.size)))
    _, pmf = scale.poisson_binomial(p)
    assert np.isclose(pmf.sum(), 1.0) and (pmf >= 0).all()
    y_pred = (s >= 0.5).astype(int)
    assume(np.isnan(labels).any())
    gauss = scale.pemi_gauss(y_pred, p, labels)
    finite = gauss["mean"].values[np.isfinite(gauss["mean"].values)]
    assert ((finite >= -1 - SLACK) & (finite <= 1 + SLACK)).all(), gauss
    known = labels[~np.isnan(labels)].astype(int)
    if known.size:  # the partitioned judge refuses what be.judge refuses, with its message
        counts = scale.judge_counts(known, known, y_pred)
        try:
            estimates = scale.judge_estimates(counts)
        except ValueError as err:
            assert "y " in str(err) or "yhat" in str(err), err
        else:
            mean = estimates["mean"].to_series().dropna()
            assert mean.between(-SLACK, 1 + SLACK).all(), estimates


@budget(15)
@given(data=st.data())
def test_map_evaluations_returns_every_outcome(data):
    """Groups that fail and groups that run: all of them are in the status."""
    groups = data.draw(st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.tuples(st.lists(st.integers(0, 1), min_size=1, max_size=6), st.booleans()),
        min_size=1, max_size=4))
    ev = scale.map_evaluations(  # a group whose predictions are one too many fails
        lambda g: be.labelled(labels=g[0], y_pred=np.ones(len(g[0]) + (not g[1]))), groups)
    status = scale.group_status(ev)
    assert list(status.index) == list(groups)
    failed = [k for k, (_, ok) in groups.items() if not ok]
    assert ev.meta["failed"] == failed
    if len(failed) < len(groups):
        assert_in_ranges(ev)


# --------------------------------------------------------------------------- invalid input
BAD_ARRAYS = [None, "scores", {"a": 1}, [], [[0.1, 0.2], [0.3, 0.4]], [np.nan], [np.inf],
              [0.5, -0.1], [1.5], ["a", "b"], [1 + 1j], 3.0]
BAD_NUMBERS = [None, "0.5", np.nan, np.inf, -1, 2, [0.5], {}, True]
GOOD = np.array([0.1, 0.4, 0.6, 0.9])
LABELS = np.array([0, 1, 0, 1])


def _raises_naming(call, *names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as err:
            call()
    assert any(n in str(err.value) for n in names), (names, err.value)


@budget(25, long=200)
@given(argument=st.sampled_from(["threshold", "ci_prob", "prior", "metrics", "method",
                                 "scores", "sample_kwargs"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS))
def test_labelled_invalid(argument, bad):
    kwargs = dict(scores=GOOD, labels=LABELS)
    if argument == "sample_kwargs":
        kwargs["method"] = "pymc"
        bad = {"draws": bad if bad != 2 else 1} if not isinstance(bad, dict) else {"chains": 0}
    if argument == "metrics" and bad is None:
        bad = "auc"  # None is the default
    if argument == "prior":
        assume(not (isinstance(bad, (int, float)) and np.isfinite(bad) and bad > 0))
        bad = (bad, 1) if not isinstance(bad, (list, dict)) else bad
    kwargs[argument] = bad
    _raises_naming(lambda: be.labelled(**kwargs), argument, "labels", "scores")


@budget(25, long=200)
@given(argument=st.sampled_from(["threshold", "ci_prob", "zero_division", "beta", "metrics",
                                 "chunk_size", "n_chunks", "alert_thresholds", "draws",
                                 "scores", "noise", "method", "reference"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS + [{"f1": (0.9, 0.1)}, (0.2,)]))
def test_cbpe_invalid(argument, bad):
    kwargs = dict(scores=GOOD)
    if argument == "draws":
        kwargs["method"] = "pymc"
    if argument in ("chunk_size", "n_chunks", "draws") and bad is None:
        bad = 0
    assume(not (argument in ("chunk_size", "n_chunks") and bad in (1, 2)))  # valid sizes
    assume(not (argument == "draws" and bad == 2))
    if argument in ("alert_thresholds", "metrics") and bad is None:
        bad = [0.1]
    assume(not (argument == "zero_division" and isinstance(bad, float) and np.isnan(bad)))
    assume(not (argument == "beta" and isinstance(bad, (int, float)) and not isinstance(
        bad, bool) and bad >= 0))  # a weight >= 0, inf included
    assume(not (argument == "reference" and bad is None))  # no reference: the default
    assume(not (argument == "scores" and bad in ([0.5], (0.2,))))  # one row
    assume(not (argument == "alert_thresholds" and bad == {}))  # no constant threshold
    kwargs[argument] = bad
    _raises_naming(lambda: be.cbpe(**kwargs), argument, "scores", "reference")


@budget(30, long=200)
@given(argument=st.sampled_from(["threshold", "ci_prob", "metrics", "p", "labels", "scores",
                                 "draws", "method", "calibration"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS))
def test_pemi_invalid(argument, bad):
    kwargs = dict(scores=GOOD, labels=np.array([0, 1, np.nan, 1]))
    if argument == "draws":
        kwargs["method"] = "impute"
        bad = 0 if bad is None else bad
    if argument == "p" and bad is None:
        bad = [2.0, 0.5, 0.5, 0.5]
    if argument == "metrics" and bad is None:
        bad = "auc"
    if argument == "draws" and isinstance(bad, int) and bad >= 2:
        bad = 1
    assume(not (argument == "calibration" and bad is None))
    kwargs[argument] = bad
    _raises_naming(lambda: be.pemi(**kwargs), argument, "scores", "labels")


@budget(30, long=200)
@given(argument=st.sampled_from(["y", "yhat", "yhat_unlabeled", "ci_prob", "method"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS + [[2, 0, 1, 1]]))
def test_judge_invalid(argument, bad):
    kwargs = dict(y=LABELS, yhat=LABELS, yhat_unlabeled=[0, 1, 1])
    judge_scores = argument in ("yhat", "yhat_unlabeled")  # ordinal and continuous accepted
    assume(not (judge_scores and isinstance(bad, (float, int)) and not isinstance(bad, bool)
                and np.isfinite(bad)))
    assume(not (judge_scores and bad in ([2, 0, 1, 1], [1.5], [0.5, -0.1], [0.5])))
    kwargs[argument] = bad
    _raises_naming(lambda: be.judge(**kwargs), argument, "y", "judge")


@budget(20, long=150)
@given(argument=st.sampled_from(["X", "draws", "ci_prob", "method", "imputer", "scale"]),
       bad=st.sampled_from(BAD_NUMBERS + BAD_ARRAYS))
def test_mvu_invalid(argument, bad):
    kwargs = dict(predict_proba=lambda v: 1 / (1 + np.exp(-v.sum(axis=1))),
                  X=np.array([[0.1, np.nan], [0.3, 0.2]]),
                  train=np.random.default_rng(0).normal(size=(30, 2)))
    assume(not (argument == "X" and np.ndim(bad) == 2 and np.isfinite(bad).all()))
    assume(not (argument in ("draws", "scale") and isinstance(bad, int) and bad >= 2))
    assume(not (argument == "scale" and isinstance(bad, float) and 0 < bad < np.inf))
    kwargs[argument] = bad
    _raises_naming(lambda: be.mvu(**kwargs), argument, "X", "train", "imputer")


@budget(10, long=200)
@given(data=st.data())
def test_nullable_dtypes_mark_missing_labels(data):
    s = data.draw(scores(4, 30))
    labels = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=s.size,
                                         max_size=s.size)))
    assume(np.isnan(labels).any() and (~np.isnan(labels)).any())
    plain = be.pemi(s, labels, p=s, random_seed=0).summary()
    nullable = be.pemi(pd.Series(s, dtype="Float64"), pd.Series(labels).astype("boolean"),
                       p=s, random_seed=0).summary()
    pd.testing.assert_frame_equal(plain, nullable)
