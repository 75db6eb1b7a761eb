r"""Simulation-based calibration (Talts et al. 2018) of the catalogued models.

For each simulation :math:`i`, parameters :math:`\tilde\theta_i` are drawn from the prior and data
from the model given them; the posterior of those data is sampled with NUTS and the rank
:math:`r_i = \#\{\ell : \theta^{(\ell)} < \tilde\theta_i\}` of each true scalar among :math:`L`
evenly thinned posterior draws is recorded. If the sampler draws from the model's posterior, each
:math:`r_i` is uniform on :math:`\{0, \dots, L\}`. The :math:`L + 1` ranks are pooled into
:data:`BINS` equal bins and tested with Pearson's chi-square (``BINS - 1`` degrees of freedom);
over all the scalars tested at once the family's level is 1 %, split by Bonferroni (a scalar
fails when its p-value is below :math:`0.01/K` for :math:`K` scalars).

One NUTS run (compiled once) samples all the simulations of a model: the metrics (labelled),
groups (judge), instances (MVU Model B) or chunks (CBPE V0, V2) of one model, whose parameters
are a priori independent and whose likelihood factorises over them, and, for the models
without such a dimension, one copy of the model per simulation batched into one model
(:func:`benchmarks.sbc.batch.batched`). MVU Model C's copies are sampled one per NUTS run
(:func:`benchmarks.sbc.batch.grouped`, one compiled log density for all runs): in one joint run
all copies share one step size and one trajectory length, so the hardest copy would set the
tree depth of all and every gradient would pay for all of them. Covariates (scores, cell
centres, label models, designs) are fixed across the simulations of a model; the data sizes are
small so that the posteriors are far from degenerate. The simulators, one module per method
family, state their priors and sizes.

``python -m benchmarks.sbc`` runs :data:`SIMULATIONS` simulations per model, prints the table of
``docs/models.md`` and each model's wall time, and writes the rank histograms to
``docs/assets/sbc_<model>.png``.
"""

from __future__ import annotations

import argparse
import re
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.sampling import sample
from benchmarks.sbc import batch, bounds, cbpe, judge, labelled, mvu, pemi

SEED = 20261124
#: thinned posterior draws per simulation (ranks 0..L)
L = 99
BINS = 10
#: family-wise level of the uniformity tests
LEVEL = 0.01
SIMULATIONS = 200
#: NUTS settings of every run (2 chains x 500 draws after 500 warm-up steps, thinned to L)
SAMPLE_KWARGS = {"draws": 500, "tune": 500, "target_accept": 0.95}
ASSETS = Path(__file__).resolve().parents[2] / "docs" / "assets"

#: model -> simulator ``(n_sims, rng) -> (truth, model)``: true scalars (simulation,) by label
#: (``name`` or ``name[i]``, ``name[i,j]``: posterior variable ``name``, whose first axis after
#: chain and draw is the simulation, at that index) and the PyMC model of all simulations
CASES = {"labelled_beta_binomial": labelled.labelled_beta_binomial,
         "judge_model_a": judge.judge_model_a,
         "judge_model_b": judge.judge_model_b,
         "pemi_m1": pemi.pemi_m1,
         "pemi_m3": pemi.pemi_m3,
         "cbpe_v0": cbpe.cbpe_v0,
         "cbpe_v2": cbpe.cbpe_v2,
         "cbpe_v2b": cbpe.cbpe_v2b,
         "bounds_m1": bounds.bounds_m1,
         "bounds_m2": bounds.bounds_m2,
         "bounds_m3": bounds.bounds_m3,
         "mvu_model_a": mvu.mvu_model_a,
         "mvu_model_b": mvu.mvu_model_b,
         "mvu_model_c": mvu.mvu_model_c}


def _draws(post, label: str) -> np.ndarray:
    """Draws (simulation, chain * draw) of the scalar ``label`` (see :data:`CASES`)."""
    name, index = re.fullmatch(r"(\w+)(?:\[([\d,]+)\])?", label).groups()
    x = post[name].values
    x = x.reshape(-1, *x.shape[2:])  # (chain * draw, simulation, ...)
    if index:
        x = x[(slice(None), slice(None), *map(int, index.split(",")))]
    return x.T


