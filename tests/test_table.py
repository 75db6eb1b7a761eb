"""Table: a DataFrame printed under its caption, which survives pandas operations."""

import pandas as pd

from bayeval.table import Table, table


def frame():
    return pd.DataFrame({"mean": [0.81, 0.64], "sd": [0.02, 0.05]}, index=["accuracy", "f1"])


def test_the_caption_is_printed_first_then_the_frame_as_pandas_prints_it():
    t = table(frame(), "95% equal-tailed intervals", ci_prob=0.95)
    assert repr(t) == "95% equal-tailed intervals\n" + repr(frame())
    assert str(t).splitlines()[0] == "95% equal-tailed intervals"
    assert t.attrs == {"ci_prob": 0.95, "caption": "95% equal-tailed intervals"}
    assert t.caption == "95% equal-tailed intervals"


def test_without_a_caption_it_prints_as_a_dataframe():
    t = Table(frame())
    assert t.caption == "" and repr(t) == repr(frame())


def test_the_data_are_the_frame_s():
    t = table(frame(), "c")
    assert isinstance(t, pd.DataFrame)
    pd.testing.assert_frame_equal(pd.DataFrame(t), frame())


def test_selections_and_arithmetic_stay_tables_with_their_caption():
    t = table(frame(), "posterior means", ci_prob=0.9)
    for derived in (t.loc[["f1"]], t[["mean"]], t.round(1), t * 2, t.copy(), t.head(1)):
        assert type(derived) is Table
        assert derived.caption == "posterior means" and derived.attrs["ci_prob"] == 0.9
        assert repr(derived).startswith("posterior means\n")
    assert t["mean"].tolist() == [0.81, 0.64]  # a column is a Series


def test_attrs_do_not_leak_into_the_wrapped_frame():
    source = frame()
    table(source, "caption", extra=1)
    assert source.attrs == {}
