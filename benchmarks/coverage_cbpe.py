r"""Coverage of CBPE's 95 % intervals when the calibration map is learned from a finite reference.

Each replication draws a fresh labelled reference and a fresh analysis period, independently, from
one of three designs (:data:`DESIGNS`), runs :func:`bayeval.methods.cbpe.cbpe` on them twice with
the same ``random_seed`` (so the same calibrator is chosen and fitted) -- the default, which
integrates over the posterior of the calibration map, and ``calibration_uncertainty=False``, the
plug-in answer conditional on the fitted map -- and records, for every analysis chunk and for the
whole period, whether the interval holds the window's **realized** metric (computed from the
analysis labels, which the method never sees: they enter only as ``labels=`` for the report).

Designs (:math:`\sigma` the logistic function):

* ``calibrated``: :math:`s\sim\mathrm{Beta}(2,2)`, :math:`y\sim\mathrm{Bernoulli}(s)`;
* ``over-confident``: :math:`p\sim\mathrm{Beta}(2,4)`,
  :math:`s=\sigma(2.5\,\mathrm{logit}\,p+0.8)`, :math:`y\sim\mathrm{Bernoulli}(p)`;
* ``covariate shift``: the over-confident map, :math:`p\sim\mathrm{Beta}(2,4)` in the reference
  and :math:`p\sim\mathrm{Beta}(4,2)` in the analysis period: :math:`P(Y\mid s)` is the same in
  both, only the law of the scores moves;
* ``concept shift`` (the method's assumption fails): :math:`p\sim\mathrm{Beta}(2,4)` in both
  periods, the reference's model is the over-confident one and the analysis period's is more so,
  :math:`s=\sigma(4\,\mathrm{logit}\,p+0.8)`: :math:`P(Y\mid s)` differs between the periods,
  no interval is promised to cover, and the question is whether ``sparse_share`` warns.

Besides coverage and widths, each replication records the shift diagnostic: the whole period's
``sparse_share`` (share of rows whose score lies where the reference had fewer than 10 rows per
half unit of logit) and whether the result warned (``sparse_share`` above
:data:`~bayeval.methods.cbpe.api.SHIFT_WARN` in a chunk or the whole period).

Monte-Carlo errors. The whole-period indicator is one Bernoulli per replication: its coverage
:math:`\hat c` over :math:`R` replications has standard error :math:`\sqrt{\hat c(1-\hat c)/R}`
(0.015 at 0.95 with :math:`R=200`). The chunks of one replication share the reference, hence the
fitted map and its error, so their indicators are correlated: the per-chunk coverage's standard
error is the sd of the :math:`R` per-replication fractions over :math:`\sqrt R`, never more than
the whole period's at the same coverage (the variance of a mean of correlated indicators is at
most that of one indicator). Both are computed the same way here, ``sd(ddof=1) / sqrt(R)``.

``python -m benchmarks.coverage_cbpe`` runs the grid (:data:`GRID`, 48 cells: 4 designs x
references of 500, 1,000 and 5,000 rows x chunks of 200 and 1,000 rows x 5 and 10 chunks,
``calibration="auto"``) and prints the tables in markdown; ``--calibration isotonic`` runs the same
grid with isotonic regression, ``--replications`` and ``--design`` narrow it. ``--preset docs``
runs the cells (and replications per cell) of ``docs/coverage.md`` (:data:`DOCS_RUN`): about
4.5 hours on one core of a loaded machine (2.5 with R = 100 everywhere, on 2026-11-24). The
default's 400 drawn maps cost 0.3-6.2 s per call there (each chunk's counts are mixed over the
draws exactly, the whole period's by the shift kernel), where the plug-in takes 0.05-1.0 s.
``--metric-set outputs`` checks NannyML's other outputs instead (:data:`METRIC_SETS`): the
confusion-matrix cells normalised by the actual class, a business value and average precision
(its interval from 2,000 draws of the labels).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
import zlib
from collections import Counter
from dataclasses import astuple, dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from scipy import special
from threadpoolctl import threadpool_limits

import bayeval as be
from bayeval.methods.cbpe import cbpe
from bayeval.methods.cbpe.api import SHIFT_WARN

SEED = 20261124
METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc")
#: ``--metric-set``: the metrics asked for and the options that go with them
METRIC_SETS = {"default": (METRICS, {}),
               "outputs": (("confusion_matrix", "business_value", "average_precision"),
                           {"normalize_confusion_matrix": "true",
                            "business_value_matrix": [[1.0, -2.0], [-10.0, 5.0]]})}
LEVEL = 0.95
#: the two answers compared, as keyword arguments of ``cbpe``: the default, and the plug-in
VARIANTS = {"default": {}, "plug-in": {"calibration_uncertainty": False}}
#: a realized metric equal to an interval end (common: the metrics live on a lattice) is inside;
#: the distinct values of a metric of n <= 10^4 rows are at least ~1/(2n)^2 = 2.5e-9 apart
TOUCH = 1e-12


# ---------------------------------------------------------------------------------------------
# designs


def _over_confident(p: np.ndarray) -> np.ndarray:
    """The model's score for a true probability p: :math:`\\sigma(2.5\\,\\mathrm{logit}\\,p+0.8)`
    (too extreme, and shifted up)."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return special.expit(2.5 * special.logit(p) + 0.8)


