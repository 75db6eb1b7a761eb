"""Chunks: contiguous chunks by size or count (sizes, first rows, labels), chunks by key (order
of first appearance, non-contiguous rows), and the errors."""

import numpy as np
import pandas as pd
import pytest

from bayeval import chunks
from bayeval.chunks import WHOLE, Chunking, contiguous, make_chunks, score_order, sorted_scores


@pytest.mark.parametrize(("n", "size"), [(1, 1), (7, 1), (7, 3), (7, 7), (100, 3), (101, 7)])
def test_chunk_size_keeps_the_remainder_in_the_last_chunk(n, size):
    c = make_chunks(n, chunk_size=size)
    full, rest = divmod(n, size)
    assert c.sizes.tolist() == [size] * full + ([rest] if rest else [])
    starts = np.arange(0, n, size)
    ends = np.minimum(starts + size, n) - 1
    assert c.labels == tuple(f"[{a}:{b}]" for a, b in zip(starts, ends, strict=True))
    np.testing.assert_array_equal(c.codes, np.arange(n) // size)  # contiguous, in row order
    assert [r.tolist() for r in c.rows()] == [list(range(a, b + 1))
                                              for a, b in zip(starts, ends, strict=True)]


@pytest.mark.parametrize(("n", "count"), [(10, 3), (9, 3), (5, 5), (101, 4), (6, 1)])
def test_n_chunks_have_near_equal_sizes_the_larger_first(n, count):
    c = make_chunks(n, n_chunks=count)
    assert len(c.labels) == count and c.sizes.sum() == n
    assert c.sizes.max() - c.sizes.min() <= 1
    assert (np.diff(c.sizes) <= 0).all()  # the remainder goes to the first chunks
    assert (np.diff(c.codes) >= 0).all() and c.codes[0] == 0 and c.codes[-1] == count - 1


def test_contiguous_gives_the_first_rows_of_make_chunks():
    for kwargs in ({"chunk_size": 4}, {"n_chunks": 3}, {}):
        starts, labels = contiguous(11, **kwargs)
        c = make_chunks(11, **kwargs)
        assert labels == c.labels
        np.testing.assert_array_equal(starts, np.r_[0, np.cumsum(c.sizes)[:-1]])
    starts, labels = contiguous(11)
    assert starts.tolist() == [0] and labels == ("[0:10]",)


def test_no_option_is_one_chunk_of_all_rows():
    c = make_chunks(4)
    assert c.labels == ("[0:3]",) and c.codes.tolist() == [0, 0, 0, 0]


def test_keys_in_order_of_first_appearance_rows_need_not_be_contiguous():
    keys = ["tue", "mon", "tue", "wed", "mon", "tue"]
    c = make_chunks(6, chunks=keys)
    assert c.labels == ("tue", "mon", "wed")
    np.testing.assert_array_equal(c.codes, [0, 1, 0, 2, 1, 0])
    np.testing.assert_array_equal(c.sizes, [3, 2, 1])
    assert [r.tolist() for r in c.rows()] == [[0, 2, 5], [1, 4], [3]]
    # rows in the order of a permutation (e.g. by score), within each chunk
    order = np.array([5, 4, 3, 2, 1, 0])
    assert [r.tolist() for r in c.rows(order)] == [[5, 2, 0], [4, 1], [3]]


def test_keys_of_any_type_become_strings():
    dates = pd.Series(pd.to_datetime(["2024-01-02", "2024-01-01", "2024-01-02"]))
    c = make_chunks(3, chunks=dates)
    assert [label[:10] for label in c.labels] == ["2024-01-02", "2024-01-01"]
    assert all(isinstance(label, str) for label in c.labels)
    assert make_chunks(3, chunks=np.array([2, 1, 2])).labels == ("2", "1")


def test_chunking_sizes_and_rows_by_hand():
    c = Chunking(("a", "b", "c"), np.array([2, 0, 2, 2]))
    np.testing.assert_array_equal(c.sizes, [1, 0, 3])  # an empty chunk counts 0
    assert [r.tolist() for r in c.rows()] == [[1], [], [0, 2, 3]]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"chunk_size": 2, "n_chunks": 2}, "give at most one of chunks, chunk_size and n_chunks; "
                                       "got chunk_size and n_chunks"),
    ({"chunks": ["a"] * 5, "chunk_size": 2}, "got chunks and chunk_size"),
    ({"chunk_size": 0}, "chunk_size must be a positive integer, got 0"),
    ({"chunk_size": 2.5}, "chunk_size must be a positive integer"),
    ({"chunk_size": True}, "chunk_size must be a positive integer"),
    ({"n_chunks": -1}, "n_chunks must be a positive integer"),
    ({"chunk_size": 6}, r"chunk_size=6 exceeds the number of rows \(5\)"),
    ({"n_chunks": 6}, r"n_chunks=6 exceeds the number of rows \(5\)"),
    ({"chunks": ["a", "b"]}, r"chunks must hold one key per row \(5 rows\), got shape \(2,\)"),
    ({"chunks": ["a", None, "b", "b", np.nan]}, r"chunks has 2 missing key\(s\).*first at row 1"),
    ({"chunks": ["a", "b", WHOLE, "a", "b"]}, "distinct labels other than 'all'"),
    ({"chunks": pd.Series([1, "1", 1, 1, 1], dtype=object)}, "keys that print alike"),
])
def test_bad_chunks(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_chunks(5, **kwargs)


# ---------------------------------------------------------------------------------------------
# chunks by time period


def _stamps(n=400, seed=0, tz=None):
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-01-03 05:00", tz=tz)
    return start + pd.to_timedelta(rng.uniform(0, 90, n), unit="D")  # unsorted, ~13 weeks


@pytest.mark.parametrize("period", ["D", "W", "W-MON", "M", "Q", "h"])
def test_chunk_period_groups_timestamps_as_pandas_periods_in_time_order(period):
    stamps = _stamps()
    c = make_chunks(stamps.size, chunks=stamps, chunk_period=period)
    periods = pd.Series(stamps).dt.to_period(period)
    expected = sorted(periods.unique())
    assert c.labels == tuple(str(p) for p in expected)
    by_period = {str(p): i for i, p in enumerate(expected)}
    np.testing.assert_array_equal(c.codes, periods.map(lambda p: by_period[str(p)]))


def test_a_multiple_of_a_period_counts_from_the_first_timestamps_period():
    stamps = _stamps()
    c = make_chunks(stamps.size, chunks=stamps, chunk_period="2W")
    monday = (stamps.min() - pd.Timedelta(days=stamps.min().weekday())).normalize()
    fortnight = ((stamps - monday) // pd.Timedelta(days=14)).to_numpy()
    np.testing.assert_array_equal(c.codes, fortnight - fortnight.min())
    first = monday + pd.Timedelta(days=14)
    assert c.labels[1] == f"{first.date()}/{(first + pd.Timedelta(days=13)).date()}"


def test_time_zone_aware_timestamps_are_binned_in_their_local_time():
    stamps = pd.DatetimeIndex(["2024-01-08 00:30", "2024-01-07 23:30"]).tz_localize(
        "Europe/Paris")  # Monday 00:30 in Paris is Sunday 23:30 UTC
    c = make_chunks(2, chunks=stamps, chunk_period="W")
    assert c.labels == ("2024-01-01/2024-01-07", "2024-01-08/2024-01-14")
    assert c.codes.tolist() == [1, 0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"chunk_period": "W"}, "chunk_period groups timestamps: give the rows' timestamps"),
    ({"chunks": [1, 2, 3], "chunk_period": "W"}, "chunks must be timestamps"),
    ({"chunks": ["a", "b", "c"], "chunk_period": "W"}, "chunks must be timestamps"),
    ({"chunks": ["2024-01-01"] * 3, "chunk_period": "ME"}, "chunk_period must be a pandas "
                                                           "period alias"),
    ({"chunks": ["2024-01-01"] * 3, "chunk_period": "0W"}, "at least one unit"),
    ({"chunks": ["2024-01-01", None, "2024-01-02"], "chunk_period": "D"}, "1 missing key"),
    ({"chunks": ["2024-01-01"] * 3, "chunk_period": "D", "chunk_size": 1}, "at most one of"),
])
def test_chunk_period_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_chunks(3, **kwargs)