def ranks(name: str, n_sims: int, seed: int = SEED, sample_kwargs=None) -> pd.DataFrame:
    r"""Ranks (``simulation`` x parameter) of the true values among :data:`L` thinned draws, and
    the run's largest R-hat and number of divergences in ``attrs``.

    Ties (discrete scalars: counts) are broken at random (Talts et al. 2018, §4.1):
    :math:`r = \#\{\ell : \theta^{(\ell)} < \tilde\theta\} + U\{0, \dots,
    \#\{\ell : \theta^{(\ell)} = \tilde\theta\}\}`, uniform on :math:`\{0, \dots, L\}` when
    the draws follow the truth's law."""
    import arviz as az

    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    truth, pm_model = CASES[name](n_sims, rng)
    kwargs = {**SAMPLE_KWARGS, **(sample_kwargs or {})}
    if isinstance(pm_model, batch.Groups):
        tree = pm_model.sample(seed, kwargs)
    else:
        tree = sample(pm_model, seed, kwargs)
    post = tree["posterior"].to_dataset()
    out = {}
    for label, true in truth.items():
        x = _draws(post, label)
        x = x[:, np.linspace(0, x.shape[-1] - 1, L).round().astype(int)]
        ties = (x == true[:, None]).sum(axis=1)
        out[label] = (x < true[:, None]).sum(axis=1) + rng.integers(0, ties + 1)
    frame = pd.DataFrame(out)
    frame.attrs["r_hat"] = float(max(np.nanmax(az.rhat(v).values) for v in post.data_vars.values()))
    frame.attrs["divergences"] = int(tree["sample_stats"]["diverging"].sum())
    return frame


def uniformity(r: np.ndarray, bins: int = BINS) -> tuple[float, float]:
    """Pearson's chi-square of ranks in 0..L pooled into ``bins`` equal bins, and its p."""
    counts = np.bincount(np.asarray(r) * bins // (L + 1), minlength=bins)
    expected = len(r) / bins
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    return chi2, float(stats.chi2.sf(chi2, bins - 1))


def run(n_sims: int = SIMULATIONS, names=tuple(CASES), sample_kwargs=None, bins: int = BINS
        ) -> pd.DataFrame:
    """One row per (model, parameter): chi-square, p-value, Bonferroni threshold, passed."""
    rows, frames = [], {}
    for name in names:
        start = time.perf_counter()
        frames[name] = r = ranks(name, n_sims, sample_kwargs=sample_kwargs)
        for param in r:
            chi2, p = uniformity(r[param].to_numpy(), bins)
            rows.append({"model": name, "parameter": param, "simulations": n_sims,
                         "chi2": chi2, "p_value": p, "r_hat": r.attrs["r_hat"],
                         "divergences": r.attrs["divergences"],
                         "seconds": time.perf_counter() - start})
    out = pd.DataFrame(rows)
    out["threshold"] = LEVEL / len(out)
    out["passed"] = out["p_value"] >= out["threshold"]
    out.attrs["ranks"] = frames
    return out


def plot(frames: dict[str, pd.DataFrame], folder: Path = ASSETS) -> list[Path]:
    """One PNG of rank histograms per model, with the 99 % band of a uniform bin count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, r in frames.items():
        cols = min(r.shape[1], 5)
        rows = -(-r.shape[1] // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), sharey=True,
                                 squeeze=False)
        lo, hi = stats.binom(len(r), 1 / BINS).ppf([0.005, 0.995])
        for ax in axes.flat[r.shape[1]:]:
            ax.set_visible(False)
        for ax, param in zip(axes.flat[:r.shape[1]], r, strict=True):
            counts = np.bincount(r[param].to_numpy() * BINS // (L + 1), minlength=BINS)
            ax.axhspan(lo, hi, color="0.85")
            ax.bar(np.arange(BINS), counts, width=0.9, color="C0")
            ax.set_title(param)
            ax.set_xlabel(f"rank bin (of {L + 1} ranks)")
        for ax in axes[:, 0]:
            ax.set_ylabel("simulations")
        fig.suptitle(f"{name}: SBC ranks, {len(r)} simulations", fontsize=10)
        fig.tight_layout()
        path = folder / f"sbc_{name}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def markdown(frame: pd.DataFrame) -> str:
    lines = ["| model | parameter | simulations | chi-square (9 df) | p-value | passed "
             "| max R-hat | divergences |", "|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples():
        lines.append(f"| `{r.model}` | {r.parameter} | {r.simulations} | {r.chi2:.1f} | "
                     f"{r.p_value:.3f} | {'yes' if r.passed else '**no**'} | {r.r_hat:.3f} | "
                     f"{r.divergences} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=SIMULATIONS)
    parser.add_argument("--models", nargs="*", default=list(CASES))
    args = parser.parse_args(argv)
    frame = run(args.simulations, args.models)
    plot(frame.attrs["ranks"])
    print(markdown(frame))
    print(f"\nBonferroni threshold {LEVEL}/{len(frame)} = {LEVEL / len(frame):.2e}")
    seconds = frame.groupby("model", sort=False)["seconds"].first()
    print("\n| model | wall time (s) |\n|---|---|")
    print("\n".join(f"| `{m}` | {s:.0f} |" for m, s in seconds.items()))
    print(f"| total | {seconds.sum():.0f} |")
