"""Evaluation: summary, check, diagnostics, sensitivity and the netCDF round trip."""

import json

import numpy as np
import pytest
import xarray as xr

import bayeval as be
from bayeval import datasets
from bayeval.check import SAMPLER_TESTS
from bayeval.evaluation import Evaluation


@pytest.fixture(scope="module")
def data():
    return datasets.breast_cancer()


@pytest.fixture(scope="module")
def both(data):
    return be.labelled(data.scores, data.labels, prior=(2.0, 2.0), method="both", random_seed=3)


def test_summary_of_draws_states_its_interval(both):
    s = both.summary()
    assert list(s.index) == ["accuracy", "precision", "recall", "specificity", "npv"]
    assert list(s.columns[:4]) == ["mean", "sd", "lower", "upper"]
    assert {"mcse_mean", "ess_bulk", "ess_tail", "r_hat"} <= set(s.columns)
    assert s.attrs["ci_prob"] == 0.95 and s.attrs["ci_kind"] == "eti"
    assert "95% equal-tailed intervals (eti)" in repr(s).splitlines()[0]
    draws = both.draws.sel(metric="recall").values.ravel()
    assert s.loc["recall", "lower"] == pytest.approx(np.quantile(draws, 0.025), rel=1e-9)


def test_summary_hdi_is_shorter_and_labelled(both):
    eti, hdi = both.summary(ci_kind="eti", ci_prob=0.9), both.summary(ci_kind="hdi", ci_prob=0.9)
    assert ((hdi["upper"] - hdi["lower"]) <= (eti["upper"] - eti["lower"]) + 1e-12).all()
    assert "90% highest-density intervals (hdi)" in hdi.caption


def test_check_passes_on_the_right_fast_path(both):
    result = both.check()
    assert result.attrs["passed"], result
    assert set(result.index.get_level_values("test")) == {"mean", "variance_ratio",
                                                          "interval_mass", *SAMPLER_TESTS}
    assert result.loc["sampler"].index.tolist() == list(SAMPLER_TESTS)


def test_check_fails_on_a_wrong_fast_path(both):
    wrong = both.closed_form.copy()
    wrong["mean"] = wrong["mean"] + xr.where(wrong["metric"] == "recall", 0.01, 0.0)
    groups = {k: v.to_dataset() for k, v in both.tree.children.items()}
    groups["closed_form"] = wrong
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = both.tree.attrs
    result = Evaluation(tree).check()
    assert not result.attrs["passed"]
    failed = result[~result["passed"]].index.tolist()
    assert failed == [("recall", "mean")]


def test_diagnostics_rows_and_thresholds(both):
    d = both.diagnostics()
    assert d.attrs["ok"]
    assert set(d.index.get_level_values("diagnostic")) == {"r_hat", "ess_bulk", "ess_tail",
                                                           "divergences", "bfmi"}
    assert d.loc[("divergences", "sampler"), "value"] == 0


def test_sensitivity_of_an_informative_and_a_flat_prior(data):
    informative = be.labelled(data.scores, data.labels, prior=(60.0, 20.0), metrics="recall",
                              method="pymc", random_seed=1)
    s = informative.sensitivity()
    assert list(s.columns) == ["prior", "likelihood", "diagnosis"]
    # Beta(60, 20) against 99/106: both pull, the prior strongly
    assert s.loc["theta[recall]", "prior"] > 0.05
    assert s.loc["theta[recall]", "diagnosis"] == "prior-data conflict"
    flat = be.labelled(data.scores, data.labels, metrics="recall", method="pymc", random_seed=1)
    s = flat.sensitivity()
    assert s.loc["theta[recall]", "prior"] == 0.0  # Beta(1, 1): power scaling changes nothing
    assert s.loc["theta[recall]", "likelihood"] > 0.05


def test_netcdf_round_trip_is_identical(both, tmp_path):
    both.sensitivity()  # adds log_prior and log_likelihood, which are saved too
    back = be.load(both.to_netcdf(tmp_path / "ev.nc"))
    assert back == both
    assert set(back.tree.children) == set(both.tree.children)
    assert back.meta == both.meta
    assert back.summary().equals(both.summary())
    assert back.check().equals(both.check())
    assert back.sensitivity().equals(both.sensitivity())


def test_exact_round_trip_and_what_it_cannot_do(data, tmp_path):
    ev = be.labelled(data.scores, data.labels)
    back = be.load(ev.to_netcdf(tmp_path / "exact.nc"))
    assert back == ev and back.summary().equals(ev.summary())
    with pytest.raises(ValueError, match="source='draws'"):
        ev.summary(source="draws")
    with pytest.raises(ValueError, match="check\\(\\) needs both"):
        ev.check()
    with pytest.raises(ValueError, match="diagnostics\\(\\) needs MCMC"):
        ev.diagnostics()
    with pytest.raises(ValueError, match="ci_prob and ci_kind of the closed form"):
        ev.summary(ci_prob=0.9)