def test_more_chunks_than_the_limit_are_refused_with_the_count():
    from bayeval.chunks import MAX_CHUNKS

    n = MAX_CHUNKS + 1
    with pytest.raises(ValueError, match=f"chunks gives {n:,} chunks, more than "
                                         f"{MAX_CHUNKS:,}.*chunk_period"):
        make_chunks(n, chunks=np.arange(n))
    assert len(make_chunks(MAX_CHUNKS, chunks=np.arange(MAX_CHUNKS)).labels) == MAX_CHUNKS


@pytest.mark.parametrize("vector", [True, False])
def test_score_order_and_sorted_scores_are_numpys_on_ties_and_signed_zeros(vector, monkeypatch):
    """Either sort (NumPy's default sort with runs of ties put back in row order, or the stable
    sort of the bit patterns) equals NumPy's stable sort of the doubles, ties (among them 0.0
    and -0.0, which are equal) kept in row order."""
    monkeypatch.setattr(chunks, "_vector_sort", lambda: vector)
    rng = np.random.default_rng(5)
    s = np.round(rng.random(5000), 3)
    s[rng.choice(s.size, 40, replace=False)] = -0.0
    s[rng.choice(s.size, 40, replace=False)] = 0.0
    s[rng.choice(s.size, 40, replace=False)] = 1.0
    np.testing.assert_array_equal(score_order(s), np.argsort(s, kind="stable"))
    distinct = rng.random(5000)
    np.testing.assert_array_equal(score_order(distinct), np.argsort(distinct, kind="stable"))
    kept = s.copy()
    ranked = sorted_scores(s)
    np.testing.assert_array_equal(ranked, np.sort(s))
    np.testing.assert_array_equal(s, kept)  # a copy: the input is left as it was
    assert not np.signbit(ranked).any()


@pytest.mark.parametrize("kwargs", [{"n_chunks": 3}, {"chunk_size": 4}, {}])
def test_contiguous_chunks_know_their_sizes_as_counted(kwargs):
    """make_chunks by count or size sets the sizes and contiguity it knows: those a Chunking
    of the same codes counts and checks."""
    made = make_chunks(11, **kwargs)
    counted = Chunking(made.labels, made.codes)
    np.testing.assert_array_equal(made.sizes, counted.sizes)
    assert made.sizes.dtype == counted.sizes.dtype
    assert made.contiguous is counted.contiguous is True