def _period(rng: np.random.Generator, n: int, a: float, b: float,
            score_of) -> tuple[np.ndarray, np.ndarray]:
    p = rng.beta(a, b, n)
    return score_of(p), (rng.random(n) < p).astype(float)


def calibrated(rng, n_ref, n_analysis):
    r"""Scores calibrated in truth: :math:`s\sim\mathrm{Beta}(2,2)`,
    :math:`y\sim\mathrm{Bern}(s)`."""
    return (*_period(rng, n_ref, 2, 2, np.asarray),
            *_period(rng, n_analysis, 2, 2, np.asarray))


def over_confident(rng, n_ref, n_analysis):
    r""":math:`p\sim\mathrm{Beta}(2,4)`, :math:`s=\sigma(2.5\,\mathrm{logit}\,p+0.8)`,
    :math:`y\sim\mathrm{Bern}(p)`, in both periods."""
    return (*_period(rng, n_ref, 2, 4, _over_confident),
            *_period(rng, n_analysis, 2, 4, _over_confident))


def covariate_shift(rng, n_ref, n_analysis):
    r"""The over-confident map with :math:`p\sim\mathrm{Beta}(2,4)` in the reference and
    :math:`\mathrm{Beta}(4,2)` in the analysis period (:math:`P(Y\mid s)` unchanged)."""
    return (*_period(rng, n_ref, 2, 4, _over_confident),
            *_period(rng, n_analysis, 4, 2, _over_confident))


def _more_over_confident(p: np.ndarray) -> np.ndarray:
    r""":math:`\sigma(4\,\mathrm{logit}\,p+0.8)`: the analysis model of the concept shift."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return special.expit(4 * special.logit(p) + 0.8)


def concept_shift(rng, n_ref, n_analysis):
    r""":math:`p\sim\mathrm{Beta}(2,4)` in both periods; the reference's scores are
    :math:`\sigma(2.5\,\mathrm{logit}\,p+0.8)`, the analysis period's
    :math:`\sigma(4\,\mathrm{logit}\,p+0.8)`: :math:`P(Y\mid s)` changes (the method's
    assumption fails)."""
    return (*_period(rng, n_ref, 2, 4, _over_confident),
            *_period(rng, n_analysis, 2, 4, _more_over_confident))


#: name -> simulator ``(rng, n_ref, n_analysis) -> (ref scores, ref labels, scores, labels)``
DESIGNS = {"calibrated": calibrated, "over-confident": over_confident,
           "covariate shift": covariate_shift, "concept shift": concept_shift}
#: the designs where the method's assumption (P(Y | s) the same in both periods) holds
ASSUMPTION_HOLDS = ("calibrated", "over-confident", "covariate shift")


@dataclass(frozen=True)
class Cell:
    """One setting of the grid."""

    design: str
    n_ref: int
    chunk_size: int
    n_chunks: int
    calibration: str = "auto"

    def rng(self, seed: int, replication: int) -> np.random.Generator:
        """The generator of one replication: fixed by the seed, the cell and the replication
        (not by the other cells run), so that a sub-grid reproduces the full run's numbers."""
        key = zlib.crc32(repr(astuple(self)).encode())
        return np.random.default_rng([seed, key, replication])


def grid(calibration: str = "auto", designs=tuple(DESIGNS)) -> list[Cell]:
    """The cells: every design x references of 500, 1,000, 5,000 rows x chunks of 200 and 1,000
    rows x 5 and 10 chunks."""
    return [Cell(d, n_ref, size, k, calibration) for d in designs for n_ref in (500, 1000, 5000)
            for size in (200, 1000) for k in (5, 10)]


