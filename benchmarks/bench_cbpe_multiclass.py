"""Multiclass CBPE against NannyML: speed and agreement of the point estimates, in one run.

Data: K = 5 classes, 100,000 labelled reference rows and 1,000,000 analysis rows in 10 chunks.
Each row has logits :math:`z_{ik}\\sim N(0, 1.5^2)`; its true class probabilities are
:math:`\\mathrm{softmax}(z_i)` and its label is drawn from them; the model reports
:math:`\\mathrm{softmax}(0.6\\,z_i)` (under-confident: calibration helps) and predicts the class
of the largest. Metrics: accuracy, macro precision, macro recall, macro F1 (NannyML's
``accuracy``, ``precision``, ``recall``, ``f1`` of a multiclass problem). Rows:

* bayeval's default call (one-vs-rest maps chosen on held-out folds, renormalised, the laws mixed
  over the maps' posterior; exact laws of accuracy and the per-class counts, normal mixtures for
  the macro averages) timed against NannyML's CBPE ``fit`` + ``estimate`` (isotonic maps,
  renormalised); target: faster;
* the agreement of the point estimates (``plugin``) with NannyML's, on separate, untimed calls
  with the same estimator: isotonic one-vs-rest maps fitted on the whole reference and the
  plug-in map (``calibration="isotonic"``, ``calibration_uncertainty=False``), and without
  calibration (NannyML's ``NoopCalibrator``); target: 1e-9. NannyML keeps a class's scores
  uncalibrated when its held-out calibration error does not improve; on these scores every
  class improves, which the row checks (its estimates would differ otherwise).

Both sides report the best of ``REPEATS`` runs, BLAS single-threaded (as in
:mod:`benchmarks.bench_cbpe`). NannyML needs Python < 3.13: run this file with the
interpreter of a separate environment that has it and this project on ``sys.path``.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
from scipy.special import softmax
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bayeval.methods.cbpe import cbpe
from benchmarks.timing import best_time

SEED = 20261123
N_REF, N_ANALYSIS, N_CHUNKS, K = 100_000, 1_000_000, 10, 5
METRICS = ["accuracy", "macro_precision", "macro_recall", "macro_f1"]
NML_METRICS = {"accuracy": "accuracy", "macro_precision": "precision",
               "macro_recall": "recall", "macro_f1": "f1"}
REPEATS = 2
CLASSES = [f"c{k}" for k in range(K)]


def row(case: str, ours_s: float, peer: str, peer_s: float, target: str, ok: bool | None,
        note: str) -> dict:
    return {"benchmark": "cbpe_multiclass", "case": case, "ours_s": ours_s, "peer": peer,
            "peer_s": peer_s, "target": target, "ok": ok, "note": note}


def data(n_ref: int = N_REF, n_analysis: int = N_ANALYSIS, seed: int = SEED) -> dict:
    """Reference and analysis scores (n, K), reference labels (class names)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, n in (("ref", n_ref), ("analysis", n_analysis)):
        z = rng.normal(0.0, 1.5, (n, K))
        truth = softmax(z, axis=1)
        out[f"{name}_scores"] = softmax(0.6 * z, axis=1)
        u = rng.random(n)[:, None]
        out[f"{name}_labels"] = np.asarray(CLASSES)[(u > truth.cumsum(axis=1)).sum(axis=1)
                                                    .clip(max=K - 1)]
    return out


def frame(scores: np.ndarray):
    import pandas as pd

    return pd.DataFrame(scores, columns=CLASSES)


def ours(d: dict, **kwargs):
    return cbpe(frame(d["analysis_scores"]), reference=(frame(d["ref_scores"]), d["ref_labels"]),
                n_chunks=N_CHUNKS, metrics=METRICS, random_seed=SEED, **kwargs)


