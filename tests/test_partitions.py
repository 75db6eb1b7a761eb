"""The shared plumbing of the partitioned paths, on dask's synchronous scheduler: aligned row
blocks, the ordered tree reduction, keyed and tuple summaries, Poisson-binomial windows against
the exact PMF, score ranges and their edges. (The paths on a cluster: test_scale.py and
tests/methods/<name>/test_partitioned.py.)"""

import operator

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask", reason="the partitioned paths need the 'scale' extra")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

from bayeval import partitions  # noqa: E402
from bayeval.chunks import make_chunks  # noqa: E402
from bayeval.poibin import PoissonBinomial  # noqa: E402

EXACT = 1e-12


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def computed(blocks):
    return [{k: np.asarray(v.compute()).tolist() for k, v in b.items()} for b in blocks]


def test_array_likes_follow_the_row_chunks_of_the_dask_column():
    blocks = partitions.partitions(scores=da.from_array(np.arange(7.0), chunks=3),
                                   labels=np.array([1, 0, 1, 1, 0, 0, 1]),
                                   extra=pd.Series(np.arange(7) * 10), missing=None)
    assert computed(blocks) == [
        {"scores": [0.0, 1.0, 2.0], "labels": [1, 0, 1], "extra": [0, 10, 20]},
        {"scores": [3.0, 4.0, 5.0], "labels": [1, 0, 0], "extra": [30, 40, 50]},
        {"scores": [6.0], "labels": [1], "extra": [60]}]


def test_columns_of_one_frame_keep_its_partitions():
    frame = dd.from_pandas(pd.DataFrame({"s": np.arange(10.0), "y": np.arange(10) % 2}),
                           npartitions=3)
    blocks = partitions.partitions(scores=frame["s"], labels=frame["y"])
    got = computed(blocks)
    assert len(got) == 3
    assert [x for b in got for x in b["scores"]] == list(np.arange(10.0))
    assert [x for b in got for x in b["labels"]] == [0, 1] * 5


def test_without_dask_input_the_rows_are_one_block():
    assert computed(partitions.partitions(scores=[0.1, 0.2], labels=[0, 1])) == [
        {"scores": [0.1, 0.2], "labels": [0, 1]}]


def test_columns_of_frames_with_different_partitions_are_an_error():
    a = dd.from_pandas(pd.Series(np.arange(10.0)), npartitions=2)
    b = dd.from_pandas(pd.Series(np.arange(10.0)), npartitions=5)
    with pytest.raises(ValueError, match="must come from one DataFrame"):
        partitions.partitions(scores=a, labels=b)


@pytest.mark.parametrize("n", [1, 2, 8, 9, 65, 100])
@pytest.mark.parametrize("split_every", [2, 3, 8])
def test_tree_reduce_keeps_the_order_of_the_parts(n, split_every):
    words = [f"{i}," for i in range(n)]
    parts = [dask.delayed(w) for w in words]
    assert partitions.tree_reduce(parts, operator.add, split_every).compute() == "".join(words)


def test_tree_reduce_depth_is_logarithmic():
    total = partitions.tree_reduce([dask.delayed(i) for i in range(64)], operator.add, 4)
    graph = dict(total.__dask_graph__())
    folds = [k for k in graph if str(k).startswith("_fold")]
    assert len(folds) == 16 + 4 + 1  # 64 -> 16 -> 4 -> 1
    assert total.compute() == sum(range(64))


def test_merge_dicts_adds_shared_keys_and_keeps_first_appearance():
    a, b = {"tue": 1, "mon": 2}, {"wed": 5, "tue": 10}
    assert list(partitions.merge_dicts(a, b, operator.add).items()) == [
        ("tue", 11), ("mon", 2), ("wed", 5)]
    assert a == {"tue": 1, "mon": 2}  # not modified


def test_add_tuples_adds_fields_and_keeps_the_type():
    sums = partitions.RangeSums(*range(16))
    twice = partitions.add_tuples(sums, sums)
    assert type(twice) is partitions.RangeSums and twice == tuple(2 * x for x in range(16))