GRID = grid()

#: the cells (design, reference, chunk size, chunks) where the assumption holds whose R = 100
#: run left a default coverage under 0.93: ``docs/coverage.md`` shows them with R = 400 (their
#: first 100 replications are the same draws)
LONGER = tuple(Cell(*key) for key in (
    ("calibrated", 500, 200, 10), ("calibrated", 1000, 200, 5), ("calibrated", 1000, 1000, 10),
    ("calibrated", 5000, 200, 5), ("calibrated", 5000, 200, 10), ("calibrated", 5000, 1000, 5),
    ("over-confident", 500, 200, 5), ("over-confident", 500, 1000, 5),
    ("over-confident", 1000, 200, 5), ("over-confident", 1000, 1000, 5),
    ("over-confident", 1000, 1000, 10), ("over-confident", 5000, 200, 10),
    ("over-confident", 5000, 1000, 5), ("over-confident", 5000, 1000, 10),
    ("covariate shift", 500, 200, 10), ("covariate shift", 500, 1000, 10),
    ("covariate shift", 5000, 1000, 5)))

#: the run of ``docs/coverage.md``: (cell, replications). Every cell of :data:`GRID` where the
#: assumption holds (R = 100, 400 for :data:`LONGER`); the concept shift with references of 500,
#: 1,000 and 5,000 rows and 5 chunks of 1,000 rows; isotonic regression on a 500-row reference
#: (its known ROC-AUC bias).
DOCS_RUN = ([(cell, 400 if cell in LONGER else 100) for cell in GRID
             if cell.design in ASSUMPTION_HOLDS]
            + [(Cell("concept shift", n_ref, 1000, 5), 100) for n_ref in (500, 1000, 5000)]
            + [(Cell("over-confident", 500, 1000, 5, "isotonic"), 100)])


# ---------------------------------------------------------------------------------------------
# one replication


def replicate(cell: Cell, seed: int, replication: int, metrics=METRICS,
              variants=tuple(VARIANTS)) -> dict[str, dict]:
    """Run every variant on one draw of the cell's data.

    Returns, per variant, the rows' ``names`` (the metrics, or the outputs' rows), ``covered``
    and ``width`` (arrays of shape (chunks + 1, metrics), the
    whole period last), ``seconds`` (the call's wall time), ``calibration`` (the calibrator
    fitted on the reference) and ``sparse_share`` (the whole period's share of rows whose score
    lies where the reference is thin; NaN when the result has none) and ``warned`` (whether the
    result warned about it: above :data:`~bayeval.methods.cbpe.api.SHIFT_WARN` in some window).
    """
    rng = cell.rng(seed, replication)
    ref_scores, ref_labels, scores, labels = DESIGNS[cell.design](
        rng, cell.n_ref, cell.chunk_size * cell.n_chunks)
    random_seed = int(rng.integers(2**31))  # the calibration's folds: shared by the variants
    out = {}
    for variant in variants:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # notes of small references are expected here
            ev = cbpe(scores, reference=(ref_scores, ref_labels), labels=labels,
                      chunk_size=cell.chunk_size, calibration=cell.calibration,
                      metrics=list(metrics), ci_prob=LEVEL, random_seed=random_seed,
                      **VARIANTS[variant], **dict(METRIC_SETS["outputs"][1]
                                                  if "business_value" in metrics else {}))
        seconds = time.perf_counter() - start
        closed = ev.closed_form
        lower, upper, realized = (closed[k].transpose("chunk", "metric").to_numpy()
                                  for k in ("lower", "upper", "realized"))
        shares = (closed["sparse_share"].to_numpy() if "sparse_share" in closed
                  else np.full(1, np.nan))
        warned = any("(sparse_share)" in note for note in ev.meta["warnings"])
        assert warned == bool((shares > SHIFT_WARN).any())  # the note is the diagnostic's
        out[variant] = {"names": closed["metric"].values.tolist(),
                        "covered": (lower - TOUCH <= realized) & (realized <= upper + TOUCH),
                        "width": upper - lower, "seconds": seconds,
                        "calibration": ev.meta["calibration"], "sparse_share": shares[-1],
                        "warned": warned}
    return out


# ---------------------------------------------------------------------------------------------
# the grid


