"""Per-row arguments as columns of ``data=`` and tables as ``reference=``: every entry function
gives with a table what it gives with arrays (to 1e-12), keeps the table's index, and refuses
what cannot be paired with a message that names the argument."""

import numpy as np
import pandas as pd
import pytest

import bayeval as be
from bayeval import datasets
from bayeval.methods.mvu.estimators import LinearClassifier


def same(a: be.Evaluation, b: be.Evaluation) -> None:
    """Two evaluations with the same summary: numbers to 1e-12, everything else equal."""
    x, y = a.summary(), b.summary()
    assert list(x.index) == list(y.index) and list(x.columns) == list(y.columns)
    for col in x.columns:
        if pd.api.types.is_numeric_dtype(x[col]) and not pd.api.types.is_bool_dtype(x[col]):
            np.testing.assert_allclose(x[col].to_numpy(float), y[col].to_numpy(float), rtol=0,
                                       atol=1e-12, err_msg=col)
        else:
            assert x[col].tolist() == y[col].tolist(), col


@pytest.fixture(scope="module")
def monitored():
    """A labelled reference and 12 weeks of analysis rows, indexed by row ids."""
    ref = datasets.calibrated_scores(2000, random_seed=0)
    new = datasets.calibrated_scores(2400, random_seed=1)
    ts = pd.Timestamp("2026-01-05") + pd.to_timedelta(np.arange(2400) * 12 // 40, unit="h")
    ref_ts = pd.Timestamp("2025-09-01") + pd.to_timedelta(np.arange(2000) * 12 // 40, unit="h")
    labels = np.where(np.arange(2400) % 3 == 0, new.labels, np.nan)
    data = pd.DataFrame({"score": new.scores, "y": labels, "ts": ts},
                        index=pd.Index([f"r{i}" for i in range(2400)], name="row_id"))
    reference = pd.DataFrame({"score": ref.scores, "y": ref.labels, "ts": ref_ts})
    return data, reference


# ------------------------------------------------------------------ equal to the array calls
def test_cbpe_with_tables_equals_arrays(monitored):
    data, reference = monitored
    options = dict(chunk_period="W", metrics=["accuracy", "f1"], calibration="platt",
                   random_seed=0)
    with_tables = be.cbpe("score", data=data, labels="y", chunks="ts", reference=reference,
                          **options)
    with_arrays = be.cbpe(data["score"].to_numpy(), labels=data["y"].to_numpy(),
                          chunks=data["ts"].to_numpy(),
                          reference=(reference["score"].to_numpy(), reference["y"].to_numpy()),
                          reference_chunks=reference["ts"].to_numpy(), **options)
    same(with_tables, with_arrays)
    assert with_tables.tree["data"]["reference_chunks"].item() > 2  # weeks, not sizes


def test_cbpe_analysis_table_without_the_labels_column(monitored):
    data, reference = monitored
    options = dict(n_chunks=4, metrics=["accuracy"], calibration="none")
    ev = be.cbpe("score", data=data.drop(columns="y"), labels="y", reference=reference,
                 **options)
    plain = be.cbpe(data["score"].to_numpy(), reference=(reference["score"], reference["y"]),
                    **options)
    same(ev, plain)
    assert "realized" not in ev.summary().columns


def test_cbpe_of_k_classes_with_a_list_of_score_columns():
    rng = np.random.default_rng(0)
    p, p_ref = rng.dirichlet([2, 2, 2], 900), rng.dirichlet([2, 2, 2], 600)
    y_ref = np.array(["a", "b", "c"])[[rng.choice(3, p=row) for row in p_ref]]
    names = {"a": "p_a", "b": "p_b", "c": "p_c"}
    data = pd.DataFrame(p, columns=list(names.values()))
    reference = pd.DataFrame(p_ref, columns=list(names.values())).assign(label=y_ref)
    options = dict(n_chunks=3, metrics=["accuracy", "macro_f1"], random_seed=0)
    ev = be.cbpe(names, data=data, labels="label", reference=reference, **options)
    plain = be.cbpe(pd.DataFrame(p, columns=list(names)), n_chunks=3,
                    reference=(pd.DataFrame(p_ref, columns=list(names)), y_ref),
                    metrics=["accuracy", "macro_f1"], random_seed=0)
    same(ev, plain)


def test_labelled_with_a_table():
    d = datasets.calibrated_scores(500, random_seed=4)
    data = pd.DataFrame({"s": d.scores, "y": d.labels})
    same(be.labelled("s", "y", data=data), be.labelled(d.scores, d.labels))
    classes = pd.DataFrame({"y": ["a", "b", "c", "a"] * 30, "pred": ["a", "b", "b", "a"] * 30})
    same(be.labelled(labels="y", y_pred="pred", data=classes, random_seed=1),
         be.labelled(labels=classes["y"].to_numpy(), y_pred=classes["pred"].to_numpy(),
                     random_seed=1))


@pytest.mark.filterwarnings("ignore::UserWarning")  # the fallbacks from PEMI-Gauss, said alike
def test_pemi_with_a_table_and_a_reference_table():
    d = datasets.breast_cancer()
    masked = datasets.mask_labels(d.labels, p_m=0.4, random_seed=1).labels
    data = pd.DataFrame({"score": d.scores, "label": masked})
    same(be.pemi("score", "label", data=data, random_seed=0),
         be.pemi(d.scores, masked, random_seed=0))
    ref = datasets.calibrated_scores(400, random_seed=2)
    reference = pd.DataFrame({"score": ref.scores, "label": ref.labels})
    same(be.pemi("score", "label", data=data, reference=reference, random_seed=0),
         be.pemi(d.scores, masked, reference=(ref.scores, ref.labels), random_seed=0))
    # the test table without labels: every label missing, the map from the reference
    same(be.pemi("score", "label", data=data.drop(columns="label"), reference=reference,
                 random_seed=0),
         be.pemi(d.scores, np.full(d.scores.size, np.nan), reference=(ref.scores, ref.labels),
                 random_seed=0))


def test_judge_splits_the_rows_without_a_human_label():
    d = datasets.noisy_judge(150, 1000, random_seed=3)
    data = pd.DataFrame({"human": np.r_[d.y, np.full(d.yhat_unlabeled.size, np.nan)],
                         "llm": np.r_[d.yhat, d.yhat_unlabeled]}).sample(frac=1, random_state=0)
    same(be.judge("human", "llm", data=data, method="all"),
         be.judge(d.y, d.yhat, d.yhat_unlabeled, method="all"))


def test_bounds_with_a_table():
    w = datasets.weak_labels(1000, min_votes=1, random_seed=2)
    data = pd.DataFrame(w.weak_labels, columns=["lf1", "lf2", "lf3"]).assign(pred=w.y_pred)
    same(be.bounds("pred", ["lf1", "lf2", "lf3"], data=data, metrics=["accuracy"]),
         be.bounds(w.y_pred, w.weak_labels, metrics=["accuracy"]))


def test_mvu_keeps_the_index_in_its_results_and_decisions():
    rng = np.random.default_rng(0)
    train = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=500)
    x = rng.normal(size=(6, 2))
    x[::2, 0] = np.nan
    clf = LinearClassifier([[1.0, 1.0]], [-0.5])
    ids = pd.Index([f"u{i}" for i in range(6)], name="user")
    data = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "other": 1.0}, index=ids)
    ev = be.mvu(clf, ["a", "b"], data=data, train=pd.DataFrame(train, columns=["a", "b"]))
    plain = be.mvu(clf, x, train=train)
    plan, plain_plan = ev.decide(0.9), plain.decide(0.9)
    assert list(plan.index) == list(ids)
    np.testing.assert_allclose(plan["c_hard"].to_numpy(float),
                               plain_plan["c_hard"].to_numpy(float), rtol=0, atol=1e-12)
    assert list(ev.summary().index) == list(ids)


