r"""Simulation-based calibration (Talts et al. 2018) of the catalogued models that have a group,
metric or instance dimension.

For each simulation :math:`i`, parameters :math:`\tilde\theta_i` are drawn from the prior and data
from the model given them; the posterior of those data is sampled with NUTS and the rank
:math:`r_i = \#\{\ell : \theta^{(\ell)} < \tilde\theta_i\}` of each true scalar among :math:`L`
evenly thinned posterior draws is recorded. If the sampler draws from the model's posterior, each
:math:`r_i` is uniform on :math:`\{0, \dots, L\}`. The :math:`L + 1` ranks are pooled into
:data:`BINS` equal bins and tested with Pearson's chi-square (``BINS - 1`` degrees of freedom);
over all the scalars tested at once the family's level is 1 %, split by Bonferroni (a scalar
fails when its p-value is below :math:`0.01/K` for :math:`K` scalars).

The simulations of one model are the metrics (labelled), groups (judge) or instances (MVU Model
B) of one model, whose parameters are a priori independent and whose likelihood factorises over
them: one NUTS run samples all their posteriors at once (compiled once). The data sizes are
small so that the posterior is far from degenerate:

* ``labelled_beta_binomial``: :math:`\theta \sim \mathrm{Beta}(1, 1)`, 20 trials per simulation.
* ``judge_model_a``, ``judge_model_b``: default priors (Jeffreys' Dirichlet on the 2×2 table),
  :math:`m = 30` labelled and :math:`n = 300` unlabelled items per simulation; Model A's
  parameters :math:`\theta, q_1, q_0`, Model B's :math:`p, \mu_1, \mu_0`.
* ``mvu_model_b``: :math:`\mu_\alpha \sim \mathrm{Dir}(1, 1)`, :math:`\kappa \sim
  \mathrm{LogNormal}(\log 10, 3)`, 50 MVU draws per instance; parameters :math:`\mu_{\alpha,1}`
  and :math:`\kappa`.

``python -m benchmarks.sbc`` runs :data:`SIMULATIONS` simulations per model, prints the table of
``docs/models.md`` and writes the rank histograms to ``docs/assets/sbc_<model>.png``.
"""

from __future__ import annotations

import argparse
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.methods.judge.models import DEFAULT_PRIOR
from bayeval.methods.judge.models import model as judge_model
from bayeval.methods.labelled.models import model as labelled_model
from bayeval.methods.mvu.models import model as mvu_model
from bayeval.sampling import sample

SEED = 20261124
#: thinned posterior draws per simulation (ranks 0..L)
L = 99
BINS = 10
#: family-wise level of the uniformity tests
LEVEL = 0.01
SIMULATIONS = 200
#: NUTS settings of every run (2 chains x 500 draws after 500 warm-up steps, thinned to L)
SAMPLE_KWARGS = {"draws": 500, "tune": 500, "target_accept": 0.95}
ASSETS = Path(__file__).resolve().parents[1] / "docs" / "assets"


def _judge(variant: str, n_sims: int, rng, m: int = 30, n: int = 300):
    """Prior draws and the grouped judge model of their simulated counts."""
    prior = DEFAULT_PRIOR[variant]
    truth = {k: rng.beta(*ab, size=n_sims) for k, ab in prior.items()}
    if variant == "a":
        theta, q1, q0 = truth["theta"], truth["q1"], truth["q0"]
        p = theta * q1 + (1 - theta) * (1 - q0)
        m1 = rng.binomial(m, theta)
        n11, n00 = rng.binomial(m1, q1), rng.binomial(m - m1, q0)
        n10, n01 = m1 - n11, m - m1 - n00
    else:
        p, mu1, mu0 = truth["p"], truth["mu1"], truth["mu0"]
        c1 = rng.binomial(m, p)
        n11, n10 = rng.binomial(c1, mu1), rng.binomial(m - c1, mu0)
        n01, n00 = c1 - n11, m - c1 - n10
    t1 = rng.binomial(n, p)
    return truth, judge_model(n11, n10, n01, n00, t1, n - t1, variant=variant,
                              groups=np.arange(n_sims))


def _labelled(n_sims: int, rng, trials: int = 20):
    """Prior draws of the rates and the model of their binomial counts, one 'metric' each."""
    theta = rng.beta(1.0, 1.0, n_sims)
    counts = rng.binomial(trials, theta)
    return {"theta": theta}, labelled_model(counts, np.full(n_sims, trials),
                                            metrics=[f"s{i}" for i in range(n_sims)])


def _mvu_b(n_sims: int, rng, draws: int = 50):
    """Prior draws of Model B (two classes) and the model of their simulated MVU draws."""
    mu1 = rng.beta(1.0, 1.0, n_sims)
    kappa = rng.lognormal(np.log(10.0), 3.0, n_sims)
    alpha = kappa[:, None] * np.column_stack([1 - mu1, mu1])
    phi = np.stack([rng.dirichlet(a, size=draws) for a in alpha])
    return {"mu1": mu1, "kappa": kappa}, mvu_model(phi, variant="b")


def _posterior_scalars(name: str, post) -> dict[str, np.ndarray]:
    """Draws (n_sims, chain * draw) of each tested parameter."""
    def flat(x):
        x = np.asarray(x)
        return np.moveaxis(x.reshape(-1, *x.shape[2:]), 0, -1)

    if name == "mvu_model_b":
        return {"mu1": flat(post["mu"].values[..., 1]), "kappa": flat(post["kappa"].values)}
    if name == "labelled_beta_binomial":
        return {"theta": flat(post["theta"].values)}
    return {k: flat(post[k].values) for k in ("theta", "q1", "q0", "p", "mu1", "mu0")
            if k in post}


CASES = {"labelled_beta_binomial": _labelled,
         "judge_model_a": lambda n, rng: _judge("a", n, rng),
         "judge_model_b": lambda n, rng: _judge("b", n, rng),
         "mvu_model_b": _mvu_b}


def ranks(name: str, n_sims: int, seed: int = SEED, sample_kwargs=None) -> pd.DataFrame:
    """Ranks (``simulation`` x parameter) of the true values among :data:`L` thinned draws, and
    the run's largest R-hat and number of divergences in ``attrs``."""
    import arviz as az

    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    truth, pm_model = CASES[name](n_sims, rng)
    tree = sample(pm_model, seed, {**SAMPLE_KWARGS, **(sample_kwargs or {})})
    post = tree["posterior"].to_dataset()
    draws = _posterior_scalars(name, post)
    out = {}
    for param, x in draws.items():
        if param not in truth:
            continue
        keep = np.linspace(0, x.shape[-1] - 1, L).round().astype(int)
        out[param] = (x[:, keep] < truth[param][:, None]).sum(axis=1)
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
        fig, axes = plt.subplots(1, r.shape[1], figsize=(3.2 * r.shape[1], 2.6), sharey=True)
        lo, hi = stats.binom(len(r), 1 / BINS).ppf([0.005, 0.995])
        for ax, param in zip(np.atleast_1d(axes), r, strict=True):
            counts = np.bincount(r[param].to_numpy() * BINS // (L + 1), minlength=BINS)
            ax.axhspan(lo, hi, color="0.85")
            ax.bar(np.arange(BINS), counts, width=0.9, color="C0")
            ax.set_title(param)
            ax.set_xlabel(f"rank bin (of {L + 1} ranks)")
        np.atleast_1d(axes)[0].set_ylabel("simulations")
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


if __name__ == "__main__":
    main()
