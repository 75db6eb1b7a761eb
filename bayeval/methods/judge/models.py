r"""The judge's generative models in PyMC, with the labels summed out.

The data are the labelled 2×2 table :math:`n_{ab}` = #{Y = a, Ŷ = b} of the :math:`m`
human-labelled items and the :math:`T_1` of :math:`n` unlabelled items the judge calls 1
(:class:`~bayeval.methods.judge.fast.Counts`). Each unlabelled item is judged 1 with probability
:math:`p = P(\hat Y = 1)` whatever its hidden label, so the :math:`n` items enter as one
binomial count and the cost does not depend on :math:`n`; no discrete variable is left.

* **Model A** (``variant="a"``), the misclassification model: :math:`\theta \sim
  \mathrm{Beta}`, sensitivity :math:`q_1 \sim \mathrm{Beta}`, specificity :math:`q_0 \sim
  \mathrm{Beta}`; :math:`m_1 \sim \mathrm{Bin}(m, \theta)`, :math:`n_{11} \sim
  \mathrm{Bin}(m_1, q_1)`, :math:`n_{00} \sim \mathrm{Bin}(m_0, q_0)`, :math:`T_1 \sim
  \mathrm{Bin}(n, p)` with :math:`p = \theta q_1 + (1 - \theta)(1 - q_0)`.
* **Model B** (``variant="b"``), the same likelihood in the calibration parametrisation
  :math:`\mu_k = P(Y = 1 \mid \hat Y = k)`: :math:`T_1 + c_1 \sim \mathrm{Bin}(N, p)`,
  :math:`n_{11} \sim \mathrm{Bin}(c_1, \mu_1)`, :math:`n_{10} \sim \mathrm{Bin}(c_0, \mu_0)`,
  :math:`\theta = p\mu_1 + (1 - p)\mu_0`. With Beta priors its posterior is exact
  (:func:`~bayeval.methods.judge.conjugate.conjugate_posterior`).

A Dirichlet :math:`(a_{11}, a_{10}, a_{01}, a_{00})` on the table :math:`P(Y = a, \hat Y = b)`
is, by the aggregation property, both Model A's priors :math:`\theta \sim \mathrm{Beta}(a_{11}
+ a_{10}, a_{01} + a_{00})`, :math:`q_1 \sim \mathrm{Beta}(a_{11}, a_{10})`, :math:`q_0 \sim
\mathrm{Beta}(a_{00}, a_{01})` and Model B's :math:`p \sim \mathrm{Beta}(a_{11} + a_{01},
a_{10} + a_{00})`, :math:`\mu_1 \sim \mathrm{Beta}(a_{11}, a_{01})`, :math:`\mu_0 \sim
\mathrm{Beta}(a_{10}, a_{00})` (:func:`conjugate_prior`). The default is Jeffreys' prior of the
four-cell multinomial, the Dirichlet(1/2, 1/2, 1/2, 1/2): :math:`\theta \sim \mathrm{Beta}(1, 1)`,
:math:`q_1, q_0 \sim \mathrm{Beta}(1/2, 1/2)` in Model A, :math:`p \sim \mathrm{Beta}(1, 1)`,
:math:`\mu_1, \mu_0 \sim \mathrm{Beta}(1/2, 1/2)` in Model B. Its 95 % intervals cover
:math:`\theta` at 0.93-0.97 down to 20 labels and a prevalence of 0.1, where the uniform
Dirichlet(1, 1, 1, 1), which adds one pseudo-item to every cell and so pulls a rare class's cell
means :math:`\mu_k` toward 1/2, covers 0.88-0.90.

Both models hold empty or near-empty cells, whose Jeffreys posteriors
(:math:`\mathrm{Beta}(1/2, 1/2 + k)`) are strongly skewed on the logit scale; NUTS samples them
without divergences at ``target_accept`` = :data:`TARGET_ACCEPT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np

from bayeval.methods.judge.fast import Counts
from bayeval.validation import as_choice

__all__ = ["DEFAULT_PRIOR", "PARAMS", "TARGET_ACCEPT", "VARIANTS", "beta_priors", "conjugate_prior",
           "model"]

VARIANTS = ("a", "b")
#: the parameters with a Beta prior in each model
PARAMS = {"a": ("theta", "q1", "q0"), "b": ("p", "mu1", "mu0")}
#: Jeffreys' Dirichlet(1/2, 1/2, 1/2, 1/2) on the 2x2 table in each parametrisation
DEFAULT_PRIOR = {"a": {"theta": (1.0, 1.0), "q1": (0.5, 0.5), "q0": (0.5, 0.5)},
                 "b": {"p": (1.0, 1.0), "mu1": (0.5, 0.5), "mu0": (0.5, 0.5)}}
#: NUTS's target acceptance rate for both models (PyMC's 0.8 diverges on a few empty-cell tables)
TARGET_ACCEPT = 0.95


def beta_priors(prior: Mapping | None, variant: str) -> dict[str, tuple[float, float]]:
    """Beta ``(a, b)`` of each parameter of Model A or B, defaults filled in, checked.

    Parameters
    ----------
    prior : dict or None
        Beta ``(a, b)`` for any of the model's parameters (:data:`PARAMS`).
    variant : {"a", "b"}

    Returns
    -------
    dict
        Every parameter of the model to its ``(a, b)`` as floats.

    Raises
    ------
    ValueError
        An unknown key, or ``(a, b)`` not two positive finite numbers.

    Examples
    --------
    >>> beta_priors({"q1": (8, 2)}, "a")
    {'theta': (1.0, 1.0), 'q1': (8.0, 2.0), 'q0': (0.5, 0.5)}
    """
    prior = dict(prior or {})
    unknown = set(prior) - set(PARAMS[variant])
    if unknown:
        raise ValueError(f"prior has unknown key(s) {sorted(unknown)}; model {variant!r} has "
                         f"Beta priors on {', '.join(PARAMS[variant])}.")
    out = {**DEFAULT_PRIOR[variant], **prior}
    for key, ab in out.items():
        a, b = (float(v) for v in np.ravel(ab))
        if not (a > 0 and b > 0 and np.isfinite(a + b)):
            raise ValueError(f"prior[{key!r}] must be two positive Beta parameters (a, b), "
                             f"got {ab!r}.")
        out[key] = (a, b)
    return out


def conjugate_prior(prior: dict, variant: str) -> dict[str, tuple[float, float]] | None:
    r"""Model B's priors equal to ``prior`` (both from one Dirichlet), or None if there are none.

    Model A's priors :math:`\theta \sim \mathrm{Beta}(a_\theta, b_\theta)`, :math:`q_1 \sim
    \mathrm{Beta}(a_{11}, a_{10})`, :math:`q_0 \sim \mathrm{Beta}(a_{00}, a_{01})` come from one
    Dirichlet when :math:`a_\theta = a_{11} + a_{10}` and :math:`b_\theta = a_{00} + a_{01}`;
    then Model B's are :math:`p: (a_{11} + a_{01}, a_{10} + a_{00})`, :math:`\mu_1: (a_{11},
    a_{01})`, :math:`\mu_0: (a_{10}, a_{00})`.

    Parameters
    ----------
    prior : dict
        Checked priors (:func:`beta_priors`) of ``variant``.
    variant : {"a", "b"}

    Returns
    -------
    dict or None

    Examples
    --------
    >>> conjugate_prior(beta_priors(None, "a"), "a")
    {'p': (1.0, 1.0), 'mu1': (0.5, 0.5), 'mu0': (0.5, 0.5)}
    >>> conjugate_prior(beta_priors({"q1": (5, 1)}, "a"), "a") is None
    True
    """
    if variant == "b":
        return prior
    (a_t, b_t), (a11, a10), (a00, a01) = prior["theta"], prior["q1"], prior["q0"]
    if not np.isclose(a_t, a11 + a10, rtol=1e-12) or not np.isclose(b_t, a00 + a01, rtol=1e-12):
        return None
    return {"p": (a11 + a01, a10 + a00), "mu1": (a11, a01), "mu0": (a10, a00)}


def _data(counts: Mapping, dims) -> dict:
    import pymc as pm

    return {k: pm.Data(k, np.asarray(counts[k], dtype=np.int64), dims=dims)
            for k in Counts._fields}


@cache
def _calibration_transform_class():
    """The class of Model A's joint transform (defined lazily: pymc is slow to import)."""
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    class CalibrationTransform(Transform):
        r"""Sampler coordinates of :math:`(\theta, q_1, q_0)`: :math:`u = ((\mathrm{logit}\,p -
        c)\,s, \mathrm{logit}\,\mu_1, \mathrm{logit}\,\mu_0)`, with :math:`c, s` the logit and
        :math:`\sqrt{N\hat p(1-\hat p)}` of the judge's observed rate, so that every coordinate
        has a posterior scale near 1 whatever :math:`N`. Back: :math:`\theta = p\mu_1 +
        (1-p)\mu_0`, :math:`q_1 = p\mu_1/\theta`, :math:`q_0 = (1-p)(1-\mu_0)/(1-\theta)`;
        :math:`\log|J| = \sum_k \log\sigma_k(1-\sigma_k) - \log s + \log p(1-p) -
        \log\theta(1-\theta)` (the maps to the cell probabilities have determinants
        :math:`p(1-p)` and :math:`\theta(1-\theta)`)."""

        name = "calibration"

        def __init__(self, center, scale):
            self.center, self.scale = center, scale

        def _logits(self, value):
            return self.center + value[..., 0] / self.scale, value[..., 1], value[..., 2]

        def forward(self, value, *inputs):
            theta, q1, q0 = value[..., 0], value[..., 1], value[..., 2]
            p = theta * q1 + (1 - theta) * (1 - q0)
            logit = lambda x: pt.log(x) - pt.log1p(-x)  # noqa: E731
            return pt.stack([(logit(p) - self.center) * self.scale, logit(theta * q1 / p),
                             logit(theta * (1 - q1) / (1 - p))], axis=-1)

        def backward(self, value, *inputs):
            p, mu1, mu0 = (pt.sigmoid(x) for x in self._logits(value))
            theta = p * mu1 + (1 - p) * mu0
            return pt.stack([theta, p * mu1 / theta, (1 - p) * (1 - mu0) / (1 - theta)], axis=-1)

        def log_jac_det(self, value, *inputs):
            logits = self._logits(value)
            p, mu1, mu0 = (pt.sigmoid(x) for x in logits)
            theta = p * mu1 + (1 - p) * mu0
            log_ds = sum(-pt.softplus(-x) - pt.softplus(x) for x in logits)
            return (log_ds - pt.log(self.scale) + pt.log(p) + pt.log1p(-p) - pt.log(theta)
                    - pt.log1p(-theta))

    return CalibrationTransform


def model(n11, n10, n01, n00, t1, t0, *, variant: str = "a", prior=None, groups=None):
    r"""The judge's PyMC model: Model A (``variant="a"``) or Model B (``"b"``).

    **Model A**, prevalence, sensitivity and specificity:

    .. math::
        \theta \sim \mathrm{Beta}, \; q_1 \sim \mathrm{Beta}, \; q_0 \sim \mathrm{Beta},\quad
        m_1 \sim \mathrm{Bin}(m, \theta),\; n_{11} \sim \mathrm{Bin}(m_1, q_1),\;
        n_{00} \sim \mathrm{Bin}(m_0, q_0),\; T_1 \sim \mathrm{Bin}(n, p),

    :math:`p = \theta q_1 + (1-\theta)(1-q_0)`. The three rates are one Beta vector ``rates``
    whose sampler coordinates are :math:`(\mathrm{logit}\,p, \mathrm{logit}\,\mu_1,
    \mathrm{logit}\,\mu_0)`, the first centred and scaled by the judge's observed rate: the
    likelihood pins :math:`p` ever tighter as :math:`n` grows, which in :math:`(\theta, q_0,
    q_1)` is a thin curved ridge (NUTS needs about 300 leapfrog steps per draw at :math:`n =
    10^7`) but in these coordinates is one axis of unit scale (3 steps, and the same warm-up, at
    any :math:`n`). The prior stays the Beta prior on :math:`(\theta, q_1, q_0)`.

    **Model B**, judge rate and calibration cell means (conjugate):

    .. math::
        p, \mu_1, \mu_0 \sim \mathrm{Beta},\quad T_1 + c_1 \sim \mathrm{Bin}(N, p),\;
        n_{11} \sim \mathrm{Bin}(c_1, \mu_1),\; n_{10} \sim \mathrm{Bin}(c_0, \mu_0),\quad
        \theta = p\mu_1 + (1 - p)\mu_0,

    with :math:`c_1 = n_{11} + n_{01}`, :math:`c_0 = n_{10} + n_{00}`; its exact posterior is
    :func:`~bayeval.methods.judge.conjugate.conjugate_posterior`.

    Parameters
    ----------
    n11, n10, n01, n00 : int or array of int (one per group)
        The labelled 2×2 table, first index the human label, second the judge's.
    t1, t0 : int or array of int
        Unlabelled items the judge calls 1 and 0.
    variant : {"a", "b"}
        Model A or Model B.
    prior : dict, optional
        Beta ``(a, b)`` for any of ``theta``, ``q1``, ``q0`` (Model A; default (1, 1), (1/2, 1/2),
        (1/2, 1/2)) or ``p``, ``mu1``, ``mu0`` (Model B; the same defaults): Jeffreys'
        Dirichlet(1/2, 1/2, 1/2, 1/2) on the 2×2 table.
    groups : sequence, optional
        Coordinates of a ``group`` dimension when the counts are arrays.

    Returns
    -------
    pymc.Model
        Model A: the free Beta vector ``rates`` (dim ``rate`` = theta, q1, q0) and deterministic
        ``theta``, ``q1``, ``q0``, ``p``, ``kappa`` (Youden's :math:`q_0 + q_1 - 1`), ``mu1``
        :math:`= \theta q_1/p`, ``mu0`` :math:`= \theta(1 - q_1)/(1 - p)`. Model B: free ``p``,
        ``mu1``, ``mu0`` and deterministic ``theta``. The counts are ``pm.Data``
        (``pm.set_data`` refits without recompiling).

    Examples
    --------
    >>> a = model(36, 14, 29, 121, t1=627, t0=1173)
    >>> [v.name for v in a.free_RVs], [v.name for v in a.deterministics][:3]
    (['rates'], ['theta', 'q1', 'q0'])
    >>> b = model(36, 14, 29, 121, t1=627, t0=1173, variant="b")
    >>> sorted(v.name for v in b.free_RVs)
    ['mu0', 'mu1', 'p']
    """
    variant = as_choice(variant, "variant", VARIANTS)
    build = _model_a if variant == "a" else _model_b
    return build(dict(n11=n11, n10=n10, n01=n01, n00=n00, t1=t1, t0=t0),
                 beta_priors(prior, variant), groups)


def _model_a(counts: dict, prior: dict, groups):
    import pymc as pm

    dims = None if groups is None else "group"
    coords = {"rate": list(PARAMS["a"]), **({} if groups is None else {"group": list(groups)})}
    with pm.Model(coords=coords) as pm_model:
        d = _data(counts, dims)
        a, b = (np.array([prior[k][j] for k in PARAMS["a"]]) for j in (0, 1))
        n_total = d["n11"] + d["n10"] + d["n01"] + d["n00"] + d["t1"] + d["t0"]
        p_hat = (d["t1"] + d["n11"] + d["n01"] + 1) / (n_total + 2)
        transform = _calibration_transform_class()(pm.math.logit(p_hat),
                                                   pm.math.sqrt(n_total * p_hat * (1 - p_hat)))
        rates = pm.Beta("rates", alpha=a, beta=b, default_transform=transform,
                        dims=("rate",) if groups is None else ("group", "rate"))
        theta, q1, q0 = (pm.Deterministic(k, rates[..., j], dims=dims)
                         for j, k in enumerate(PARAMS["a"]))
        p = pm.Deterministic("p", theta * q1 + (1 - theta) * (1 - q0), dims=dims)
        m1, m0 = d["n11"] + d["n10"], d["n01"] + d["n00"]
        pm.Binomial("labelled_positive", n=m1 + m0, p=theta, observed=m1, dims=dims)
        pm.Binomial("judge_true_positive", n=m1, p=q1, observed=d["n11"], dims=dims)
        pm.Binomial("judge_true_negative", n=m0, p=q0, observed=d["n00"], dims=dims)
        pm.Binomial("unlabelled_judged_positive", n=d["t1"] + d["t0"], p=p, observed=d["t1"],
                    dims=dims)
        pm.Deterministic("kappa", q0 + q1 - 1, dims=dims)
        pm.Deterministic("mu1", theta * q1 / p, dims=dims)
        pm.Deterministic("mu0", theta * (1 - q1) / (1 - p), dims=dims)
    return pm_model


def _model_b(counts: dict, prior: dict, groups):
    import pymc as pm

    dims = None if groups is None else "group"
    coords = {} if groups is None else {"group": list(groups)}
    with pm.Model(coords=coords) as pm_model:
        d = _data(counts, dims)
        p = pm.Beta("p", *prior["p"], dims=dims)
        mu1 = pm.Beta("mu1", *prior["mu1"], dims=dims)
        mu0 = pm.Beta("mu0", *prior["mu0"], dims=dims)
        c1, c0 = d["n11"] + d["n01"], d["n10"] + d["n00"]
        pm.Binomial("judged_positive", n=c1 + c0 + d["t1"] + d["t0"], p=p,
                    observed=d["t1"] + c1, dims=dims)
        pm.Binomial("positive_given_judge_1", n=c1, p=mu1, observed=d["n11"], dims=dims)
        pm.Binomial("positive_given_judge_0", n=c0, p=mu0, observed=d["n10"], dims=dims)
        pm.Deterministic("theta", p * mu1 + (1 - p) * mu0, dims=dims)
    return pm_model
