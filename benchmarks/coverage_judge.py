r"""Coverage of the judge's 95 % intervals: the exact posterior under two priors and the EIF.

Population. :math:`N` items, :math:`Y \sim \mathrm{Bern}(\theta)`, the judge says 1 with
probability :math:`q_1` when :math:`Y = 1` and :math:`1 - q_0` when :math:`Y = 0`; :math:`m` of
the items, chosen at random, carry the human label. A replicate draws the sufficient statistics:
the labelled 2×2 table is multinomial :math:`(m; \theta q_1, \theta(1 - q_1), (1 - \theta)(1 -
q_0), (1 - \theta)q_0)` and the unlabelled judge positives binomial :math:`(N - m, p)`, :math:`p
= \theta q_1 + (1 - \theta)(1 - q_0)`.

Intervals of :math:`\theta`, each replicate:

* ``jeffreys``: the equal-tailed interval of the exact posterior (Models A and B, conjugate,
  :func:`~bayeval.methods.judge.conjugate.conjugate_posterior`) under the default prior, Jeffreys'
  Dirichlet(1/2, 1/2, 1/2, 1/2) on the table;
* ``uniform``: the same under the uniform Dirichlet(1, 1, 1, 1);
* ``eif``: the pooled EIF estimate's logit-Wald interval (``judge(method="eif")``), defined when
  both classes have at least 2 labelled items and both judge labels at least one (``judge``
  refuses otherwise); its coverage is over the replicates where it is defined (``eif_defined``).

The posterior intervals are the empirical quantiles of :data:`DRAWS` independent draws of the
exact posterior (:math:`p, \mu_1, \mu_0` independent Betas, :math:`\theta = p\mu_1 + (1 -
p)\mu_0`), whose Monte-Carlo error in the interval's level is about 0.002. Coverage is the share
of replicates whose interval holds :math:`\theta`, with Monte-Carlo SE :math:`\sqrt{\hat c(1 -
\hat c)/R}` (0.005 at 0.95 with :math:`R = 2{,}000`); width is the mean of upper - lower.

``python -m benchmarks.coverage_judge`` runs :data:`GRID` (m in 20, 50, 200, 500; prevalence
0.1, 0.3, 0.5; four judges from barely better than chance to strong; N = 2,000 and 10,000) with
``--replications`` (default 2,000) and prints the markdown table of ``docs/judge.md``;
``--ci-prob`` changes the level.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.methods.judge.fast import Counts, eif_cells, interval, z_value
from bayeval.methods.judge.models import DEFAULT_PRIOR

SEED = 20261125
DRAWS = 4000
#: replicates per block of posterior draws (memory: DRAWS x BLOCK floats per array)
BLOCK = 250
PRIORS = {"jeffreys": DEFAULT_PRIOR["b"], "uniform": {"p": (2, 2), "mu1": (1, 1), "mu0": (1, 1)}}
#: judges as (name, specificity q0, sensitivity q1)
JUDGES = (("barely better than chance", 0.55, 0.55), ("moderate", 0.7, 0.7),
          ("strong", 0.9, 0.9), ("asymmetric", 0.95, 0.6))


@dataclass(frozen=True)
class Cell:
    m: int
    prevalence: float
    judge: str
    q0: float
    q1: float
    n_total: int


GRID = [Cell(m, theta, name, q0, q1, n_total)
        for n_total, (name, q0, q1), m, theta in itertools.product(
            (2000, 10_000), JUDGES, (20, 50, 200, 500), (0.1, 0.3, 0.5))]


def simulate(cell: Cell, replications: int, rng: np.random.Generator) -> Counts:
    """``replications`` independent tables and unlabelled judge counts of ``cell``."""
    t, q0, q1 = cell.prevalence, cell.q0, cell.q1
    table = rng.multinomial(cell.m, [t * q1, t * (1 - q1), (1 - t) * (1 - q0), (1 - t) * q0],
                            size=replications)
    n = cell.n_total - cell.m
    t1 = rng.binomial(n, t * q1 + (1 - t) * (1 - q0), size=replications)
    return Counts(*table.T, t1=t1, t0=n - t1)


def posterior_intervals(c: Counts, prior: dict, ci_prob: float, rng) -> tuple[np.ndarray, ...]:
    """Equal-tailed intervals of the exact posterior of theta, from :data:`DRAWS` draws each."""
    (ap, bp), (a1, b1), (a0, b0) = prior["p"], prior["mu1"], prior["mu0"]
    tail = (1 - ci_prob) / 2
    out = np.empty((2, c.t1.size))
    for start in range(0, c.t1.size, BLOCK):
        s = slice(start, start + BLOCK)
        size = (DRAWS, c.t1[s].size)
        p = rng.beta(ap + c.t1[s] + c.n11[s] + c.n01[s], bp + c.t0[s] + c.n10[s] + c.n00[s], size)
        mu1 = rng.beta(a1 + c.n11[s], b1 + c.n01[s], size)
        mu0 = rng.beta(a0 + c.n10[s], b0 + c.n00[s], size)
        out[:, s] = np.quantile(p * mu1 + (1 - p) * mu0, [tail, 1 - tail], axis=0)
    return out[0], out[1]


def eif_intervals(c: Counts, ci_prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The EIF's logit-Wald intervals and where ``judge(method="eif")`` computes them."""
    m1, m0 = c.n11 + c.n10, c.n01 + c.n00
    c1, c0 = c.n11 + c.n01, c.n10 + c.n00
    defined = (np.minimum(m1, m0) >= 2) & (np.minimum(c1, c0) >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = interval(eif_cells(*c.cells()), z_value(ci_prob), kind="logit")
    return lo, hi, defined & np.isfinite(lo) & np.isfinite(hi)


def run_cell(cell: Cell, replications: int, ci_prob: float, seed: int = SEED) -> dict:
    """Coverage (with MC SE) and mean width of each interval in one cell."""
    rng = np.random.default_rng([seed, cell.m, int(cell.prevalence * 100), int(cell.q0 * 100),
                                 int(cell.q1 * 100), cell.n_total])
    c = Counts(*(np.asarray(v) for v in simulate(cell, replications, rng)))
    theta = cell.prevalence
    row = {**cell.__dict__, "replications": replications}
    for name, prior in PRIORS.items():
        lo, hi = posterior_intervals(c, prior, ci_prob, rng)
        cover = np.mean((lo <= theta) & (theta <= hi))
        row |= {f"{name}_coverage": cover, f"{name}_se": np.sqrt(cover * (1 - cover) / lo.size),
                f"{name}_width": float(np.mean(hi - lo)),
                f"{name}_miss_high": float(np.mean(lo > theta))}
    lo, hi, defined = eif_intervals(c, ci_prob)
    cover = np.mean((lo[defined] <= theta) & (theta <= hi[defined]))
    row |= {"eif_defined": float(defined.mean()), "eif_coverage": cover,
            "eif_se": np.sqrt(cover * (1 - cover) / defined.sum()),
            "eif_width": float(np.mean(hi[defined] - lo[defined]))}
    return row


def run(cells=GRID, replications: int = 2000, ci_prob: float = 0.95) -> pd.DataFrame:
    return pd.DataFrame([run_cell(cell, replications, ci_prob) for cell in cells])


def markdown(frame: pd.DataFrame) -> str:
    """The table of ``docs/judge.md``: coverage ± MC SE and mean width per interval."""
    lines = ["| N | judge (q0, q1) | m | θ | Jeffreys (default) | width | uniform | width | "
             "EIF | width | EIF defined |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        cov = [f"{getattr(r, f'{k}_coverage'):.3f} ± {getattr(r, f'{k}_se'):.3f}"
               for k in ("jeffreys", "uniform", "eif")]
        lines.append(f"| {r.n_total:,} | {r.judge} ({r.q0}, {r.q1}) | {r.m} | {r.prevalence} | "
                     f"{cov[0]} | {r.jeffreys_width:.3f} | {cov[1]} | {r.uniform_width:.3f} | "
                     f"{cov[2]} | {r.eif_width:.3f} | {r.eif_defined:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=2000)
    parser.add_argument("--ci-prob", type=float, default=0.95)
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    frame = run(replications=args.replications, ci_prob=args.ci_prob)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(markdown(frame))
    band = frame["jeffreys_coverage"].between(0.93, 0.97)
    print(f"\n{args.ci_prob:.0%} intervals, R = {args.replications}: Jeffreys within 0.93-0.97 in "
          f"{band.sum()}/{band.size} cells (range {frame['jeffreys_coverage'].min():.3f}-"
          f"{frame['jeffreys_coverage'].max():.3f}), uniform "
          f"{frame['uniform_coverage'].min():.3f}-{frame['uniform_coverage'].max():.3f}; "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
