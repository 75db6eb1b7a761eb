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
import xarray as xr
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
    joint, per_copy, per_model, _ = _joint(models, params, observed, len(models))
    own = _check(joint, per_copy, models, per_model)
    own(range(len(models)), sorted({0, len(models) // 2, len(models) - 1}))
    return joint


def grouped(models: list, params: list[str], size: int,
            observed: dict[str, np.ndarray] | None = None) -> Groups:
    """The copies ``size`` at a time, each group a :func:`batched` model sampled by its own NUTS
    run, all groups one compiled log density (:class:`Groups`).

    The constants that differ between the copies are shared variables that hold one group's
    stack at a time; the batched log density is checked against the copies' own as in
    :func:`batched` (the first, middle and last copies, each in its group).

    Parameters
    ----------
    models, params, observed
        As :func:`batched`; ``len(models)`` is a multiple of ``size``.
    size : int
        Copies per group (per NUTS run).
    """
    if len(models) % size:
        raise ValueError(f"size must divide the number of copies ({len(models)}), got {size}")
    joint, per_copy, per_model, stacks = _joint(models, params, observed, size)
    groups = Groups(joint, stacks, len(models) // size)
    own = _check(joint, per_copy, models, per_model)
    for i in sorted({0, len(models) // 2, len(models) - 1}):
        groups.use(i // size)
        own(range(i // size * size, (i // size + 1) * size), [i % size])
    return groups


def _joint(models, params, observed, size):
    """The batched model of ``size`` copies (the first group), its per-copy log density, the
    copies' log-density terms and, by shared variable, the groups' stacks of its values
    (``size < len(models)``; constants otherwise)."""
    first = models[0]
    observed = observed or {}
    per_model = []
    for i, m in enumerate(models):
        swap = {m.rvs_to_values[m[k]]: pt.as_tensor(v[i]) for k, v in observed.items()}
        per_model.append(graph_replace(m.logp(sum=False), swap, strict=False))
    paired = [_paired_constants(per_model[0], g) for g in per_model]
    replace, stacks = {}, {}
    for c, value in paired[0].items():
        values = [p[c] for p in paired]
        if any(not np.array_equal(v, value) for v in values[1:]):
            stack = np.stack(values).astype(c.dtype)
            if size == len(models):
                replace[c] = pt.as_tensor(stack)
            else:
                stack = stack.reshape(-1, size, *stack.shape[1:])
                replace[c] = pytensor.shared(stack[0], shape=stack.shape[1:])
                stacks[replace[c]] = stack
    points = [m.initial_point() for m in models[:size]]  # the groups start from the first's
    with pm.Model(coords={"simulation": np.arange(size)}) as joint:
        for v in first.value_vars:
            init = np.stack([p[v.name] for p in points[:size]])
            replace[v] = pm.Flat(f"{v.name}__batch", shape=init.shape, initval=init)
        terms = per_model[0]
        outs = vectorize_graph([*terms, *first.replace_rvs_by_values([first[p] for p in params])],
                               replace)
        per_copy = 0
        for t, t0 in zip(outs[:len(terms)], terms, strict=True):
            per_copy = per_copy + (t.sum(axis=tuple(range(1, t.ndim))) if t.ndim > t0.ndim
                                   else pt.full((size,), t.sum()))
        pm.Potential("logp", per_copy.sum())
        for p, g in zip(params, outs[len(terms):], strict=True):
            pm.Deterministic(p, g, dims=("simulation", *[None] * (g.ndim - 1)))
    return joint, per_copy, per_model, stacks


class Groups:
    """Copies sampled a group at a time (:func:`grouped`): ``model`` is the batched model of one
    group, whose shared variables :meth:`use` sets to a group's data; :meth:`sample` runs NUTS
    on every group with one compiled log density and gradient.

    Each run is ``pm.sample``'s default NUTS initialisation (``jitter+adapt_diag``: the initial
    point jittered by :math:`U(-1, 1)` per chain, retried while its log density is not finite,
    a diagonal mass matrix adapted from unit variances), with its own seeds.
    """

    def __init__(self, model: pm.Model, stacks: dict, n_groups: int):
        self.model, self.stacks, self.n_groups = model, stacks, n_groups

    def use(self, g: int) -> None:
        """Set the shared variables to group ``g``'s data."""
        for var, stack in self.stacks.items():
            var.set_value(stack[g])

    def sample(self, random_seed: int, sample_kwargs: dict) -> xr.DataTree:
        """NUTS on every group (``sample_kwargs`` as :func:`bayeval.sampling.sample`; seeds
        drawn from ``random_seed`` and the group): ``posterior`` concatenated over the
        simulations, ``sample_stats`` stacked over a ``group`` axis."""
        from pymc.blocking import DictToArrayBijection
        from pymc.step_methods.hmc.quadpotential import QuadPotentialDiagAdapt

        from bayeval.sampling import DEFAULTS, sample

        kwargs = {**DEFAULTS, **sample_kwargs}
        nuts = {k: kwargs.pop(k) for k in ("target_accept", "max_treedepth") if k in kwargs}
        func = self.model.logp_dlogp_function(ravel_inputs=True)
        func.trust_input = True
        start = self.model.initial_point()
        posts, stats = [], []
        for g in range(self.n_groups):
            self.use(g)
            seeds = np.random.SeedSequence([random_seed, g]).generate_state(kwargs["chains"])
            points = []
            for seed in seeds:
                rng = np.random.default_rng(seed)
                for _ in range(11):
                    point = {k: v + rng.uniform(-1, 1, v.shape) for k, v in start.items()}
                    if np.isfinite(func([DictToArrayBijection.map(point).data],
                                        extra_vars={})[0]):
                        break
                points.append(point)
            mean = np.mean([DictToArrayBijection.map(p).data for p in points], axis=0)
            potential = QuadPotentialDiagAdapt(len(mean), mean, np.ones_like(mean), 10,
                                               rng=int(seeds[0]))
            step = pm.NUTS(potential=potential, model=self.model, rng=int(seeds[0]),
                           initial_point=points[0], logp_dlogp_func=func, **nuts)
            tree = sample(self.model, [int(s) for s in seeds],
                          {**kwargs, "step": step, "initvals": points})
            posts.append(tree["posterior"].to_dataset())
            stats.append(tree["sample_stats"].to_dataset())
        return xr.DataTree.from_dict({
            "posterior": xr.concat(posts, "simulation", data_vars="all").assign_coords(
                simulation=np.arange(self.n_groups * posts[0].sizes["simulation"])),
            "sample_stats": xr.concat(stats, "group", data_vars="all")})


def _check(joint, per_copy, models, per_model, seed: int = 0):
    """A function ``own(copies, checked)``: for the copies ``checked`` (positions in the group
    ``copies`` of ``models`` the joint model holds now), the batched log density equals the
    copy's own at a jittered point (the copies' own compiled in pytensor's fast-compile mode)."""
    rng = np.random.default_rng(seed)
    point = {k: v + rng.uniform(-0.5, 0.5, v.shape) for k, v in joint.initial_point().items()}
    got = pytensor.function(joint.value_vars, joint.replace_rvs_by_values([per_copy])[0],
                            on_unused_input="ignore")

    def own(copies, checked) -> None:
        values = got(*(point[v.name] for v in joint.value_vars))
        for j in checked:
            i = copies[j]
            m, terms = models[i], per_model[i]
            f = pytensor.function(m.value_vars, pt.sum([t.sum() for t in terms]),
                                  on_unused_input="ignore", mode="FAST_COMPILE")
            want = f(*(point[f"{v.name}__batch"][j] for v in m.value_vars))
            if not np.isclose(values[j], want, rtol=1e-9, atol=1e-9):
                raise AssertionError(f"copy {i}: batched log density {values[j]} != its own "
                                     f"{want}")

    return own
