"""Coverage of multiclass CBPE's 95 % intervals for the realized metrics of K = 3 classes.

Two settings, each over ``R`` independent replications (a fresh analysis window, and a fresh
reference where there is one):

* ``calibrated``: class probabilities :math:`p_i\\sim\\mathrm{Dirichlet}(1,1,1)`, labels drawn
  from them, ``calibration="none"``; the intervals should hold the realized metric 95 % of the
  time (the laws are exact, the macro averages' normal);
* ``learned``: logits :math:`z_{ik}\\sim N(0,1.5^2)`, true probabilities
  :math:`\\mathrm{softmax}(z_i)`, the model reports :math:`\\mathrm{softmax}(0.6\\,z_i)`; the
  one-vs-rest isotonic maps are learned from a 1,000-row labelled reference
  and their posterior integrated (the default), against the plug-in
  (``calibration_uncertainty=False``); and the same windows and references with the
  multinomial Platt map (``calibration="multinomial"``, jointly normalised,
  :math:`p_{ik}\\propto\\exp(a_k+b\\log s_{ik})`, Dirichlet calibration with :math:`W=bI`)
  learned on the reference, its posterior integrated.

* ``classwise``: the same logits, the model reports :math:`\\mathrm{softmax}(Az_i)` with
  :math:`A=\\mathrm{diag}(1.8, 1, 0.55)` (:data:`CLASSWISE`): class 0 over-confident, class 2
  under-confident, a miscalibration the multinomial map's single slope cannot undo.
  :func:`classwise` measures, on the same windows (three chunks each) and references,
  ``calibration="auto"``, ``"multinomial"`` and ``"isotonic"`` with their posterior, per chunk
  and over the whole window, with the ratio of their intervals' mean width to the plug-in's
  (``calibration_uncertainty=False``) and how often ``"auto"`` chose each map.

Each row reports the coverage of every metric (accuracy, the per-class metrics pooled over the
classes, the macro averages; ROC-AUC per class, one-vs-rest on the raw scores, and its macro
average, scikit-learn's ``roc_auc_score(y, s, multi_class="ovr")``) with its Monte-Carlo
standard error
:math:`\\sqrt{c(1-c)/R}` (per-class: over the R x K intervals, which are not independent within a
replication, so that SE is a lower bound). Run ``python -m benchmarks.coverage_cbpe_multiclass``
(``--reps R`` for every cell, ``--cells`` to pick some by their position in :data:`CELLS`;
``--classwise N ...`` runs :func:`classwise` at those window sizes instead).
"""

from __future__ import annotations

import argparse

import numpy as np

from bayeval.methods.cbpe import cbpe
from bayeval.methods.cbpe.multiclass import select_class_map
from bayeval.multiclass import matrix_value, ovr_auc_value

K = 3
METRICS = ("accuracy", "precision", "recall", "f1", "macro_precision", "macro_recall",
           "macro_f1", "roc_auc", "macro_roc_auc")
CELLS = (("calibrated", 60, True), ("calibrated", 300, True), ("calibrated", 2000, True),
         ("learned", 300, True), ("learned", 3000, True), ("learned", 3000, False),
         ("learned", 300, True, "multinomial"), ("learned", 3000, True, "multinomial"))
"""(setting, rows, calibration_uncertainty[, calibration of the learned maps, default
isotonic]) of every cell of :func:`run`."""
TARGET = 0.93
CLASSWISE = np.array([1.8, 1.0, 0.55])
"""Class-specific logit scales of the ``classwise`` setting."""


def _labels(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(truth.shape[0])[:, None] > truth.cumsum(axis=1)).sum(axis=1).clip(
        max=truth.shape[1] - 1)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _case(setting: str, n: int, rng: np.random.Generator) -> dict:
    if setting == "calibrated":
        p = rng.dirichlet(np.ones(K), n)
        return {"scores": p, "truth": p}
    z = rng.normal(0.0, 1.5, (n, K))
    scale = CLASSWISE if setting == "classwise" else 0.6
    return {"scores": _softmax(scale * z), "truth": _softmax(z)}


