"""The paths that work from the labelled rows' counts and the missing rows' p give the numbers
of the paths over every row they replace: the complete-case estimate and the definitional
bounds, the split of the completed rows, and the exact law of one MNAR node (kept lazy)
against its merge."""

import numpy as np
import pytest

from bayeval.confusion import LabelRows
from bayeval.methods.pemi.api import ALL_METRICS, _data, pemi
from bayeval.methods.pemi.fast import (
    Options,
    Rows,
    exact,
    law,
    merge_laws,
    shift,
)
from bayeval.methods.pemi.protocol import complete_case, definitional_bounds

CM = tuple(m for m in ALL_METRICS if m != "roc_auc")


def rows_of(n, missing, seed, one_class=False):
    rng = np.random.default_rng(seed)
    s = np.round(rng.random(n), 1)
    y = (rng.random(n) < s).astype(float)
    if one_class:
        y[:] = 1.0
    y[rng.random(n) < missing] = np.nan
    return Rows(s, (s >= 0.5).astype(np.int8), y)


@pytest.mark.parametrize("zero_division", [0.0, 1.0, np.nan])
@pytest.mark.parametrize(("n", "missing", "one_class"), [(300, 0.3, False), (40, 0.95, False),
                                                         (40, 0.0, False), (20, 1.0, False),
                                                         (30, 0.5, True)])
def test_data_from_counts_equals_the_protocol_functions(zero_division, n, missing, one_class):
    """Bitwise, with undefined metrics (one class known) and no or every label missing."""
    rows = rows_of(n, missing, 1, one_class)
    opts = Options(zero_division=zero_division, beta=2.0)
    data = _data(rows, tuple(ALL_METRICS), opts, "")
    args = (rows.scores, rows.labels, rows.y_pred, tuple(ALL_METRICS), opts)
    cc = complete_case(*args) if rows.m < rows.n else np.full(len(ALL_METRICS), np.nan)
    for name, expected in zip(("complete_case", "optimistic", "pessimistic"),
                              (cc, *definitional_bounds(*args)), strict=True):
        np.testing.assert_array_equal(data[name].values, expected)


@pytest.mark.parametrize("missing", [0.0, 0.4, 1.0])
def test_label_rows_equal_the_split_of_the_completed_rows(missing):
    rows = rows_of(200, missing, 2)
    p = np.random.default_rng(3).random(rows.n)
    old = LabelRows.split(rows.y_pred == 1, rows.completed(p), rows.labels)
    new = rows.split(p[rows.order])
    for field in ("n_pos", "n_neg", "tp_known", "fn_known", "tn_known", "p_pos", "p_neg"):
        np.testing.assert_array_equal(getattr(new, field), getattr(old, field))


@pytest.mark.parametrize(("zero_division", "metrics"), [(0.0, CM), (np.nan, CM)])
def test_one_node_law_is_the_lazy_law_of_its_merge(zero_division, metrics):
    """Without a prior on delta the law is not merged (merging lists the support of the
    TP x FN grid); mean, sd, interval and its mass equal the merged law's."""
    rows = rows_of(3000, 0.4, 4)
    p = np.clip(rows.scores + 0.05, 0.0, 1.0)
    opts = Options(zero_division=zero_division)
    laws = exact(rows, p, metrics, delta=(0.3, 0.0), opts=opts)
    assert laws["recall"].lazy
    for metric in metrics:  # as before: the whole p shifted, the one law merged
        merged = merge_laws(metric, [law(rows, shift(p, 0.3), metric, opts)], np.ones(1),
                            zero_division)
        one = laws[metric]
        ends = one.interval_ends(0.95, "eti")
        assert ends == merged.interval_ends(0.95, "eti")
        np.testing.assert_allclose([one.mean, one.sd, one.mass(*ends), one.p_undefined],
                                   [merged.mean, merged.sd, merged.mass(*ends),
                                    merged.p_undefined], rtol=1e-12)
        np.testing.assert_array_equal(one.values, merged.values)
        np.testing.assert_allclose(one.probs, merged.probs, rtol=1e-12, atol=1e-300)



@pytest.mark.parametrize("mnar", [None, 0.3])
def test_plug_in_exact_law_equals_the_engine_law_of_the_shifted_p(mnar):
    """Given p and one MNAR node, pemi's exact PMFs are those of exact() at the shifted p (the
    unshifted p itself without a shift, as with the map's posterior)."""
    rows = rows_of(500, 0.4, 5)
    p = np.clip(rows.scores + 0.05, 0.0, 1.0)
    ev = pemi(rows.scores, rows.labels, p=p, mnar=mnar, method="exact", metrics=CM)
    cf = ev.tree["closed_form"].to_dataset()
    laws = exact(rows, p, CM, delta=(mnar or 0.0, 0.0), opts=Options())
    for j, metric in enumerate(CM):
        k = laws[metric].values.size
        np.testing.assert_array_equal(cf["pmf_value"].values[j, :k], laws[metric].values)
        np.testing.assert_allclose(cf["pmf_prob"].values[j, :k], laws[metric].probs,
                                   rtol=1e-12, atol=1e-300)