def test_pyarrow_table_is_converted_once():
    pa = pytest.importorskip("pyarrow")
    d = datasets.calibrated_scores(600, random_seed=5)
    frame = pd.DataFrame({"score": d.scores, "y": d.labels})
    table = pa.Table.from_pandas(frame)
    options = dict(n_chunks=2, metrics=["accuracy"], calibration="none")
    same(be.cbpe("score", data=table, reference=table, labels="y", **options),
         be.cbpe(d.scores, reference=(d.scores, d.labels), labels=d.labels, **options))


# ------------------------------------------------------------------ pairing and errors
def test_a_series_beside_data_pairs_by_index(monitored):
    data, reference = monitored
    shuffled = data["y"].sample(frac=1, random_state=1)
    options = dict(n_chunks=3, metrics=["accuracy"], calibration="none",
                   reference=(reference["score"], reference["y"]))
    same(be.cbpe("score", data=data, labels=shuffled, **options),
         be.cbpe("score", data=data, labels="y", **options))


def test_a_misaligned_series_is_refused(monitored):
    data, _ = monitored
    other = pd.Series(data["y"].to_numpy(), index=range(len(data)))
    with pytest.raises(ValueError, match=r"labels is a pandas Series beside data=, paired .* "
                                         r"4800 label\(s\) are in only one"):
        be.cbpe("score", data=data, labels=other)
    with pytest.raises(ValueError, match="y_pred has 3 rows but data has 2400"):
        be.cbpe("score", data=data, y_pred=[1, 0, 1])


def test_a_missing_column_names_the_argument_and_the_columns(monitored):
    data, reference = monitored
    wide = data.assign(**{f"c{i}": 0.0 for i in range(12)})
    with pytest.raises(ValueError) as err:
        be.cbpe("prob", data=wide)
    assert str(err.value) == ("scores: column 'prob' is not in data (its columns: 'score', 'y', "
                              "'ts', 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', ... (15 in all)).")
    with pytest.raises(ValueError, match="labels: column 'y' is not in the reference table"):
        be.cbpe("score", data=data, labels="y", reference=reference.drop(columns="y"))
    with pytest.raises(ValueError, match="name scores as a column"):
        be.cbpe(data["score"].to_numpy(), reference=reference, labels=data["y"].to_numpy())
    with pytest.raises(ValueError, match="weak_labels: column 'lf4' is not in data"):
        be.bounds("pred", ["lf1", "lf4"], data=pd.DataFrame({"pred": [0], "lf1": [1]}))


def test_a_string_without_data_suggests_data():
    with pytest.raises(ValueError, match=r"scores is 'score', a column name, but no table was "
                                         r"given: pass the table as data="):
        be.cbpe("score")
    with pytest.raises(ValueError, match="y is 'human', a column name"):
        be.judge("human", [1, 0], [1])
    with pytest.raises(ValueError, match="must be a table"):
        be.pemi("score", "label", data={"score": [0.5]})
    with pytest.raises(ValueError, match="every row of data has a human label"):
        be.judge("h", "j", data=pd.DataFrame({"h": [1, 0, 1], "j": [1, 1, 0]}))