def coverage(setting: str, n: int, reps: int, *, seed: int = 0, uncertainty: bool = True,
             n_reference: int = 1000, calibration: str = "isotonic"
             ) -> dict[str, tuple[float, float]]:
    """{metric: (coverage, Monte-Carlo SE)} of the whole-window 95 % intervals over ``reps``
    windows of ``n`` rows."""
    rng = np.random.default_rng(seed)
    hits = {m: [] for m in METRICS}
    for r in range(reps):
        window = _case(setting, n, rng)
        y = _labels(window["truth"], rng)
        kwargs = {"calibration": "none"}
        if setting == "learned":
            ref = _case(setting, n_reference, rng)
            kwargs = {"reference": (ref["scores"], _labels(ref["truth"], rng)),
                      "calibration": calibration, "calibration_uncertainty": uncertainty,
                      "random_seed": seed * 100_003 + r}
        ev = cbpe(window["scores"], metrics=list(METRICS), **kwargs)
        cf = ev.closed_form.sel(chunk="all")
        matrix = np.zeros((K, K))
        np.add.at(matrix, (y, window["scores"].argmax(axis=1)), 1)
        aucs = ovr_auc_value(y, window["scores"], 0.0)
        for m in METRICS:
            realized = (aucs if m == "roc_auc" else np.atleast_1d(aucs.mean()) if
                        m == "macro_roc_auc" else np.atleast_1d(matrix_value(m, matrix, 0.0)))
            lower = cf["lower"].sel(metric=m).values[: realized.size]
            upper = cf["upper"].sel(metric=m).values[: realized.size]
            hits[m].extend((lower - 1e-12 <= realized) & (realized <= upper + 1e-12))
    return {m: (float(np.mean(h)), float(np.sqrt(np.mean(h) * (1 - np.mean(h)) / len(h))))
            for m, h in hits.items()}


def _realized(y: np.ndarray, s: np.ndarray, m: str) -> np.ndarray:
    """The realized metric ``m`` of labels ``y`` and scores ``s`` (per class or one value)."""
    if m in ("roc_auc", "macro_roc_auc"):
        aucs = ovr_auc_value(y, s, 0.0)
        return aucs if m == "roc_auc" else np.atleast_1d(aucs.mean())
    matrix = np.zeros((K, K))
    np.add.at(matrix, (y, s.argmax(axis=1)), 1)
    return np.atleast_1d(matrix_value(m, matrix, 0.0))


def classwise(n: int, reps: int, *, seed: int = 0, n_reference: int = 1000,
              n_chunks: int = 3) -> dict:
    """Coverage of the ``classwise`` setting for ``"auto"``, ``"multinomial"`` and
    ``"isotonic"`` on the same windows of ``n`` rows and references: ``{calibration: {"chunk":
    {metric: (coverage, se)}, "whole": ..., "width": {metric: ratio}}}`` and ``"chosen"``
    ({map: share of the references where ``"auto"`` chose it})."""
    rng = np.random.default_rng(seed)
    cals = ("auto", "multinomial", "isotonic")
    hits = {c: {part: {m: [] for m in METRICS} for part in ("chunk", "whole")} for c in cals}
    width = {c: {m: [[], []] for m in METRICS} for c in cals}
    chosen = []
    for r in range(reps):
        window = _case("classwise", n, rng)
        y = _labels(window["truth"], rng)
        ref = _case("classwise", n_reference, rng)
        kwargs = {"reference": (ref["scores"], _labels(ref["truth"], rng)),
                  "random_seed": seed * 100_003 + r, "metrics": list(METRICS),
                  "n_chunks": n_chunks}
        evs, plug = {}, {}
        for c in cals:
            ev = cbpe(window["scores"], calibration=c, **kwargs)
            evs[c] = ev.closed_form
            if c == "auto":
                data = ev.tree["data"]
                chosen.append(str(data["calibrator"].values[data["chosen"].values][0]))
        for c in ("multinomial", "isotonic", "auto"):
            if c == "auto" and chosen[-1] == "multinomial":  # the same map, the same seed
                assert np.allclose(evs["auto"]["lower"], evs["multinomial"]["lower"],
                                   equal_nan=True)
                plug[c] = plug["multinomial"]
            else:
                plug[c] = cbpe(window["scores"], calibration=c, calibration_uncertainty=False,
                               **kwargs).closed_form
        for c in cals:
            cf = evs[c]
            ends = np.r_[0, np.cumsum(cf["n"].values[:-1])]
            for i, label in enumerate(cf["chunk"].values):
                rows = (slice(None) if i == cf.sizes["chunk"] - 1 else
                        slice(ends[i], ends[i + 1]))
                part = "whole" if i == cf.sizes["chunk"] - 1 else "chunk"
                for m in METRICS:
                    real = _realized(y[rows], window["scores"][rows], m)
                    lo = cf["lower"].sel(chunk=label, metric=m).values[: real.size]
                    hi = cf["upper"].sel(chunk=label, metric=m).values[: real.size]
                    hits[c][part][m].extend((lo - 1e-12 <= real) & (real <= hi + 1e-12))
                    if part == "whole":
                        p = plug[c].sel(chunk=label, metric=m)
                        width[c][m][0].extend(hi - lo)
                        width[c][m][1].extend((p["upper"] - p["lower"]).values[: real.size])
    out = {c: {part: {m: (float(np.mean(h)), float(np.sqrt(np.mean(h) * (1 - np.mean(h))
                                                           / len(h))))
                      for m, h in hits[c][part].items()} for part in ("chunk", "whole")}
           for c in cals}
    for c in cals:
        out[c]["width"] = {m: float(np.mean(w[0]) / np.mean(w[1])) for m, w in width[c].items()}
    out["chosen"] = {name: chosen.count(name) / reps for name in dict.fromkeys(chosen)}
    return out


