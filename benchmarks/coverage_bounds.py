r"""Coverage of the Fréchet bounds' 95 % intervals, with few and with many weak-label patterns.

Population. :math:`Y \sim \mathrm{Cat}(\pi)` over :math:`K` classes (:math:`\pi = (0.4, 0.6)`
or uniform); labelling function :math:`j` votes with probability ``PROPENSITY[j]`` and, when it
votes, is right with probability ``ACCURACY[j]`` (else another class uniformly): one-coin
Dawid–Skene, conditionally independent given :math:`Y`, so the oracle
:math:`\beta_z = P(Y \mid Z = z)` follows by Bayes' rule over every pattern, the all-abstain one
included. The classifier depends on :math:`Y` and on the pattern: :math:`P(H = Y \mid Y, z) =
0.55 + 0.35\,s_z(Y)`, with :math:`s_z(y)` the share of the votes of :math:`z` for :math:`y`
(0.55 without votes), its errors uniform over the other classes. The exact law of
:math:`(Z, H, Y)` gives the population margins :math:`p_z, \alpha_z, \beta_z` and the population
bounds :math:`L, U` (:func:`~bayeval.methods.bounds.fast.metric_bounds`), the target.

Replication. :math:`n` items are one multinomial draw of the :math:`(z, h)` table (the bounds see
nothing else); the label model is the oracle :math:`\beta` or Dawid–Skene fitted to the drawn
patterns (:func:`~bayeval.methods.bounds.label_models.dawid_skene`, correctly specified here), and
:func:`~bayeval.methods.bounds.fast.exact_bounds` (what ``bounds(method="exact")`` reports) gives
each bound and its standard error twice: the default (``small_pattern_correction=True``: small
patterns pooled by label-model bin, kink correction) and the old plug-in
(``small_pattern_correction=False``). Both include a fitted label model's own sampling error, as
``bounds`` does by default (``label_model_uncertainty=True``); for the fitted label models a third
variant, ``fixed label model``, is the default with the label model treated as known (the
intervals before that error was included). A bound's 95 % interval
:math:`\hat B \pm 1.96\,\mathrm{SE}` covers when it holds the population :math:`L` (resp.
:math:`U`). ``majority vote`` cells use the soft majority vote, a crude label model (every vote
counted as right): the assumption fails, no coverage is promised, and the cell records how often
:func:`~bayeval.methods.bounds.label_models.majority_vote_concerns` warns.

Monte-Carlo error of a coverage :math:`\hat c` over :math:`R` independent replications:
:math:`\sqrt{\hat c(1 - \hat c)/R}` (0.009 at 0.95 with :math:`R = 600`).

``python -m benchmarks.coverage_bounds`` runs :data:`GRID` (2 and 4 classes x 2 and 4 labelling
functions x n = 1,000 and 5,000 x the oracle and Dawid–Skene, plus majority vote with 4
functions) with ``--replications`` (default 600) and prints the markdown table of
``docs/bounds.md``; ``--classes``, ``--lfs``, ``--n`` narrow it.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import zlib
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.methods.bounds.fast import exact_bounds, metric_bounds
from bayeval.methods.bounds.label_models import (
    dawid_skene,
    label_model_pullback,
    majority_vote,
    majority_vote_concerns,
)

SEED = 20261124
LEVEL = 0.95
ACCURACY = (0.8, 0.7, 0.75, 0.65)
PROPENSITY = (0.8, 0.6, 0.7, 0.5)
METRICS = ("accuracy", "macro_f1")
LABEL_MODELS = ("oracle", "dawid_skene", "majority_vote")
#: small_pattern_correction and label_model_uncertainty of each variant
VARIANTS = {"default": (True, True), "plug-in": (False, True), "fixed label model": (True, False)}


@dataclass(frozen=True)
class Cell:
    """One setting of the grid."""

    n_classes: int
    n_lfs: int
    n: int
    label_model: str

    def rng(self, seed: int, replication: int) -> np.random.Generator:
        """Fixed by the seed, the cell and the replication (a sub-grid reproduces the run)."""
        key = zlib.crc32(repr(astuple(self)).encode())
        return np.random.default_rng([seed, key, replication])


GRID = ([Cell(k, m, n, lm) for k in (2, 4) for m in (2, 4) for n in (1000, 5000)
         for lm in ("oracle", "dawid_skene")]
        + [Cell(k, 4, n, "majority_vote") for k in (2, 4) for n in (1000, 5000)])


# ---------------------------------------------------------------------------------------------
# population


def population(n_classes: int, n_lfs: int):
    """Every pattern (the all-abstain one included), P(z, h) and the oracle P(Y | z).

    Returns
    -------
    patterns : int array (n_patterns, n_lfs)
    joint_zh : float array (n_patterns, K), :math:`P(Z = z, H = h)`
    beta : float array (n_patterns, K)
    """
    k = n_classes
    prior = np.array([0.4, 0.6]) if k == 2 else np.full(k, 1.0 / k)
    patterns = np.array(list(itertools.product(range(-1, k), repeat=n_lfs)))
    joint = np.tile(prior, (len(patterns), 1))  # P(z, y)
    for j in range(n_lfs):
        vote = patterns[:, j][:, None]
        acc, prop = ACCURACY[j], PROPENSITY[j]
        hit = np.where(vote == np.arange(k), prop * acc, prop * (1 - acc) / (k - 1))
        joint *= np.where(vote == -1, 1 - prop, hit)
    votes = np.stack([(patterns == c).sum(axis=1) for c in range(k)], axis=1).astype(float)
    total = votes.sum(axis=1, keepdims=True)
    share = np.divide(votes, total, out=np.full_like(votes, 0.0), where=total > 0)
    right = np.where(total > 0, 0.55 + 0.35 * share, 0.55)  # P(H = y | y, z), (z, y)
    # P(h | y, z): right on the diagonal, the rest uniform
    h_given = np.where(np.eye(k, dtype=bool)[None], right[:, :, None],
                       ((1 - right) / (k - 1))[:, :, None])  # (z, y, h)
    joint_zyh = joint[:, :, None] * h_given
    return patterns, joint_zyh.sum(axis=1), joint / joint.sum(axis=1, keepdims=True)


def population_bounds(joint_zh, beta, metrics=METRICS) -> dict[str, tuple[float, float]]:
    """The population :math:`(L, U)` of each metric."""
    p = joint_zh.sum(axis=1)
    alpha = joint_zh / p[:, None]
    return {m: tuple(float(v) for v in metric_bounds(p, alpha, beta, m)) for m in metrics}


# ---------------------------------------------------------------------------------------------
# replications


def run_cell(cell: Cell, replications: int, seed: int = SEED) -> pd.DataFrame:
    """Coverage, Monte-Carlo sd and mean width of each bound's interval, per variant."""
    patterns, joint_zh, beta_true = population(cell.n_classes, cell.n_lfs)
    target = population_bounds(joint_zh, beta_true)
    z = stats.norm.ppf((1 + LEVEL) / 2)
    flat = joint_zh.ravel() / joint_zh.sum()
    rows, warned = [], 0
    for r in range(replications):
        rng = cell.rng(seed, r)
        table = rng.multinomial(cell.n, flat).reshape(joint_zh.shape)
        seen = table.sum(axis=1) > 0
        counts, pats = table[seen], patterns[seen]
        pullback = None
        if cell.label_model == "oracle":
            beta = beta_true[seen]
        elif cell.label_model == "dawid_skene":
            beta = dawid_skene(pats, counts.sum(axis=1), cell.n_classes)
        else:
            beta = majority_vote(pats, cell.n_classes, counts.sum(axis=1))
            ds = dawid_skene(pats, counts.sum(axis=1), cell.n_classes)
            warned += bool(majority_vote_concerns(pats, counts.sum(axis=1), ds))
        if cell.label_model != "oracle":
            pullback = partial(label_model_pullback, cell.label_model, pats, counts.sum(axis=1),
                               beta)
        for variant, (correction, fitted) in VARIANTS.items():
            if pullback is None and not fitted:
                continue  # a known label model: the same as the default
            out = exact_bounds(counts, beta, METRICS, small_pattern_correction=correction,
                               label_model_pullback=pullback if fitted else None)
            for m in METRICS:
                for i, side in enumerate(("lower", "upper")):
                    est, se = out[m][f"{side}_bound"], out[m][f"{side}_bound_sd"]
                    rows.append((variant, m, side, abs(est - target[m][i]) <= z * se,
                                 2 * z * se, est - target[m][i]))
    frame = pd.DataFrame(rows, columns=["variant", "metric", "bound", "covered", "width",
                                        "bias"])
    out = frame.groupby(["variant", "metric", "bound"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), bias=("bias", "mean"))
    out["mc_sd"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / replications)
    out["warned"] = warned / replications if cell.label_model == "majority_vote" else np.nan
    for key, value in zip(("n_classes", "n_lfs", "n", "label_model"), astuple(cell),
                          strict=True):
        out[key] = value
    out["R"] = replications
    return out.reset_index()