def test_poisson_binomial_of_partitions_is_the_exact_pmf():
    rng = np.random.default_rng(3)
    p = np.r_[rng.beta(2, 5, 3000), np.zeros(7), np.ones(11)]
    rng.shuffle(p)
    exact = PoissonBinomial(p).pmf()
    for chunks in (p.size, 1000, 333):
        start, probs = partitions.poisson_binomial(da.from_array(p, chunks=chunks))
        padded = np.zeros(p.size + 1)
        padded[start : start + probs.size] = probs
        np.testing.assert_allclose(padded, exact, rtol=0, atol=EXACT)
        assert start >= 11 and start + probs.size - 1 <= p.size - 7  # the sure rows
    start, probs = partitions.poisson_binomial(p, tol=1e-6)
    assert probs.min() > 1e-6
    assert exact[:start].sum() + exact[start + probs.size :].sum() <= 2 * 1e-6 * p.size
    np.testing.assert_allclose(probs, exact[start : start + probs.size], atol=EXACT)


def test_trim_window_keeps_the_contiguous_counts_above_the_tolerance():
    probs = np.array([1e-9, 0.2, 1e-9, 0.5, 0.3, 1e-12])
    start, kept = partitions.trim_window(10, probs, 1e-6)
    assert start == 11 and kept.tolist() == [0.2, 1e-9, 0.5, 0.3]
    start, kept = partitions.trim_window(0, np.array([1e-9, 2e-9]), 1e-6)  # none above: the mode
    assert start == 1 and kept.tolist() == [2e-9]


def test_block_chunking_by_global_row_positions():
    starts = np.array([0, 4, 8])
    names = ("[0:3]", "[4:7]", "[8:9]")
    c = partitions.block_chunking(5, None, 3, starts, names)  # rows 3..7
    assert c.labels == ("[0:3]", "[4:7]") and c.codes.tolist() == [0, 1, 1, 1, 1]
    keyed = partitions.block_chunking(3, ["b", "a", "b"], None, None, None)
    assert keyed.labels == make_chunks(3, chunks=["b", "a", "b"]).labels
    assert partitions.block_chunking(3, None, 0, None, None) is None


def test_range_edges_cut_near_equal_counts_from_weighted_samples():
    rng = np.random.default_rng(4)
    scores = rng.random(10_000)
    profiles = [partitions.score_profile(part, sample=256)
                for part in np.array_split(scores, [1000, 9000])]  # unequal partitions
    edges = partitions.range_edges(profiles, 4)
    counts = np.bincount(np.searchsorted(edges, scores, side="right"), minlength=4)
    assert edges.size == 3 and np.all(np.diff(edges) > 0)
    assert np.abs(counts - 2500).max() <= 250  # quartiles of samples of 256 per partition
    assert partitions.range_edges([(0, None, None)], 4).size == 0


def test_score_profile_samples_order_statistics_and_counts_keys():
    size, values, counts = partitions.score_profile(np.array([0.5, 0.1, 0.9, 0.3]),
                                                    ["a", "b", "a", "a"], sample=2)
    assert size == 4 and values.tolist() == [0.1, 0.9] and counts == {"a": 3, "b": 1}
    assert partitions.score_profile([], sample=8) == (0, None, None)


def test_count_ranges():
    assert partitions.count_ranges(None, 1) == 1
    assert partitions.count_ranges(None, partitions.RANGE_ROWS + 1) == 2
    assert partitions.count_ranges(np.int64(5), 10) == 5
    for bad in (0, -2, 2.0, True, "3"):
        with pytest.raises(ValueError, match="score_ranges must be a positive integer"):
            partitions.count_ranges(bad, 10)


def test_auc_moments_of_partitions_equal_the_in_memory_ones():
    from bayeval.confusion_moments import auc_moments

    rng = np.random.default_rng(5)
    n = 3000
    scores = rng.integers(0, 40, n) / 40  # many ties, across partitions and ranges
    p = rng.beta(2, 3, n)
    labels = np.where(rng.random(n) < 0.5, np.nan, (rng.random(n) < p).astype(float))
    for ties in ("half", "one"):
        for ranges in (1, 6):
            got = partitions.auc_moments(da.from_array(scores, chunks=700), p, labels,
                                         ties=ties, score_ranges=ranges)
            np.testing.assert_allclose(got, auc_moments(scores, p, labels, ties=ties),
                                       rtol=EXACT, atol=0)
    with pytest.raises(ValueError, match="scores is empty"):
        partitions.auc_numerator_moments(da.from_array(np.empty(0), chunks=1), np.empty(0))