def auto_choices(setting: str, reps: int, *, seed: int = 0, n_reference: int = 1000) -> dict:
    """How often ``"auto"`` chooses each map on ``reps`` references of ``setting``."""
    rng = np.random.default_rng(seed)
    picks = []
    for r in range(reps):
        ref = _case(setting, n_reference, rng)
        picks.append(select_class_map(ref["scores"], _labels(ref["truth"], rng),
                                      random_seed=np.random.default_rng([r, 29]))[0])
    return {name: picks.count(name) / reps for name in dict.fromkeys(picks)}


def run(reps: int = 400, reps_learned: int = 200, cells=None, report=None) -> list[dict]:
    rows = []
    for setting, n, uncertainty, *cal in (CELLS if cells is None else [CELLS[c] for c in cells]):
        r = reps if setting == "calibrated" else reps_learned
        calibration = cal[0] if cal else "isotonic"
        cov = coverage(setting, n, r, seed=n + 7 * uncertainty, uncertainty=uncertainty,
                       calibration=calibration)  # the same windows for every calibration
        worst = min(c for c, _ in cov.values())
        what = "" if setting == "calibrated" else (
            f" {calibration}" + (", map posterior" if uncertainty else ", plug-in map"))
        rows.append({"benchmark": "coverage_cbpe_multiclass",
                     "case": f"{setting}{what}, n = {n}, K = {K}, R = {r}",
                     "target": f">= {TARGET} per metric", "ok": worst >= TARGET,
                     "note": "; ".join(f"{m} {c:.3f} ({se:.3f})" for m, (c, se) in cov.items())})
        if report is not None:  # each cell as it ends
            report(rows[-1])
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, help="replications of every cell")
    parser.add_argument("--cells", type=int, nargs="+", help="positions in CELLS")
    parser.add_argument("--classwise", type=int, nargs="+", help="window sizes of classwise")
    parser.add_argument("--choices", help="a setting whose references auto chooses a map on")
    args = parser.parse_args()
    if args.choices:
        print(auto_choices(args.choices, args.reps or 200), flush=True)
        raise SystemExit
    if args.classwise:
        for n in args.classwise:
            print({"n": n, "reps": args.reps or 200,
                   **classwise(n, args.reps or 200, seed=n)}, flush=True)
        raise SystemExit
    reps = {} if args.reps is None else {"reps": args.reps, "reps_learned": args.reps}
    run(cells=args.cells, report=lambda row: print(row, flush=True), **reps)