def nannyml_estimates(d: dict, calibrate: bool):
    """NannyML's multiclass CBPE: (fit + estimate, extractor of the analysis values, fitted
    estimator)."""
    os.environ["NML_DISABLE_USAGE_LOGGING"] = "1"
    import nannyml as nml
    import pandas as pd
    from nannyml.calibration import NoopCalibrator

    proba = {c: f"p_{c}" for c in CLASSES}

    def table(scores, labels=None):
        out = pd.DataFrame(scores, columns=list(proba.values()))
        out["y_pred"] = np.asarray(CLASSES)[scores.argmax(axis=1)]
        if labels is not None:
            out["y_true"] = labels
        return out

    ref, analysis = table(d["ref_scores"], d["ref_labels"]), table(d["analysis_scores"])
    kwargs = {} if calibrate else {"calibrator": NoopCalibrator()}
    fitted = {}

    def fit_estimate():
        est = nml.CBPE(metrics=list(NML_METRICS.values()), y_pred_proba=proba, y_pred="y_pred",
                       y_true="y_true", problem_type="classification_multiclass",
                       chunk_number=N_CHUNKS, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = est.fit(ref).estimate(analysis)
        fitted["estimator"] = est
        return out

    def values(result):
        table_ = result.filter(period="analysis").to_df()
        return {m: table_[(nml_name, "value")].to_numpy() for m, nml_name in NML_METRICS.items()}

    return fit_estimate, values, fitted


def agreement(d: dict, calibrate: bool) -> tuple[float, bool]:
    """Max |bayeval's plugin - NannyML's estimate| over the chunks and the 4 metrics, and
    whether NannyML calibrated every class (it keeps a class uncalibrated otherwise)."""
    from nannyml.calibration import NoopCalibrator

    fit_estimate, values, fitted = nannyml_estimates(d, calibrate)
    theirs = values(fit_estimate())
    every = all(not isinstance(c, NoopCalibrator)
                for c in fitted["estimator"]._calibrators.values()) if calibrate else True
    ev = ours(d, calibration="isotonic" if calibrate else "none",
              calibration_uncertainty=False)
    plugin = ev.closed_form["plugin"].isel(chunk=slice(0, N_CHUNKS))
    diff = max(float(np.abs(plugin.sel(metric=m).isel({"class": 0}).values - theirs[m]).max())
               for m in METRICS)
    return diff, every


def vs_nannyml() -> list[dict]:
    d = data()
    case = (f"{N_ANALYSIS:,} rows, K = {K}, {N_CHUNKS} chunks + {N_REF:,} reference, "
            f"{len(METRICS)} metrics, default calibration")
    ours_s, _ = best_time(lambda: ours(d), REPEATS)
    try:
        fit_estimate, _, _ = nannyml_estimates(d, True)
    except ImportError:
        return [row(case, ours_s, "nannyml CBPE", float("nan"), "faster", None,
                    "skipped: nannyml is not installed (it needs Python < 3.13)")]
    peer_s, _ = best_time(fit_estimate, REPEATS)
    speedup = peer_s / ours_s
    rows = [row(case, ours_s, "nannyml multiclass CBPE (fit + estimate, isotonic)", peer_s,
                "faster", speedup > 1, f"{speedup:.2f}x faster (NannyML's time / bayeval's)")]
    for calibrate in (True, False):
        diff, every = agreement(d, calibrate)
        what = "isotonic one-vs-rest maps, plug-in" if calibrate else "no calibration"
        rows.append(row(f"point estimates, {what}", float("nan"), "nannyml", float("nan"),
                        "max |diff| <= 1e-9", diff <= 1e-9 and every,
                        f"max |diff| of the {len(METRICS)} estimates over the chunks {diff:.1e}"
                        + ("" if every else "; NannyML left a class uncalibrated")))
    return rows


def run() -> list[dict]:
    with threadpool_limits(1, "blas"):
        return vs_nannyml()


if __name__ == "__main__":
    for r in run():
        print(r)