def _mc(values: np.ndarray) -> tuple[float, float]:
    """Mean over replications (axis 0) and its standard error sd(ddof=1) / sqrt(R)."""
    r = values.shape[0]
    return values.mean(0), values.std(0, ddof=1) / np.sqrt(r) if r > 1 else np.nan


def summarise(cell: Cell, runs: list[dict]) -> list[dict]:
    """Rows (one per variant and metric) of a cell from its replications (:func:`replicate`)."""
    rows = []
    variants = list(runs[0])
    metrics = runs[0][variants[0]]["names"]
    widths = {}
    for variant in variants:
        width = np.stack([run[variant]["width"] for run in runs])
        widths[variant] = (width[:, :-1].mean((0, 1)), width[:, -1].mean(0))
    for variant in variants:
        covered = np.stack([run[variant]["covered"] for run in runs]).astype(float)
        chunk, chunk_se = _mc(covered[:, :-1].mean(1))  # per-replication fractions
        whole, whole_se = _mc(covered[:, -1])
        base = widths.get("plug-in", widths[variant])
        seconds = np.mean([run[variant]["seconds"] for run in runs])
        sparse = np.mean([run[variant].get("sparse_share", np.nan) for run in runs])
        warned = np.mean([run[variant].get("warned", False) for run in runs])
        chosen = Counter(run[variant]["calibration"] for run in runs)
        chosen_text = ", ".join(f"{name} {n / len(runs):.0%}" for name, n in chosen.most_common())
        for j, metric in enumerate(metrics):
            rows.append({
                "design": cell.design, "n_ref": cell.n_ref, "chunk_size": cell.chunk_size,
                "n_chunks": cell.n_chunks, "calibration": cell.calibration,
                "variant": variant, "metric": metric,
                "coverage_chunk": chunk[j], "se_chunk": chunk_se[j],
                "coverage_whole": whole[j], "se_whole": whole_se[j],
                "width_chunk": widths[variant][0][j], "width_whole": widths[variant][1][j],
                "width_ratio_chunk": widths[variant][0][j] / base[0][j],
                "width_ratio_whole": widths[variant][1][j] / base[1][j],
                "seconds_per_call": seconds, "sparse_share": sparse, "warned": warned,
                "calibrators": chosen_text,
                "replications": len(runs)})
    return rows


def run(replications: int = 200, seed: int = SEED, cells=None, metrics=METRICS,
        variants=tuple(VARIANTS), progress: bool = False) -> pd.DataFrame:
    """Coverage, Monte-Carlo standard errors, widths and time of every cell.

    Parameters
    ----------
    replications : int
        Fresh reference and analysis draws per cell (when a cell does not give its own).
    seed : int
    cells : sequence of Cell or of (Cell, replications), optional
        Default: :data:`GRID`.
    metrics : sequence of str
    variants : sequence of str
        Keys of :data:`VARIANTS`; the width ratios are to ``"plug-in"`` when it is run.
    progress : bool
        Print a line per cell.

    Returns
    -------
    DataFrame
        One row per cell, variant and metric: ``coverage_chunk`` (pooled over chunks and
        replications) and ``se_chunk``, ``coverage_whole`` and ``se_whole``, mean interval
        widths ``width_chunk`` and ``width_whole``, their ratios to the plug-in's, the mean
        ``seconds_per_call``, the mean whole-period ``sparse_share``, the share of replications
        where the result warned about it (``warned``) and the share of each calibrator chosen
        (``calibrators``).
    """
    rows = []
    for item in GRID if cells is None else cells:
        cell, r = item if isinstance(item, tuple) else (item, replications)
        start = time.perf_counter()
        with threadpool_limits(1, "blas"):
            runs = [replicate(cell, seed, i, metrics, variants) for i in range(r)]
        rows += summarise(cell, runs)
        if progress:
            print(f"{cell}, R={r}: {time.perf_counter() - start:.0f} s", file=sys.stderr,
                  flush=True)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# tables


def _setting(key) -> str:
    design, n_ref, size, k, calibration = key
    return f"{design} | {n_ref:,} | {k} x {size:,} | {calibration}"


def _pair(frame: pd.DataFrame, column: str, variants, digits: int = 2) -> str:
    by = frame.set_index("variant")[column]
    return " / ".join(f"{by[v]:.{digits}f}" for v in variants if v in by.index)