def markdown(frame: pd.DataFrame) -> str:
    """One row per (cell, metric, bound): coverage ± MC sd and width of the default, of the
    default with the label model fixed (its width ratio to it) and of the plug-in."""
    key = ["n_classes", "n_lfs", "n", "label_model", "metric", "bound"]
    wide = frame.pivot_table(index=key, columns="variant",
                             values=["coverage", "mc_sd", "width", "bias"], sort=False)
    warned = frame.groupby(key, sort=False)["warned"].first()
    lines = ["| K | LFs | n | label model | metric | bound | default: coverage ± MC sd | width |"
             " bias | label model fixed: coverage ± MC sd | width ratio | plug-in: coverage ± "
             "MC sd | width | bias |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for idx, row in wide.iterrows():
        k, m, n, lm, metric, bound = idx
        note = lm.replace("_", " ")
        if lm == "majority_vote":
            note += f" (warned {100 * warned[idx]:.0f} %)"
        cells = [str(k), str(m), f"{n:,}", note, metric, bound]
        for v in ("default", "fixed label model", "plug-in"):
            if ("coverage", v) not in row or np.isnan(row[("coverage", v)]):
                cells += ["—", "—"]
            elif v == "fixed label model":
                cells += [f"{row[('coverage', v)]:.3f} ± {row[('mc_sd', v)]:.3f}",
                          f"{row[('width', 'default')] / row[('width', v)]:.2f}"]
            else:
                cells += [f"{row[('coverage', v)]:.3f} ± {row[('mc_sd', v)]:.3f}",
                          f"{row[('width', v)]:.3f}", f"{row[('bias', v)]:+.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=600)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--classes", type=int, nargs="*", default=(2, 4))
    parser.add_argument("--lfs", type=int, nargs="*", default=(2, 4))
    parser.add_argument("--n", type=int, nargs="*", default=(1000, 5000))
    parser.add_argument("--csv", help="also write the long table here")
    args = parser.parse_args(argv)
    cells = [c for c in GRID if c.n_classes in args.classes and c.n_lfs in args.lfs
             and c.n in args.n]
    start, parts = time.perf_counter(), []
    for cell in cells:
        t = time.perf_counter()
        parts.append(run_cell(cell, args.replications, args.seed))
        print(f"# {cell}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    frame = pd.concat(parts, ignore_index=True)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(f"R = {args.replications} replications per cell, seed {args.seed}, "
          f"{datetime.now(UTC):%Y-%m-%d}, {time.perf_counter() - start:.0f} s\n")
    print(markdown(frame))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
