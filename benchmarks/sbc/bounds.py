"""SBC simulators of the bounds' models (one copy of the model per simulation, batched)."""

from __future__ import annotations

import numpy as np

from bayeval.methods.bounds.models import dawid_skene_model, model
from benchmarks.sbc.batch import batched

#: the plug-in label model P(Y = k | z) of four weak-label patterns (M1)
BETA = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.05, 0.95]])


def bounds_m1(n_sims: int, rng, items: int = 80):
    r"""Builder's default priors: :math:`w \sim \mathrm{Dir}(\mathbf 1)` (4 patterns),
    :math:`\alpha_z \sim \mathrm{Dir}(1, 1)`, :math:`u \sim \mathrm{Beta}(1, 1)`; ``items``
    items, :math:`(n_z) \sim \mathrm{Mult}(n, w)`, :math:`(n_{zk}) \sim \mathrm{Mult}(n_z,
    \alpha_z)`. Ranked: :math:`w_0, w_1, w_2`, :math:`\alpha_z(1)` and :math:`u`."""
    cells = len(BETA)
    w = rng.dirichlet(np.ones(cells), n_sims)
    alpha1 = rng.beta(1.0, 1.0, (n_sims, cells))
    u = rng.beta(1.0, 1.0, n_sims)
    totals = np.stack([rng.multinomial(items, wi) for wi in w])
    ones = rng.binomial(totals, alpha1)
    counts = np.stack([totals - ones, ones], axis=-1)
    models = [model(ci, BETA, metrics=["accuracy"]) for ci in counts]
    truth = {f"w[{z}]": w[:, z] for z in range(cells - 1)}
    truth |= {f"alpha[{z},1]": alpha1[:, z] for z in range(cells)}
    return truth | {"u": u}, batched(models, ["w", "alpha", "u"])


def bounds_m2(n_sims: int, rng, items: int = 150, lfs: int = 3):
    r"""M2's label model (``dawid_skene_model``), two classes, default priors:
    :math:`\pi \sim \mathrm{Dir}(1, 1)`, :math:`\rho_j \sim \mathrm{Beta}(1, 1)`,
    :math:`\mathrm{acc}_j = \tfrac12 + \tfrac12\mathrm{Beta}(2, 2)`; ``items`` items,
    :math:`y \sim \pi`, each of ``lfs`` labelling functions votes with probability
    :math:`\rho_j`, for :math:`y` with probability :math:`\mathrm{acc}_j`. The votes are counted
    over all :math:`3^J` patterns (empty ones too), so every copy has the same shape; the
    predictions, which the label model ignores, are all 0. Ranked: :math:`\pi_1`,
    :math:`\rho_j` and the Beta(2, 2) part of :math:`\mathrm{acc}_j`."""
    pi1 = rng.beta(1.0, 1.0, n_sims)
    rho = rng.beta(1.0, 1.0, (n_sims, lfs))
    raw = rng.beta(2.0, 2.0, (n_sims, lfs))
    y = (rng.random((n_sims, items)) < pi1[:, None]).astype(int)[..., None]
    votes = rng.random((n_sims, items, lfs)) < rho[:, None]
    right = rng.random((n_sims, items, lfs)) < (0.5 + 0.5 * raw)[:, None]
    z = np.where(votes, np.where(right, y, 1 - y), -1)  # (sim, item, lf) in {-1, 0, 1}
    code = ((z + 1) * 3 ** np.arange(lfs)).sum(-1)
    patterns = np.stack(np.unravel_index(np.arange(3**lfs), (3,) * lfs)[::-1], axis=1) - 1
    totals = np.stack([np.bincount(c, minlength=3**lfs) for c in code])
    models = [dawid_skene_model(np.column_stack([t, np.zeros_like(t)]), patterns)
              for t in totals]
    truth = {"pi[1]": pi1} | {f"propensity[{j}]": rho[:, j] for j in range(lfs)}
    truth |= {f"accuracy_raw[{j}]": raw[:, j] for j in range(lfs)}
    return truth, batched(models, ["pi", "propensity", "accuracy_raw"])


def bounds_m3(n_sims: int, rng, items: int = 80, gold: float = 0.5, strength: float = 10.0):
    r"""M3 on :data:`BETA`'s four patterns, priors of M1 and
    :math:`b_z \sim \mathrm{Beta}(1 + \kappa\hat b_z, 1 + \kappa(1 - \hat b_z))`,
    :math:`\kappa` = ``strength``; the counts as in :func:`bounds_m1`, each item gold with
    probability ``gold`` (:math:`m_{zh\cdot} \sim \mathrm{Bin}(n_{zh}, \mathtt{gold})`, a
    design that depends on no parameter), its label given :math:`h` drawn from the coupling
    :math:`t_z = \max(0, a_z + b_z - 1) + u\min(a_z, b_z, 1 - a_z, 1 - b_z)`:
    :math:`P(Y = 1 \mid H = 1, z) = t_z / a_z`,
    :math:`P(Y = 1 \mid H = 0, z) = (b_z - t_z)/(1 - a_z)`. Ranked: :math:`w_0, w_1, w_2`,
    :math:`\alpha_z(1)`, :math:`u` and :math:`b_z`."""
    cells, b_hat = len(BETA), BETA[:, 1]
    w = rng.dirichlet(np.ones(cells), n_sims)
    a = rng.beta(1.0, 1.0, (n_sims, cells))
    u = rng.beta(1.0, 1.0, n_sims)
    b = rng.beta(1 + strength * b_hat, 1 + strength * (1 - b_hat), (n_sims, cells))
    totals = np.stack([rng.multinomial(items, wi) for wi in w])
    ones = rng.binomial(totals, a)
    counts = np.stack([totals - ones, ones], axis=-1)
    t = np.maximum(0.0, a + b - 1) + u[:, None] * np.minimum(np.minimum(a, b),
                                                             np.minimum(1 - a, 1 - b))
    p_one = np.stack([(b - t) / (1 - a), t / a], axis=-1)  # P(Y = 1 | H = h, z)
    labelled = rng.binomial(counts, gold)
    positives = rng.binomial(labelled, np.clip(p_one, 0.0, 1.0))
    gold_counts = np.stack([labelled - positives, positives], axis=-1)  # (sim, z, h, y)
    models = [model(ci, BETA, gi, variant="m3", metrics=["accuracy"],
                    label_model_strength=strength) for ci, gi in zip(counts, gold_counts,
                                                                     strict=True)]
    truth = {f"w[{z}]": w[:, z] for z in range(cells - 1)}
    truth |= {f"alpha[{z},1]": a[:, z] for z in range(cells)} | {"u": u}
    truth |= {f"b[{z}]": b[:, z] for z in range(cells)}
    return truth, batched(models, ["w", "alpha", "u", "b"])