def markdown(df: pd.DataFrame) -> str:
    """Three tables: whole-period coverage, per-chunk coverage (each ``plug-in / default`` per
    metric, with the largest Monte-Carlo SE of the row's default and plug-in's), and widths,
    times and the shift diagnostic per cell."""
    variants = [v for v in ("plug-in", "default") if v in set(df["variant"])]
    metrics = list(dict.fromkeys(df["metric"]))
    keys = ["design", "n_ref", "chunk_size", "n_chunks", "calibration"]
    groups = list(df.groupby(keys, sort=False))
    head = "| design | reference | chunks | calibration | R | "
    rule = "|---|---|---|---|---|"
    lines = []
    for title, column in (("whole period", "coverage_whole"), ("per chunk", "coverage_chunk")):
        se = column.replace("coverage", "se")
        lines += [f"**Coverage of the realized metric, {title}** ({' / '.join(variants)}; "
                  "SE: the largest Monte-Carlo standard error of the row, default's and "
                  "plug-in's)", "", head + " | ".join(metrics) + " | SE (default) | SE (max) |",
                  rule + "---|" * (len(metrics) + 2)]
        for key, frame in groups:
            cells = [_pair(frame[frame["metric"] == m], column, variants) for m in metrics]
            default = frame[frame["variant"] == variants[-1]]
            lines.append(f"| {_setting(key)} | {frame['replications'].iloc[0]} | "
                         + " | ".join(cells)
                         + f" | {default[se].max():.3f} | {frame[se].max():.3f} |")
        lines.append("")
    lines += ["**Mean interval width** (whole period, per chunk; "
              f"{' / '.join(variants)}), width ratio default / plug-in (range over the metrics),"
              " seconds per call, the whole period's mean share of rows where the reference is "
              "thin (`sparse_share`), the share of replications where it warned, and the "
              "calibrators chosen", "",
              head + f"width whole ({metrics[0]}) | width chunk ({metrics[0]}) | ratio whole | "
              "ratio chunk | s per call | sparse share | warned | calibrators |",
              rule + "---|" * 8]
    for key, frame in groups:
        acc = frame[frame["metric"] == metrics[0]]
        default = frame[frame["variant"] == variants[-1]]
        ratios = [f"{default[c].min():.2f}-{default[c].max():.2f}"
                  for c in ("width_ratio_whole", "width_ratio_chunk")]
        lines.append(f"| {_setting(key)} | {frame['replications'].iloc[0]} | "
                     f"{_pair(acc, 'width_whole', variants, 4)} | "
                     f"{_pair(acc, 'width_chunk', variants, 4)} | {ratios[0]} | {ratios[1]} | "
                     f"{_pair(acc, 'seconds_per_call', variants, 3)} | "
                     f"{default['sparse_share'].iloc[0]:.1%} | "
                     f"{default['warned'].iloc[0]:.0%} | "
                     f"{default['calibrators'].iloc[0]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage_cbpe",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=["grid", "docs"], default="grid",
                        help="grid: GRID (default); docs: the cells of docs/coverage.md")
    parser.add_argument("--replications", type=int, default=None,
                        help="per cell (default 200; with --preset docs, the preset's)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--calibration", default="auto", help="auto (default), isotonic, ...")
    parser.add_argument("--design", action="append", choices=list(DESIGNS),
                        help="run only this design (repeatable)")
    parser.add_argument("--plug-in-only", action="store_true",
                        help="run calibration_uncertainty=False only")
    parser.add_argument("--metric-set", choices=list(METRIC_SETS), default="default",
                        help="default: the five metrics; outputs: cells, value, AP")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    designs = tuple(args.design or DESIGNS)
    if args.preset == "docs":
        cells = [(cell, args.replications or r) for cell, r in DOCS_RUN
                 if cell.design in designs]
    else:
        cells = [(cell, args.replications or 200) for cell in grid(args.calibration, designs)]
    variants = ("plug-in",) if args.plug_in_only else tuple(VARIANTS)
    start = time.perf_counter()
    df = run(seed=args.seed, cells=cells, metrics=METRIC_SETS[args.metric_set][0],
             variants=variants, progress=True)
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(f"Run on {datetime.now(UTC):%Y-%m-%d} ({platform.machine()}, "
          f"{platform.python_implementation()} {platform.python_version()}, numpy "
          f"{np.__version__}, bayeval {be.__version__}), seed {args.seed}, in "
          f"{(time.perf_counter() - start) / 60:.1f} minutes on one core.\n")
    print(markdown(df))
    return 0


if __name__ == "__main__":
    sys.exit(main())
