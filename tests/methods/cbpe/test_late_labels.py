"""Late labels in CBPE's estimate (late_labels="estimate"): the law of each chunk's realized
metric given its known labels, the unlabelled rows from the reference's map recalibrated by
them."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import special
from sklearn import metrics as skm

import bayeval as be
from bayeval.methods.cbpe.late_labels import SCALES, recalibration

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SKLEARN = {"accuracy": skm.accuracy_score, "f1": skm.f1_score, "recall": skm.recall_score,
           "mcc": skm.matthews_corrcoef, "roc_auc": skm.roc_auc_score}


def weekly_frame(rng, design, per_day=50):
    """A labelled reference of 2,000 rows and 12 weeks of daily rows (a DataFrame) of the
    over-confident design, p ~ Beta(2, 4) and s = expit(2.5 logit p + 0.8), drifting from week
    9: "covariate", p ~ Beta(4, 2) through the same map (P(Y | s) holds), or "concept", the
    log-odds of P(Y=1 | s) 1.5 lower; 30 % of the rows of weeks 9-12 labelled, at random."""
    def rows(n, drifted):
        p = np.where(drifted & (design == "covariate"), rng.beta(4, 2, n), rng.beta(2, 4, n))
        s = special.expit(2.5 * special.logit(p) + 0.8)
        p = special.expit(special.logit(p) - 1.5 * (drifted & (design == "concept")))
        return s, (rng.random(n) < p).astype(float)

    reference = rows(2000, False)
    stamps = np.repeat(pd.date_range("2024-01-01", periods=84, freq="D"), per_day)
    week = np.arange(stamps.size) // (7 * per_day)
    s, y = rows(stamps.size, week >= 8)
    labels = np.where((week >= 8) & (rng.random(s.size) < 0.3), y, np.nan)
    frame = pd.DataFrame({"score": s, "label": labels, "timestamp": stamps})
    pred = s >= 0.5
    truth = np.array([[skm.accuracy_score(y[r], pred[r]), skm.f1_score(y[r], pred[r])]
                      for r in [*(week == w for w in range(12)), slice(None)]])
    return reference, frame, truth


def _weekly(reference, frame, late_labels, seed=0):
    return be.cbpe(data=frame, scores="score", labels="label", chunks="timestamp",
                   chunk_period="W", reference=reference, metrics=["accuracy", "f1"],
                   late_labels=late_labels, random_seed=seed).closed_form


def test_weekly_monitoring_where_calibration_holds_covers_and_narrows():
    # 6 replications x 4 labelled weeks x 2 metrics = 48 intervals; at 0.95 the number that
    # miss is about Binomial(48, 0.05) (mean 2.4, sd 1.5): at most 8 (3.7 sd above) pass
    rng = np.random.default_rng(20)
    missed, ratios = 0, []
    for _ in range(6):
        reference, frame, truth = weekly_frame(rng, "covariate")
        report, folded = (_weekly(reference, frame, v) for v in ("report", "estimate"))
        assert folded["late_labels"].values.tolist() == ["none"] * 8 + ["recalibrated"] * 4 + [
            "combined"]
        inside = (folded["lower"] <= truth) & (truth <= folded["upper"])
        missed += int((~inside[8:12]).sum())
        ratios.append(((folded["upper"] - folded["lower"])
                       / (report["upper"] - report["lower"])).values[8:])
        # the weeks without labels keep CBPE's law; realized stays that of the labelled rows
        assert np.array_equal(report["mean"][:8], folded["mean"][:8])
        assert np.array_equal(report["realized"], folded["realized"], equal_nan=True)
    assert missed <= 8
    # narrower (width ratios about 0.8): the labels remove their rows' variance and the map,
    # consistent with them, stays nearly the reference's. A week whose labels suggest a drift
    # by chance can be wider (4 of these 48 weeks x metrics, up to 1.16 times), the mean of
    # the four weeks is narrower in every replication and metric, and the whole period too
    ratios = np.array(ratios)
    assert bool((ratios[:, :4].mean(axis=1) < 1).all()), ratios
    assert bool((ratios[:, 4] < 1).all()), ratios
    assert (ratios[:, :4] < 1).mean() >= 0.75, ratios


def test_weekly_monitoring_under_concept_shift_moves_to_the_truth():
    rng = np.random.default_rng(7)
    reference, frame, truth = weekly_frame(rng, "concept")
    report, folded = (_weekly(reference, frame, v) for v in ("report", "estimate"))
    inside = (folded["lower"] <= truth) & (truth <= folded["upper"])
    missed = (report["lower"] > truth) | (truth > report["upper"])
    assert bool(inside[8:].all()), folded[["lower", "upper"]].isel(chunk=slice(8, None))
    # the drift CBPE cannot see: fewer positives, so F1 falls (accuracy, mostly of the rows
    # predicted negative, moves less)
    assert bool(missed.sel(metric="f1")[8:12].all())
    gap = abs(folded["mean"] - truth)[8:]
    assert bool((gap < abs(report["mean"] - truth)[8:]).all())


def _small_chunk(rng, n_labelled=40, n_unlabelled=7):
    s = rng.beta(2, 2, n_labelled + n_unlabelled)
    y = (rng.random(s.size) < special.expit(special.logit(s) - 0.5)).astype(float)
    labels = y.copy()
    labels[n_labelled:] = np.nan
    return s, labels


def _enumerated(s, labels, q, metric):
    """The exact PMF of the metric over every labelling of the unlabelled rows."""
    unknown = np.flatnonzero(np.isnan(labels))
    pred = (s >= 0.5).astype(int)
    law = {}
    for bits in itertools.product([0, 1], repeat=unknown.size):
        y = labels.copy()
        y[unknown] = bits
        prob = np.prod(np.where(bits, q[unknown], 1 - q[unknown]))
        value = (SKLEARN[metric](y, s) if metric == "roc_auc" else
                 SKLEARN[metric](y, pred, **({} if metric in ("accuracy", "mcc") else
                                             {"zero_division": 0})))
        law[value] = law.get(value, 0.0) + prob
    values = np.array(sorted(law))
    probs = np.array([law[v] for v in values])
    first = np.r_[True, np.diff(values) > 1e-12]  # equal rationals computed two ways
    return values[first], np.add.reduceat(probs, np.flatnonzero(first))


@pytest.mark.parametrize(("mnar", "n_labelled"), [(None, 40), (0.7, 40), (None, 12)])
def test_a_chunk_law_equals_the_enumeration_of_every_labelling(mnar, n_labelled):
    rng = np.random.default_rng(3)
    s, labels = _small_chunk(rng, n_labelled=n_labelled)
    if n_labelled == 12:  # 3 negatives: few labels of a class are recalibrated too
        labels[:12] = np.r_[np.ones(9), np.zeros(3)]
    metrics = list(SKLEARN)
    ev = be.cbpe(np.r_[rng.beta(2, 2, 30), s], labels=np.r_[np.full(30, np.nan), labels],
                 chunks=np.repeat(["a", "b"], [30, s.size]), late_labels="estimate",
                 mnar=mnar, calibration="none", calibration_uncertainty=False, metrics=metrics)
    assert ev.closed_form["late_labels"].values.tolist() == ["none", "recalibrated",
                                                             "combined"]
    known = ~np.isnan(labels)
    plug = recalibration(s[known], labels[known], s[known])  # the reference's map: s itself
    q = special.expit(plug.a + np.exp(plug.beta) * special.logit(s) + (mnar or 0.0))
    for metric in metrics:
        values, probs = _enumerated(s, labels, q, metric)
        got = ev.closed_form.sel(chunk="b", metric=metric)
        keep = np.isfinite(got["pmf_value"].values) & (got["pmf_prob"].values > 0)
        np.testing.assert_allclose(got["pmf_value"].values[keep], values, atol=1e-12)
        np.testing.assert_allclose(got["pmf_prob"].values[keep], probs, atol=1e-12)
        assert float(got["mean"]) == pytest.approx(values @ probs, abs=1e-12)


def _exact_posterior(s, y):
    """Mean and sd of (a, beta) and the scale's posterior by quadrature: at each prior scale
    a 401 x 401 grid over 10 Laplace sds either side of the mode, then mixed."""
    x = special.logit(s)
    evidence, first, second = [], [], []
    for tau in SCALES:
        prec = np.eye(2) / tau**2
        theta = np.zeros(2)
        for _ in range(200):  # damped Newton for the mode of this scale
            b = np.exp(theta[1])
            q = special.expit(theta[0] + b * x)
            w = q * (1 - q)
            grad = np.array([(y - q).sum(), ((y - q) * b * x).sum()]) - prec @ theta
            info = np.array([[w.sum(), (w * b * x).sum()],
                             [(w * b * x).sum(), (w * (b * x) ** 2).sum()]]) + prec
            theta = theta + 0.5 * np.linalg.solve(info, grad)
        sd = np.sqrt(np.diag(np.linalg.inv(info)))
        a, b = (theta[k] + np.linspace(-10, 10, 401) * sd[k] for k in range(2))
        grid_a, grid_b = np.meshgrid(a, b, indexing="ij")
        eta = grid_a[..., None] + np.exp(grid_b)[..., None] * x
        logp = ((y * eta - np.logaddexp(0, eta)).sum(-1) - np.log(2 * np.pi * tau**2)
                - (grid_a**2 + grid_b**2) / (2 * tau**2))
        evidence.append(special.logsumexp(logp) + np.log((a[1] - a[0]) * (b[1] - b[0])))
        w = np.exp(logp - logp.max())
        w /= w.sum()
        first.append([(w * grid_a).sum(), (w * grid_b).sum()])
        second.append([(w * grid_a**2).sum(), (w * grid_b**2).sum()])
    weights = np.exp(np.array(evidence) - max(evidence))
    weights /= weights.sum()
    mean = weights @ np.array(first)
    return mean, np.sqrt(weights @ np.array(second) - mean**2), weights


@pytest.mark.parametrize(("n", "drift"), [(15, 0.0), (40, -0.8), (200, -1.0)])
def test_the_recalibration_draws_its_exact_posterior(n, drift):
    rng = np.random.default_rng(4 + n)
    s = rng.beta(2, 2, n)
    y = (rng.random(n) < special.expit(special.logit(s) + drift)).astype(float)
    mean, sd, weights = _exact_posterior(s, y)
    draws = 20000
    post = recalibration(s, y, s, draws=draws, random_seed=1)
    got = np.c_[post.a, post.beta]
    # 4 Monte-Carlo SEs: sd / sqrt(M) for a mean, about sd / sqrt(2M) for an sd
    np.testing.assert_array_less(abs(got.mean(axis=0) - mean), 4 * sd / np.sqrt(draws))
    np.testing.assert_array_less(abs(got.std(axis=0) - sd), 4 * sd / np.sqrt(2 * draws))
    # the scale's posterior from the Laplace evidence, within 0.02 of the quadrature's
    np.testing.assert_allclose(recalibration(s, y, s).scales, weights, atol=0.02)


def test_the_recalibration_keeps_the_reference_or_follows_a_drift():
    rng = np.random.default_rng(9)
    s = rng.beta(2, 2, 2000)
    same = recalibration(s, (rng.random(2000) < s).astype(float), s)
    # labels from the reference's map: the scale's posterior lies on the smallest drifts
    assert SCALES @ same.scales < 0.1
    drift = special.expit(-1.0 + 0.625 * special.logit(s))  # coverage.md's concept-shift slope
    moved = recalibration(s, (rng.random(2000) < drift).astype(float), s)
    # the maximum-likelihood sds with 2,000 labels are about 0.06 (a) and 0.06 (log slope)
    assert float(moved.a) == pytest.approx(-1.0, abs=4 * 0.06)
    assert float(moved.beta) == pytest.approx(np.log(0.625), abs=4 * 0.06)


def test_the_whole_period_adds_the_chunks_and_the_map_posterior_widens():
    rng = np.random.default_rng(11)
    s = rng.beta(2, 2, 900)
    y = (rng.random(900) < special.expit(special.logit(s) - 1.0)).astype(float)
    labels = np.where(rng.random(900) < 0.4, y, np.nan)
    labels[:300] = np.nan
    common = dict(labels=labels, n_chunks=3, late_labels="estimate", calibration="none",
                  metrics=["accuracy"])
    plug = be.cbpe(s, calibration_uncertainty=False, **common).closed_form
    # plug-in: independent rows, so the whole period's mean and variance are the chunks' sums
    n = np.r_[plug["n"].values[:3]]
    chunk_mean, chunk_var = plug["mean"].values[:3, 0] * n, (plug["sd"].values[:3, 0] * n) ** 2
    whole = plug.sel(chunk="all", metric="accuracy")
    assert float(whole["mean"]) * 900 == pytest.approx(chunk_mean.sum(), abs=1e-9)
    assert (float(whole["sd"]) * 900) ** 2 == pytest.approx(chunk_var.sum(), rel=1e-9)
    mixed = be.cbpe(s, random_seed=1, **common).closed_form
    assert bool((mixed["sd"] > plug["sd"]).sel(chunk=["[300:599]", "[600:899]", "all"]).all())
    # the mixture over the map's posterior is centred near the plug-in (Jeffreys' posterior:
    # a bias of order 1/labels), within 4 Monte-Carlo SEs of its 400 draws
    between = np.sqrt(mixed["sd"] ** 2 - plug["sd"] ** 2)
    assert bool((abs(mixed["mean"] - plug["mean"]) <= 4 * between / 20 + 0.01).all())


def test_a_prior_on_delta_tends_to_the_fixed_shift():
    rng = np.random.default_rng(2)
    s, labels = _small_chunk(rng, n_labelled=60, n_unlabelled=200)
    common = dict(labels=labels, late_labels="estimate", calibration="none",
                  calibration_uncertainty=False, metrics=["precision", "recall"])
    fixed = be.cbpe(s, mnar=-0.8, **common).closed_form
    narrow = be.cbpe(s, mnar=(-0.8, 1e-9), random_seed=0, **common).closed_form
    wide = be.cbpe(s, mnar=(-0.8, 1.0), random_seed=0, **common).closed_form
    np.testing.assert_allclose(narrow["mean"], fixed["mean"], atol=1e-8)
    np.testing.assert_allclose(narrow["sd"], fixed["sd"], rtol=1e-6)
    assert bool((wide["sd"] > fixed["sd"]).all())
    mar = be.cbpe(s, **common).closed_form  # a negative shift: fewer positives unlabelled
    assert bool((fixed["mean"].sel(metric="precision") < mar["mean"].sel(metric="precision"))
                .all())


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(late_labels="fold"), "late_labels"),
    (dict(late_labels="estimate", noise="beta", kappa=50.0), "noise='beta'"),
    (dict(late_labels="estimate", method="pymc"), "method='pymc'"),
    (dict(mnar=0.5), "mnar= shifts"),
    (dict(late_labels="estimate", mnar="high"), "mnar must be"),
    (dict(late_labels="estimate", mnar=(0.0, -1.0)), "mnar must be"),
    (dict(late_labels="estimate", mnar=np.nan), "mnar must be"),
])
def test_bad_late_labels_arguments(kwargs, match):
    s = np.linspace(0.1, 0.9, 20)
    with pytest.raises(ValueError, match=match):
        be.cbpe(s, labels=np.r_[np.ones(10), np.full(10, np.nan)], calibration="none",
                **kwargs)


def test_k_classes_refuse_estimate():
    p = np.full((6, 3), 1 / 3)
    with pytest.raises(ValueError, match="K classes"):
        be.cbpe(p, labels=np.zeros(6), late_labels="estimate")


def test_realized_metrics_read_in_score_order_are_the_same():
    """Given the scores' stable argsort, each chunk's ROC-AUC reads its rows in score order
    without a sort: the same realized metrics, ties and missing labels included."""
    from bayeval.chunks import make_chunks
    from bayeval.methods.cbpe.late_labels import realized

    rng = np.random.default_rng(3)
    scores = np.round(rng.random(3000), 2)  # many ties
    labels = np.where(rng.random(3000) < 0.2, np.nan, (rng.random(3000) < scores).astype(float))
    y_pred = (scores >= 0.5).astype(int)
    chunking = make_chunks(3000, chunks=rng.integers(0, 4, 3000))
    metrics = ["accuracy", "f1", "roc_auc"]
    plain = realized(labels, y_pred, scores, chunking, metrics, 0.0, 1.0)
    ordered = realized(labels, y_pred, scores, chunking, metrics, 0.0, 1.0,
                       order=np.argsort(scores, kind="stable"))
    np.testing.assert_array_equal(plain[0], ordered[0])
    np.testing.assert_array_equal(plain[1], ordered[1])
    assert np.isfinite(plain[0]).all()
