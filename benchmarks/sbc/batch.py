r"""Many simulations of a model without a batch dimension in one PyMC model, so that one NUTS run
(compiled once) samples all their posteriors.

The copies are built by the model's own builder, one per simulated data set, with the same
shapes. Their log densities are the same graph up to the constants that hold each copy's data:
the graph of the first copy is vectorised (``pytensor.graph.replace.vectorize_graph``) over a
leading simulation axis, its value variables replaced by :math:`S \times` batched ``Flat``
variables and every constant that differs between the copies by the stack of the copies'
values. The joint log density is :math:`\sum_i \log p_i(\theta_i)`, with
:math:`\log p_i` the copy's log density in PyMC's unconstrained space (Jacobians included), so
NUTS samples the copies' posteriors independently, in the parametrisation NUTS sees for each
model alone. Before it is returned, the batched log density of every copy is compared with the
copy's own compiled log density at a random point (the first, middle and last copies).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pytensor.graph.basic import Constant
from pytensor.graph.replace import graph_replace, vectorize_graph


def _paired_constants(graph: list, other: list) -> dict[Constant, np.ndarray]:
    """The data in ``other`` of every constant of ``graph``, the two graphs walked in parallel
    (same ops; the constants of ``other`` may be merged where their values coincide)."""
    pairs, seen, stack = {}, set(), list(zip(graph, other, strict=True))
    while stack:
        a, b = stack.pop()
        if (a, b) in seen:
            continue
        seen.add((a, b))
        if isinstance(a, Constant):
            if not isinstance(b, Constant) or a.type != b.type:
                raise ValueError(f"{a} and {b}: the copies are not the same graph")
            if a in pairs and not np.array_equal(pairs[a], b.data):
                raise ValueError(f"{a} is one constant of the first copy, two of another")
            pairs[a] = np.asarray(b.data)
        elif a.owner is not None:
            if b.owner is None or a.owner.op != b.owner.op:
                raise ValueError(f"{a} and {b}: the copies are not the same graph")
            stack.extend(zip(a.owner.inputs, b.owner.inputs, strict=True))
    return pairs


def batched(models: list, params: list[str], observed: dict[str, np.ndarray] | None = None
            ) -> pm.Model:
    """One model whose log density is the sum of ``models``' (same builder, same shapes).

    Parameters
    ----------
    models : list of pm.Model
        The copies, one per simulation.
    params : list of str
        Free variables of the copies stored, in their constrained space, as deterministics of the
        same name with a leading ``simulation`` axis.
    observed : dict, optional
        Data (simulation, ...) that replace the named observed variables' data in the copies.

    Returns
    -------
    pm.Model
        Free ``<value>__batch`` (simulation, ...) for every value variable of the copies, the
        potential ``logp`` and the deterministics ``params``.
    """
    first, n_sims = models[0], len(models)
    observed = observed or {}
    per_model = []
    for i, m in enumerate(models):
        swap = {m.rvs_to_values[m[k]]: pt.as_tensor(v[i]) for k, v in observed.items()}
        per_model.append(graph_replace(m.logp(sum=False), swap, strict=False))
    paired = [_paired_constants(per_model[0], g) for g in per_model]
    replace = {}
    for c, value in paired[0].items():
        values = [p[c] for p in paired]
        if any(not np.array_equal(v, value) for v in values[1:]):
            replace[c] = pt.as_tensor(np.stack(values).astype(c.dtype))
    points = [m.initial_point() for m in models]
    with pm.Model(coords={"simulation": np.arange(n_sims)}) as joint:
        for v in first.value_vars:
            init = np.stack([p[v.name] for p in points])
            replace[v] = pm.Flat(f"{v.name}__batch", shape=init.shape, initval=init)
        terms = per_model[0]
        outs = vectorize_graph([*terms, *first.replace_rvs_by_values([first[p] for p in params])],
                               replace)
        per_copy = 0
        for t, t0 in zip(outs[:len(terms)], terms, strict=True):
            per_copy = per_copy + (t.sum(axis=tuple(range(1, t.ndim))) if t.ndim > t0.ndim
                                   else pt.full((n_sims,), t.sum()))
        pm.Potential("logp", per_copy.sum())
        for p, g in zip(params, outs[len(terms):], strict=True):
            pm.Deterministic(p, g, dims=("simulation", *[None] * (g.ndim - 1)))
    _check(joint, per_copy, models, per_model)
    return joint


def _check(joint, per_copy, models, per_model, seed: int = 0) -> None:
    """The batched log density of three copies equals the copy's own at a jittered point."""
    rng = np.random.default_rng(seed)
    point = {k: v + rng.uniform(-0.5, 0.5, v.shape) for k, v in joint.initial_point().items()}
    got = pytensor.function(joint.value_vars, joint.replace_rvs_by_values([per_copy])[0],
                            on_unused_input="ignore")(*(point[v.name] for v in joint.value_vars))
    for i in sorted({0, len(models) // 2, len(models) - 1}):
        m, terms = models[i], per_model[i]
        own = pytensor.function(m.value_vars, pt.sum([t.sum() for t in terms]),
                                on_unused_input="ignore")
        want = own(*(point[f"{v.name}__batch"][i] for v in m.value_vars))
        if not np.isclose(got[i], want, rtol=1e-9, atol=1e-9):
            raise AssertionError(f"copy {i}: batched log density {got[i]} != its own {want}")