def test_sensitivity_after_load_without_log_groups_says_why(data, tmp_path):
    ev = be.labelled(data.scores, data.labels, metrics="accuracy", method="pymc", random_seed=2)
    back = be.load(ev.to_netcdf(tmp_path / "nolog.nc"))
    with pytest.raises(ValueError, match="not saved and the PyMC model is not attached"):
        back.sensitivity()


def test_load_rejects_a_foreign_file(tmp_path):
    path = tmp_path / "foreign.nc"
    xr.DataTree(xr.Dataset({"x": ("i", [1.0, 2.0])})).to_netcdf(path, engine="h5netcdf")
    with pytest.raises(ValueError, match="not a bayeval Evaluation"):
        be.load(path)


def test_load_gives_back_the_subclass_that_was_saved(tmp_path):
    class Custom(Evaluation, method="custom_test_method"):
        pass

    ev = Custom.create(method="custom_test_method", variant="exact",
                       closed_form=xr.Dataset({"mean": 0.5, "sd": 0.1, "lower": 0.3,
                                               "upper": 0.7}))
    back = be.load(ev.to_netcdf(tmp_path / "custom.nc"))
    assert type(back) is Custom and back == ev
    assert back.summary().loc["custom_test_method", "mean"] == 0.5


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An evaluation, its file and the file's bytes."""
    path = tmp_path_factory.mktemp("load") / "ev.nc"
    ev = be.labelled(labels=[1, 0, 1, 1, 0, 1], y_pred=[1, 0, 0, 1, 0, 1])
    ev.to_netcdf(path)
    return ev, path, path.read_bytes()


@pytest.mark.parametrize("offset", [0.05, 0.3, 0.6, 0.9, 0.999])
def test_load_refuses_a_flipped_byte_at_once(saved, tmp_path, offset):
    """A flipped byte hung h5py's attribute reader: the checksum refuses it before parsing."""
    import time

    _, _, data = saved
    damaged = bytearray(data)
    damaged[int(offset * (len(data) - 1))] ^= 0x20
    path = tmp_path / "damaged.nc"
    path.write_bytes(bytes(damaged))
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"cannot load {path}: the file is damaged"):
        be.load(path)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(("content", "message"), [
    (None, "No such file or directory"),
    (b"", "the file is empty"),
    (b"score,label\n0.2,1\n", "no HDF5 signature"),
    ("half", "not a readable netCDF file"),  # truncated: its checksum is cut off too
])
def test_load_failures_are_one_value_error_naming_the_file(saved, tmp_path, content, message):
    path = tmp_path / "x.nc"
    if content == "half":
        content = saved[2][: len(saved[2]) // 2]
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=f"cannot load {path}: .*{message}"):
        be.load(path)
    with pytest.raises(ValueError, match="it is a folder"):
        be.load(tmp_path)


def test_load_checks_the_metadata_before_rebuilding(saved, tmp_path):
    import json

    from bayeval import files

    ev = saved[0]
    for change, message in ((("versions", "bayeval"), "99.0"), (("method",), {"x": 1})):
        tree = ev.tree.copy()
        meta = json.loads(tree.attrs["bayeval"])
        (meta[change[0]] if len(change) == 2 else meta)[change[-1]] = message
        tree.attrs["bayeval"] = json.dumps(meta)
        path = files.write(tree, tmp_path / "changed.nc")
        with pytest.raises(ValueError, match=r"written by bayeval 99.0, newer than this|its "
                                             r"method .* is not a method's name"):
            be.load(path)


def test_a_file_without_the_checksum_is_read_in_a_worker(saved, tmp_path):
    """netCDF written without bayeval's trailer (by xarray, or an older bayeval) still loads."""
    ev = saved[0]
    path = tmp_path / "plain.nc"
    ev.tree.to_netcdf(path, engine="h5netcdf")
    assert be.load(path) == ev


def test_equal_evaluations_made_at_different_times_are_equal(tmp_path):
    # == compares content: calls a second apart (a busy machine) gave unequal evaluations
    ev = be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1])
    later = be.load(ev.to_netcdf(str(tmp_path / "ev.nc")))
    meta = later.meta
    meta["created_at"] = "2000-01-01T00:00:00+00:00"
    later.tree.attrs["bayeval"] = json.dumps(meta)
    assert later == ev and later.meta["created_at"] != ev.meta["created_at"]
    assert be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1], ci_prob=0.9) != ev
