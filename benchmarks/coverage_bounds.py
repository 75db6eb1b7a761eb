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
``docs/bounds.md``; ``--classes``, ``--lfs``, ``--n``, ``--label-models`` and
``--without-copies`` narrow it, and ``--per-class`` adds the precision, recall and F1 of every
class (one vs the rest) for :math:`K > 2`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import zlib
from dataclasses import astuple, dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.methods.bounds import bounds
from bayeval.methods.bounds.fast import class_metrics, exact_bounds, metric_bounds
from bayeval.methods.bounds.label_models import (
    dawid_skene,
    dawid_skene_fit,
    label_model_delta,
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
    """One setting of the grid; ``duplicate``: a near-copy of labelling function 0 is added."""

    n_classes: int
    n_lfs: int
    n: int
    label_model: str
    duplicate: bool = False

    def rng(self, seed: int, replication: int) -> np.random.Generator:
        """Fixed by the seed, the cell and the replication (a sub-grid reproduces the run)."""
        key = zlib.crc32(repr(astuple(self)[:4] if not self.duplicate else astuple(self))
                         .encode())
        return np.random.default_rng([seed, key, replication])


GRID = ([Cell(k, m, n, lm) for k in (2, 4) for m in (2, 4) for n in (1000, 5000)
         for lm in ("oracle", "dawid_skene")]
        + [Cell(k, 4, n, "majority_vote") for k in (2, 4) for n in (1000, 5000)]
        + [Cell(k, 4, n, "dawid_skene", duplicate=True) for k in (2, 4) for n in (1000, 5000)])
#: the near-copy repeats labelling function 0's output with this probability (else it votes
#: independently with function 0's accuracy and propensity)
COPY = 0.9


# ---------------------------------------------------------------------------------------------
# population


def _vote_law(patterns, j, k, lf):
    """P(lambda_j = z_j | y) of labelling function ``lf``'s one-coin law, shape (patterns, K)."""
    vote = patterns[:, j][:, None]
    acc, prop = ACCURACY[lf], PROPENSITY[lf]
    hit = np.where(vote == np.arange(k), prop * acc, prop * (1 - acc) / (k - 1))
    return np.where(vote == -1, 1 - prop, hit)


def population_joint(n_classes: int, n_lfs: int, duplicate: bool = False):
    """Every pattern (the all-abstain one included) and :math:`P(Z = z, Y = y, H = h)`.

    With ``duplicate`` a function ``n_lfs`` is added: with probability ``COPY`` it repeats
    function 0's output, else it votes as function 0 would, independently given :math:`Y`.

    Returns
    -------
    patterns : int array (n_patterns, n_lfs [+ 1])
    joint_zyh : float array (n_patterns, K, K)
    """
    k = n_classes
    prior = np.array([0.4, 0.6]) if k == 2 else np.full(k, 1.0 / k)
    width = n_lfs + int(duplicate)
    patterns = np.array(list(itertools.product(range(-1, k), repeat=width)))
    joint = np.tile(prior, (len(patterns), 1))  # P(z, y)
    for j in range(n_lfs):
        joint *= _vote_law(patterns, j, k, j)
    if duplicate:
        same = (patterns[:, n_lfs] == patterns[:, 0])[:, None]
        joint *= COPY * same + (1 - COPY) * _vote_law(patterns, n_lfs, k, 0)
    votes = np.stack([(patterns == c).sum(axis=1) for c in range(k)], axis=1).astype(float)
    total = votes.sum(axis=1, keepdims=True)
    share = np.divide(votes, total, out=np.full_like(votes, 0.0), where=total > 0)
    right = np.where(total > 0, 0.55 + 0.35 * share, 0.55)  # P(H = y | y, z), (z, y)
    # P(h | y, z): right on the diagonal, the rest uniform
    h_given = np.where(np.eye(k, dtype=bool)[None], right[:, :, None],
                       ((1 - right) / (k - 1))[:, :, None])  # (z, y, h)
    return patterns, joint[:, :, None] * h_given


def population(n_classes: int, n_lfs: int, duplicate: bool = False):
    """Every pattern, P(z, h) and the oracle P(Y | z) (:func:`population_joint`).

    Returns
    -------
    patterns : int array (n_patterns, n_lfs)
    joint_zh : float array (n_patterns, K), :math:`P(Z = z, H = h)`
    beta : float array (n_patterns, K)
    """
    patterns, joint_zyh = population_joint(n_classes, n_lfs, duplicate)
    joint_zy = joint_zyh.sum(axis=2)
    return patterns, joint_zyh.sum(axis=1), joint_zy / joint_zy.sum(axis=1, keepdims=True)


def one_class_metrics(n_classes: int) -> tuple[str, ...]:
    """Precision, recall and F1 of every class, one vs the rest (for ``--per-class``)."""
    return tuple(key for m in ("precision", "recall", "f1") for key in class_metrics(m, n_classes))


def true_metrics(joint_zyh, metrics=METRICS) -> dict[str, float]:
    """The classifier's metric values in the population (accuracy, macro-F1 and each class's
    precision, recall and F1 as scikit-learn defines them)."""
    hy = joint_zyh.sum(axis=0).T  # (h, y)
    diag, predicted, actual = np.diag(hy), hy.sum(axis=1), hy.sum(axis=0)
    values = {"accuracy": diag.sum(), "macro_f1": np.mean(2 * diag / (predicted + actual))}
    for c in range(len(diag)):
        values[f"precision[{c}]"] = diag[c] / predicted[c]
        values[f"recall[{c}]"] = diag[c] / actual[c]
        values[f"f1[{c}]"] = 2 * diag[c] / (predicted[c] + actual[c])
    return {m: float(values[m]) for m in metrics}


def population_bounds(joint_zh, beta, metrics=METRICS) -> dict[str, tuple[float, float]]:
    """The population :math:`(L, U)` of each metric."""
    p = joint_zh.sum(axis=1)
    alpha = joint_zh / p[:, None]
    return {m: tuple(float(v) for v in metric_bounds(p, alpha, beta, m)) for m in metrics}


# ---------------------------------------------------------------------------------------------
# replications


def _items(table, patterns):
    """The items of a (pattern, prediction) table: y_pred and weak labels."""
    idx = np.repeat(np.arange(table.size), table.ravel())
    return idx % table.shape[1], patterns[idx // table.shape[1]]


def _fitted(cell: Cell, pats, counts):
    """The label model of a replication and its delta method's arguments."""
    if cell.label_model == "dawid_skene":
        beta = dawid_skene(pats, counts.sum(axis=1), cell.n_classes)
    else:
        beta = majority_vote(pats, cell.n_classes, counts.sum(axis=1))
    delta = label_model_delta(cell.label_model, pats, counts.sum(axis=1), beta)
    return beta, delta.error_terms()


def run_cell(cell: Cell, replications: int, seed: int = SEED,
             metrics: tuple[str, ...] = METRICS) -> pd.DataFrame:
    """Coverage, Monte-Carlo sd, mean width, bias and SE / sd of each bound's interval, per
    variant; ``bound == "truth"``: the interval of the identified set, [lower end of the lower
    bound's interval, upper end of the upper bound's], holding the true metric."""
    patterns, joint_zyh = population_joint(cell.n_classes, cell.n_lfs, cell.duplicate)
    _, joint_zh, beta_true = population(cell.n_classes, cell.n_lfs, cell.duplicate)
    target = population_bounds(joint_zh, beta_true, metrics)
    truth = true_metrics(joint_zyh, metrics)
    z = stats.norm.ppf((1 + LEVEL) / 2)
    flat = joint_zh.ravel() / joint_zh.sum()
    rows, warned = [], 0
    for r in range(replications):
        rng = cell.rng(seed, r)
        table = rng.multinomial(cell.n, flat).reshape(joint_zh.shape)
        seen = table.sum(axis=1) > 0
        counts, pats = table[seen], patterns[seen]
        error = {}
        if cell.label_model == "oracle":
            beta = beta_true[seen]
        else:
            beta, error = _fitted(cell, pats, counts)
        if cell.label_model == "majority_vote":
            ds = dawid_skene(pats, counts.sum(axis=1), cell.n_classes)
            warned += bool(majority_vote_concerns(pats, counts.sum(axis=1), ds))
        elif cell.label_model == "dawid_skene":
            warned += dawid_skene_fit(pats, counts.sum(axis=1), beta)["misfit"]
        results = {}
        for variant, (correction, fitted) in VARIANTS.items():
            if (not error and not fitted) or (cell.duplicate and not fitted):
                continue  # a known label model: the same as the default
            results[variant] = exact_bounds(counts, beta, metrics,
                                            small_pattern_correction=correction,
                                            **(error if fitted else {}))
        if cell.duplicate:  # bounds() widens where the label model does not fit
            results["all LFs"] = results["default"]
            ev = bounds(*_items(counts, pats), metrics=list(metrics))
            results["default"] = ev.closed_form.to_dataframe().T.to_dict()
        for variant, out in results.items():
            for m in metrics:
                ends = []
                for i, side in enumerate(("lower", "upper")):
                    est, se = out[m][f"{side}_bound"], out[m][f"{side}_bound_sd"]
                    ends.append(est + (2 * i - 1) * z * se)
                    rows.append((variant, m, side, abs(est - target[m][i]) <= z * se,
                                 2 * z * se, est - target[m][i], se))
                rows.append((variant, m, "truth", ends[0] <= truth[m] <= ends[1],
                             ends[1] - ends[0], np.nan, np.nan))
    frame = pd.DataFrame(rows, columns=["variant", "metric", "bound", "covered", "width",
                                        "bias", "se"])
    out = frame.groupby(["variant", "metric", "bound"], sort=False).agg(
        coverage=("covered", "mean"), width=("width", "mean"), bias=("bias", "mean"),
        se_ratio=("se", "mean"), sd=("bias", "std"))
    out["se_ratio"] /= out.pop("sd")
    out["mc_sd"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / replications)
    out["warned"] = warned / replications if cell.label_model != "oracle" else np.nan
    for key, value in zip(("n_classes", "n_lfs", "n", "label_model", "duplicate"),
                          astuple(cell), strict=True):
        out[key] = value
    out["R"] = replications
    return out.reset_index()


def _label(lm, warned) -> str:
    note = lm.replace("_", " ")
    if lm == "majority_vote":
        return note + f" (warned {100 * warned:.0f} %)"
    if lm == "dawid_skene":
        return note + f" (misfit {100 * warned:.0f} %)"
    return note


def _coverage(row, variant) -> str:
    return f"{row[('coverage', variant)]:.3f} ± {row[('mc_sd', variant)]:.3f}"


def markdown(frame: pd.DataFrame) -> str:
    """Two tables. The grid: one row per (cell, metric, bound) with coverage ± MC sd, width,
    bias and SE / sd of the default, the default with the label model fixed (its coverage and
    the default's width over its width) and the plug-in (coverage, width, bias). The design
    with a duplicated labelling function: the default (which widens where Dawid-Skene does
    not fit) against Dawid-Skene on all functions, for each bound and for the identified
    set's interval holding the true metric (``truth``)."""
    key = ["n_classes", "n_lfs", "n", "label_model", "metric", "bound"]
    values = ["coverage", "mc_sd", "width", "bias", "se_ratio"]
    grid = frame[~frame["duplicate"] & (frame["bound"] != "truth")]
    wide = grid.pivot_table(index=key, columns="variant", values=values, sort=False)
    warned = grid.groupby(key, sort=False)["warned"].first()
    lines = ["| K | LFs | n | label model | metric | bound | default: coverage ± MC sd | width |"
             " bias | SE / sd | label model fixed: coverage ± MC sd | width ratio | plug-in: "
             "coverage ± MC sd | width | bias |",
             "|" + "---|" * 15]
    for idx, row in wide.iterrows():
        k, m, n, lm, metric, bound = idx
        cells = [str(k), str(m), f"{n:,}", _label(lm, warned[idx]), metric, bound,
                 _coverage(row, "default"), f"{row[('width', 'default')]:.3f}",
                 f"{row[('bias', 'default')]:+.4f}", f"{row[('se_ratio', 'default')]:.2f}"]
        if ("coverage", "fixed label model") in row and not np.isnan(
                row[("coverage", "fixed label model")]):
            cells += [_coverage(row, "fixed label model"),
                      f"{row[('width', 'default')] / row[('width', 'fixed label model')]:.2f}"]
        else:
            cells += ["—", "—"]
        cells += [_coverage(row, "plug-in"), f"{row[('width', 'plug-in')]:.3f}",
                  f"{row[('bias', 'plug-in')]:+.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    copied = frame[frame["duplicate"]]
    if len(copied):
        wide = copied.pivot_table(index=key, columns="variant", values=values, sort=False)
        warned = copied.groupby(key, sort=False)["warned"].first()
        lines += ["", "| K | LFs | n | Dawid-Skene misfit | metric | bound | default: coverage "
                  "± MC sd | width | all LFs: coverage ± MC sd | width |", "|" + "---|" * 10]
        for idx, row in wide.iterrows():
            k, m, n, _, metric, bound = idx
            lines.append("| " + " | ".join(
                [str(k), f"{m} + copy", f"{n:,}", f"{100 * warned[idx]:.0f} %", metric, bound,
                 _coverage(row, "default"), f"{row[('width', 'default')]:.3f}",
                 _coverage(row, "all LFs"), f"{row[('width', 'all LFs')]:.3f}"]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=600)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--classes", type=int, nargs="*", default=(2, 4))
    parser.add_argument("--lfs", type=int, nargs="*", default=(2, 4))
    parser.add_argument("--n", type=int, nargs="*", default=(1000, 5000))
    parser.add_argument("--label-models", nargs="*", default=LABEL_MODELS)
    parser.add_argument("--without-copies", action="store_true",
                        help="leave out the designs with a duplicated labelling function")
    parser.add_argument("--per-class", action="store_true",
                        help="add each class's precision, recall and F1 (K > 2)")
    parser.add_argument("--csv", help="also write the long table here")
    args = parser.parse_args(argv)
    cells = [c for c in GRID if c.n_classes in args.classes and c.n_lfs in args.lfs
             and c.n in args.n and c.label_model in args.label_models
             and not (c.duplicate and args.without_copies)]
    start, parts = time.perf_counter(), []
    for cell in cells:
        t = time.perf_counter()
        extra = one_class_metrics(cell.n_classes) if args.per_class and cell.n_classes > 2 else ()
        parts.append(run_cell(cell, args.replications, args.seed, METRICS + extra))
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
