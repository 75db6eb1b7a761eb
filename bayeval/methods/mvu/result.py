r"""Per-instance results of an MVU (point mass, Dirichlet, Gaussian logits, draws, posterior
mixtures) and :class:`MVUEvaluation`, the Evaluation that holds them.

Every result is a dict of arrays over instances with

* ``y_hard``, ``c_hard``: the hard decision and its confidence (:mod:`bayeval.methods.mvu.fast`);
* ``y_soft``, ``c_soft``: :math:`\arg\max_j w_j\mathrm{E}\Phi_j` and
  :math:`\mathrm{E}\Phi_{y_\mathrm{soft}}`;
* ``mean``, ``sd``, ``lower``, ``upper``: the law of :math:`\Phi_{\hat y}`,
  :math:`\hat y = y_\mathrm{hard}`;
* ``proba`` (n, K): :math:`\mathrm{E}\,\Phi`, the probabilities of the classes given what is
  observed;

and, where they exist, ``alpha`` (Dirichlet parameters, ``inf`` for a point mass), ``c_hard_se``
(Monte-Carlo standard error :math:`\sqrt{c(1-c)/S}`), ``c_hard_lower``/``c_hard_upper`` (interval of
:math:`P_{\hat y}(\theta^{(s)})` over posterior draws) and ``interval_mass`` (the exact mass of
``[lower, upper]``: the interval level, or 1 for a point mass). Posterior functions also return
``phi_hat`` (chain, draw, instance), one posterior-predictive draw of :math:`\Phi_{\hat y}` per
posterior draw, and ``vote_hat``, the probability :math:`P(V = \hat y \mid \theta^{(s)})` of
each draw (the indicator of the drawn vote where only predictive draws exist), whose mean is
``c_hard``: the draws that :meth:`MVUEvaluation.check` compares with :func:`check_reference`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayeval.check import Z_TOLERANCE
from bayeval.evaluation import Evaluation
from bayeval.methods.mvu.decisions import bayes_actions
from bayeval.methods.mvu.fast import (
    beta_law,
    beta_mixture_law,
    draws_law,
    gaussian_hard_confidence,
    gaussian_vote_probs,
    hard_confidence,
    logitnormal_law,
    logitnormal_mixture_law,
    sample_dirichlet,
    soft_confidence,
    vote_probs,
    votes_from_draws,
)
from bayeval.methods.mvu.plan import STATE, FeaturePlanner, plan_units
from bayeval.table import Table, table
from bayeval.validation import as_seed

# the result builders (point_mass, dirichlet, gaussian_logits, empirical, *_posterior,
# predictive_draws, merge) are the engine of bayeval.methods.mvu.api, not public API
__all__ = ["DECISION", "QUANTITIES", "MVUEvaluation", "check_reference"]

#: the quantities that :meth:`MVUEvaluation.check` compares per row
QUANTITIES = ("phi", "c_hard")
#: absolute error of the exact vote probabilities (quadrature), added to the check's tolerances
QUADRATURE = 1e-8
EPS = np.finfo(float).eps
#: per-instance columns that every summary of :func:`bayeval.methods.mvu.api.mvu` carries
DECISION = ("y_hard", "c_hard", "c_hard_lower", "c_hard_upper", "c_hard_se", "y_hard_mar",
            "c_hard_mar", "y_soft", "c_soft", "n_missing")


def _take(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x[..., n, y[n]] for x of shape (..., n, K)."""
    return np.take_along_axis(x, np.broadcast_to(y[:, None], (*x.shape[:-1], 1)), -1)[..., 0]


def _weighted(weights, k: int) -> np.ndarray:
    return np.ones(k) if weights is None else np.asarray(weights, dtype=float)


def point_mass(phi: np.ndarray, weights=None) -> dict:
    r"""A point mass at :math:`\phi` (nothing missing, no variance): :math:`c_\mathrm{hard} = 1`."""
    y = np.argmax(phi * _weighted(weights, phi.shape[-1]), axis=-1)
    p = _take(phi, y)
    zero = np.zeros(len(phi))
    return {"y_hard": y, "c_hard": zero + 1.0, "y_soft": y, "c_soft": p, "mean": p, "sd": zero,
            "lower": p, "upper": p, "alpha": np.full(phi.shape, np.inf), "c_hard_se": zero,
            "c_hard_lower": zero + 1.0, "c_hard_upper": zero + 1.0, "interval_mass": zero + 1.0,
            "proba": phi}


def dirichlet(alpha: np.ndarray, *, weights=None, how: str = "exact", draws: int = 1000,
              random_seed=None, ci_prob: float = 0.95, ci_kind: str = "eti") -> dict:
    r"""Dirichlet MVUs: exact (or ``how="mc"``: vote draws) hard confidence, Beta marginal
    :math:`\Phi_{\hat y} \sim \mathrm{Beta}(\alpha_{\hat y}, \alpha_0 - \alpha_{\hat y})`."""
    y, c = hard_confidence(alpha, weights=weights, method=how, draws=draws,
                                random_seed=random_seed)
    mu = alpha / alpha.sum(-1, keepdims=True)
    y_soft, c_soft = soft_confidence(mu, weights=weights)
    a_y = _take(alpha, y)
    mean, sd, lo, hi = beta_law(a_y, alpha.sum(-1) - a_y, ci_prob, ci_kind)
    out = {"y_hard": y, "c_hard": c, "y_soft": y_soft, "c_soft": c_soft, "mean": mean, "sd": sd,
           "lower": lo, "upper": hi, "alpha": alpha, "proba": mu}
    if how == "mc":
        out["c_hard_se"] = np.sqrt(c * (1 - c) / draws)
    return out


def gaussian_logits(mean: np.ndarray, cov: np.ndarray, *, weights=None, draws: int = 1000,
                    random_seed=None, ci_prob: float = 0.95, ci_kind: str = "eti") -> dict:
    r"""Gaussian logits (a linear classifier under Gaussian imputation).

    Binary (``mean`` (n, 1)): exact normal-CDF votes and the exact logit-normal law. Multiclass:
    exact orthant votes (:func:`bayeval.methods.mvu.fast.gaussian_hard_confidence`); the soft
    confidence and the law of :math:`\Phi_{\hat y}` from ``draws`` softmax draws of the logits
    (no classifier calls).
    """
    if mean.shape[-1] == 1:
        m, s = mean[:, 0], np.sqrt(cov[:, 0, 0])
        y, c = gaussian_hard_confidence(m, s**2, weights=weights)
        e1, sd, lo, hi = logitnormal_law(m, s, ci_prob, ci_kind)  # of Phi_1; Phi_0 = 1 - Phi_1
        y_soft, c_soft = soft_confidence(np.stack([1 - e1, e1], -1), weights=weights)
        one = y == 1
        return {"y_hard": y, "c_hard": c, "y_soft": y_soft, "c_soft": c_soft,
                "mean": np.where(one, e1, 1 - e1), "sd": sd, "lower": np.where(one, lo, 1 - hi),
                "upper": np.where(one, hi, 1 - lo), "proba": np.stack([1 - e1, e1], -1)}
    rng = as_seed(random_seed)
    y, c = gaussian_hard_confidence(mean, cov, weights=weights, random_seed=rng)
    k = mean.shape[-1]
    jitter = 1e-12 * np.trace(cov, axis1=-2, axis2=-1)[:, None, None] + 1e-300
    chol = np.linalg.cholesky(cov + jitter * np.eye(k))
    z = mean[:, None, :] + rng.standard_normal((len(mean), draws, k)) @ np.swapaxes(chol, 1, 2)
    phi = special.softmax(z, axis=-1)
    y_soft, c_soft = soft_confidence(phi.mean(1), weights=weights)
    law = draws_law(np.take_along_axis(phi, y[:, None, None], -1)[..., 0], ci_prob, ci_kind)
    return {"y_hard": y, "c_hard": c, "y_soft": y_soft, "c_soft": c_soft,
            **dict(zip(("mean", "sd", "lower", "upper"), law, strict=True)),
            "proba": phi.mean(1)}


def empirical(phi: np.ndarray, *, weights=None, ci_prob: float = 0.95, ci_kind: str = "eti",
              shifts: int | None = None) -> dict:
    r"""MVU draws (n, S, K): vote frequencies, their standard error, the empirical law.

    The standard error is :math:`\sqrt{c(1-c)/S}` for independent draws; for ``shifts``
    interleaved randomised quasi-Monte-Carlo replicates (draw s in replicate s mod R) it is the
    standard deviation of the R replicates' frequencies over :math:`\sqrt R`.
    """
    votes = votes_from_draws(phi, weights=weights)
    y, c = np.argmax(votes, -1), np.max(votes, -1)
    y_soft, c_soft = soft_confidence(phi.mean(1), weights=weights)
    law = draws_law(np.take_along_axis(phi, y[:, None, None], -1)[..., 0], ci_prob, ci_kind)
    if shifts is None:
        se = np.sqrt(c * (1 - c) / phi.shape[1])
    else:
        share = np.stack([_take(votes_from_draws(phi[:, r::shifts], weights=weights), y)
                          for r in range(shifts)], -1)
        se = share.std(-1, ddof=1) / np.sqrt(shifts)
    return {"y_hard": y, "c_hard": c, "y_soft": y_soft, "c_soft": c_soft,
            **dict(zip(("mean", "sd", "lower", "upper"), law, strict=True)), "c_hard_se": se,
            "proba": phi.mean(1)}


def _posterior(per_draw: np.ndarray, soft_mean: np.ndarray, weights, ci_prob: float,
               ci_kind: str) -> dict:
    r"""Mixture over draws: :math:`c_\mathrm{hard} = \max_j \frac1S\sum_s P_j^{(s)}` (average, then
    maximise) and the interval of :math:`P_{\hat y}^{(s)}`."""
    votes = per_draw.mean(0)
    y = np.argmax(votes, -1)
    vote_hat = _take(per_draw, y)
    _, _, lo, hi = draws_law(vote_hat, ci_prob, ci_kind, axis=0)
    y_soft, c_soft = soft_confidence(soft_mean, weights=weights)
    return {"y_hard": y, "c_hard": np.max(votes, -1), "c_hard_lower": lo, "c_hard_upper": hi,
            "y_soft": y_soft, "c_soft": c_soft, "interval_mass": np.full(len(y), ci_prob),
            "vote_hat": vote_hat, "proba": soft_mean}


def dirichlet_posterior(alpha: np.ndarray, *, weights=None, random_seed=None,
                        ci_prob: float = 0.95, ci_kind: str = "eti") -> dict:
    r"""Posterior draws of Dirichlet MVUs, ``alpha`` (chain, draw, n, K): exact vote
    probabilities per draw, the Beta-mixture law of :math:`\Phi_{\hat y}`, and one
    :math:`\Phi \sim \mathrm{Dir}(\alpha^{(s)})` per draw."""
    shape = alpha.shape
    a = alpha.reshape(-1, *shape[2:])
    out = _posterior(vote_probs(a, weights=weights),
                     (a / a.sum(-1, keepdims=True)).mean(0), weights, ci_prob, ci_kind)
    a_y = _take(a, out["y_hard"])
    law = beta_mixture_law(a_y.T, (a.sum(-1) - a_y).T, ci_prob)
    phi = sample_dirichlet(a, random_seed)
    out.update(zip(("mean", "sd", "lower", "upper"), law, strict=True))
    out["alpha"] = a.mean(0)
    out["phi_hat"] = _take(phi, out["y_hard"]).reshape(shape[:3])
    out["vote_hat"] = out["vote_hat"].reshape(shape[:3])
    return out


def logit_posterior(m: np.ndarray, v: np.ndarray, *, weights=None, random_seed=None,
                    ci_prob: float = 0.95) -> dict:
    r"""Posterior draws of binary Gaussian logits, mean ``m`` and variance ``v`` (chain, draw, n):
    exact normal-CDF votes per draw, the logit-normal mixture law, one
    :math:`\sigma(z^{(s)})`, :math:`z^{(s)} \sim N(m_s, v_s)`, per draw."""
    shape = m.shape
    m, s = m.reshape(-1, shape[2]), np.sqrt(np.maximum(v.reshape(-1, shape[2]), 1e-300))
    per_draw = gaussian_vote_probs(m.ravel(), s.ravel() ** 2, weights=weights).reshape(
        (*m.shape, 2))
    e1 = logitnormal_law(m, s)[0].mean(0)
    out = _posterior(per_draw, np.stack([1 - e1, e1], -1), weights, ci_prob, "eti")
    signed = np.where(out["y_hard"] == 1, m, -m)
    law = logitnormal_mixture_law(signed.T, s.T, ci_prob)
    z = signed + s * as_seed(random_seed).standard_normal(m.shape)
    out.update(zip(("mean", "sd", "lower", "upper"), law, strict=True))
    out["phi_hat"] = special.expit(z).reshape(shape)
    out["vote_hat"] = out["vote_hat"].reshape(shape)
    return out


def predictive_draws(phi: np.ndarray, *, weights=None, ci_prob: float = 0.95,
                     ci_kind: str = "eti") -> dict:
    r"""Posterior-predictive MVU draws only, ``phi`` (chain, draw, n, K): vote frequencies and
    the empirical law (no per-draw vote probabilities: no interval of :math:`c_\mathrm{hard}`)."""
    out = empirical(np.moveaxis(phi.reshape(-1, *phi.shape[2:]), 0, 1), weights=weights,
                    ci_prob=ci_prob, ci_kind=ci_kind)
    out["phi_hat"] = _take(phi, out["y_hard"])
    out["vote_hat"] = _take(votes_from_draws(phi[..., None, :], weights=weights), out["y_hard"])
    return out


def merge(n: int, rows: np.ndarray, part: dict, complete: np.ndarray, dirac: dict) -> dict:
    """Results of all n instances: ``part`` for ``rows``, ``dirac`` for the ``complete`` rows."""
    out = {}
    for key in part:
        value = np.asarray(part[key])
        full = np.empty((n, *value.shape[1:]), dtype=np.result_type(value, dirac[key]))
        full[rows], full[complete] = value, dirac[key]
        out[key] = full
    return out


def check_reference(phi, vote: np.ndarray, n_reference: np.ndarray, ci_prob: float) -> dict:
    r"""What :meth:`MVUEvaluation.check` compares the posterior with, from independent draws.

    Parameters
    ----------
    phi : (mean, sd, lower, upper) of arrays (n,), or array (S, n)
        The law of :math:`\Phi_{\hat y}`: exact (a mixture over independent posterior draws of
        exact laws; its equal-tailed interval has mass ``ci_prob``), or independent draws of it
        (its interval then holds the fraction of the draws that falls inside).
    vote : array (S, n)
        :math:`P(V = \hat y \mid \theta^{(s)})` per independent posterior draw (the indicator
        of a drawn vote where only draws exist); its mean is the reference ``c_hard``.
    n_reference : array (n,)
        The effective number of independent draws behind each row.
    ci_prob : float

    Returns
    -------
    dict
        ``mean``, ``sd``, ``lower``, ``upper``, ``interval_mass``, arrays (2, n) over the
        quantities ``phi`` and ``c_hard``; ``n_reference`` (n,).

    Examples
    --------
    An exact law of :math:`\Phi_{\hat y}` and 201 draws of the vote probability, one row:

    >>> vote = np.linspace(0.5, 1.0, 201)[:, None]
    >>> ref = check_reference(([0.8], [0.1], [0.55], [0.95]), vote, [201.0], 0.95)
    >>> ref["mean"].round(3).tolist(), ref["interval_mass"].round(3).tolist()
    ([[0.8], [0.75]], [[0.95], [0.95]])
    """
    laws = []
    for value in (phi, vote):
        if isinstance(value, tuple):
            laws.append((*value, np.full(len(value[0]), ci_prob)))
            continue
        mean, sd, lo, hi = draws_law(value, ci_prob, "eti", axis=0)
        laws.append((mean, sd, lo, hi, ((value >= lo) & (value <= hi)).mean(0)))
    out = {key: np.stack([np.asarray(law[i], dtype=float) for law in laws])
           for i, key in enumerate(("mean", "sd", "lower", "upper", "interval_mass"))}
    out["n_reference"] = np.asarray(n_reference, dtype=float)
    return out


# -------------------------------------------------------------------------------- Evaluation
class MVUEvaluation(Evaluation, method="mvu"):
    """The :class:`~bayeval.evaluation.Evaluation` of :func:`mvu`: its summary always carries the
    decision columns (also when it summarises posterior draws), and :meth:`decide` says which
    missing features to collect.

    Built by :func:`bayeval.methods.mvu.api.mvu`; a saved one reads back as an
    ``MVUEvaluation`` (``be.load``), and a Gaussian-imputation run keeps what
    :meth:`bayes_actions`, :meth:`decide` (``costs=``) and
    :func:`~bayeval.methods.mvu.mnar.delta_sensitivity` need in its group ``imputation`` (a
    non-linear classifier is passed again as ``classifier=``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.methods.mvu.api import mvu
    >>> from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
    >>> imputer = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
    >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
    >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], imputer=imputer)
    >>> ev.summary()["c_hard"].round(4).tolist()  # the third row is complete
    [0.7345, 1.0, 1.0]
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        r""":meth:`Evaluation.summary <bayeval.evaluation.Evaluation.summary>` per ``instance``,
        with the decision columns of the closed form (``y_hard``, ``c_hard``, ``y_soft``,
        ``c_soft``, ``n_missing``, ...) also in summaries of posterior draws.

        Parameters
        ----------
        source : {"closed_form", "draws"}, optional
        ci_prob, ci_kind : optional
            As :meth:`Evaluation.summary <bayeval.evaluation.Evaluation.summary>`.

        Returns
        -------
        Table
            ``mean``, ``sd``, ``lower``, ``upper`` of :math:`\Phi_{\hat y}` and the decision
            columns.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.methods.mvu.api import mvu
        >>> from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
        >>> imputer = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
        >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], imputer=imputer)
        >>> list(ev.summary().columns)
        ['mean', 'sd', 'lower', 'upper', 'y_hard', 'c_hard', 'y_soft', 'c_soft', 'n_missing']
        """
        out = super().summary(source, ci_prob, ci_kind)
        cf = self.closed_form
        if out.attrs["source"] == "draws" and cf is not None:
            for var in DECISION:
                if var in cf:
                    out[var] = cf[var].to_series().reindex(out.index).to_numpy()
        return out

    def check(self) -> Table:
        r"""The posterior against an independent computation, per row, and the sampler's tests.

        ``method="both"`` stores a reference computed without the posterior's draws
        (:func:`check_reference`): the law of :math:`\Phi_{\hat y}` and of
        :math:`P(V = \hat y \mid \theta)` under independent posterior draws
        (:func:`~bayeval.methods.mvu.models.independent_posterior_a`, ``_b``, ``_c``). Two
        quantities are compared per row (:func:`bayeval.check.compare`): ``phi``, the draws
        ``phi_hat`` (mean, variance ratio and interval mass: the summary's ``mean``, ``sd``,
        ``lower``, ``upper``), and ``c_hard``, the draws ``vote_hat`` (mean and interval mass:
        ``c_hard`` and ``c_hard_lower``/``c_hard_upper``; near 1 their law is too heavy-tailed
        for a variance test, as is :math:`\Phi_{\hat y}`'s where the reference's sd exceeds
        the width of its interval, a variance carried by a tail beyond it, which a few
        hundred draws do not sample, or is below :math:`1.5 \cdot 10^{-6}`, where float64 does
        not resolve it). The reference is itself Monte Carlo, with
        :math:`n_\mathrm{ref}` effective draws, so each 4-sigma tolerance :math:`t` for
        :math:`n_\mathrm{eff}` draws covers both errors, :math:`t\sqrt{1 +
        n_\mathrm{eff}/n_\mathrm{ref}} + 10^{-8}` (the quadrature's accuracy), the mean's
        with each side's own sd, :math:`4\sqrt{\mathrm{MCSE}^2 +
        s_\mathrm{ref}^2/n_\mathrm{ref}} + 10^{-8}` (draws without spread, e.g. every vote
        the same, still meet the reference's error). ``reported``
        compares the value the results table reports (``mean``, ``c_hard``) with the reference
        mean, with the tolerance of the draws' mean. After NUTS the
        sampler's own tests follow (:func:`bayeval.check.sampler_tests`: R-hat at most 1.01,
        bulk and tail ESS at least 400, no divergence; quantity and instance ``"sampler"``),
        and the caption names every failed test.

        Returns
        -------
        Table
            Indexed by ``(quantity, instance, test)``, columns of :meth:`Evaluation.check
            <bayeval.evaluation.Evaluation.check>`; ``attrs["passed"]``.

        Raises
        ------
        ValueError
            For a ``method="pymc"`` run (its closed form is built from the same draws, so a
            comparison could not fail when the sampler does), or without draws.

        Examples
        --------
        Model C (DMV) under its Laplace approximation, against importance sampling of its exact
        posterior:

        >>> import numpy as np
        >>> from bayeval.methods.mvu.api import mvu
        >>> from bayeval.methods.mvu.estimators import LinearClassifier
        >>> rng = np.random.default_rng(0)
        >>> train = rng.multivariate_normal([0, 0], [[0.3, 0.38], [0.38, 1.0]], size=300)
        >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
        >>> ev = mvu(clf, [[np.nan, 0.9], [0.2, np.nan]], train=train, imputer="dmv",
        ...          method="both", random_seed=1)
        >>> out = ev.check()
        >>> out.attrs["passed"], out.index.get_level_values("quantity").unique().tolist()
        (True, ['phi', 'c_hard'])
        """
        if self.meta["variant"] == "pymc":
            raise ValueError("check() needs method='both': under method='pymc' the closed form "
                             "is built from the same posterior draws, so the comparison cannot "
                             "fail when the sampler does.")
        if "check_reference" not in self.tree.children:
            raise ValueError("check() compares posterior draws with an independent computation; "
                             "run mvu(..., method='both').")
        ref = self.tree["check_reference"].to_dataset()
        pp = self.tree["posterior_predictive"].to_dataset()
        checked = xr.concat([pp["phi_hat"], pp["vote_hat"]], dim=pd.Index(QUANTITIES,
                                                                          name="quantity"))
        groups = {"posterior_predictive": xr.Dataset({"checked": checked})}
        groups.update({g: self.tree[g].to_dataset() for g in ("posterior", "sample_stats")
                       if g in self.tree.children})
        view = Evaluation.create(
            method="mvu", variant="both", closed_form=ref.drop_vars("n_reference"),
            draws=xr.DataTree.from_dict(groups), estimand="posterior_predictive/checked",
            ci_prob=self.ci_prob, iid_draws=self.meta["iid_draws"])
        out = view.check()
        quantity, instance, test = (out.index.get_level_values(k)
                                    for k in ("quantity", "instance", "test"))
        drawn = quantity != "sampler"
        rows = pd.MultiIndex.from_arrays([quantity[drawn], instance[drawn]])
        width, spread = np.full(len(out), np.inf), np.zeros(len(out))
        width[drawn] = (ref["upper"] - ref["lower"]).to_series().reindex(rows).to_numpy()
        spread[drawn] = ref["sd"].to_series().reindex(rows).to_numpy()
        # a variance carried by a tail beyond the interval, or below the resolution of
        # E[Phi^2] - E[Phi]^2 in float64 (sd under 100 sqrt(eps), about 1.5e-6)
        tail = (quantity == "phi") & ((width < spread) | (spread < 100 * np.sqrt(EPS)))
        out = out[~(((quantity == "c_hard") | tail) & (test == "variance_ratio"))]
        quantity, instance, test = (out.index.get_level_values(k)
                                    for k in ("quantity", "instance", "test"))
        drawn = quantity != "sampler"
        n_ref = ref["n_reference"].to_series().reindex(instance[drawn]).to_numpy()
        sd_ref = ref["sd"].to_series().reindex(
            pd.MultiIndex.from_arrays([quantity[drawn], instance[drawn]])).to_numpy()
        frame = out[drawn].copy()
        scaled = frame["tolerance"] * np.sqrt(1 + frame["n_eff"] / n_ref)
        # the mean: each side's Monte-Carlo error with its own sd (draws without spread have
        # none, the reference's may have some)
        mean_test = (test[drawn] == "mean") & np.isfinite(sd_ref)
        draws_mcse = np.nan_to_num(frame["tolerance"].to_numpy() / Z_TOLERANCE)
        both = Z_TOLERANCE * np.sqrt(draws_mcse**2 + sd_ref**2 / n_ref)
        frame["tolerance"] = np.where(mean_test, both, scaled) + QUADRATURE
        frame = _with_reported(frame, self.closed_form)
        frame["passed"] = frame["statistic"] <= frame["tolerance"]
        out = pd.concat([frame, out[~drawn]])
        passed = bool(out["passed"].all())
        failed = out[~out["passed"]]
        where = failed.index.get_level_values("quantity") != "sampler"
        verdict = "all passed" if passed else "FAILED"
        if where.any():
            verdict += ": " + ", ".join(f"{q} of instance {i} ({t})"
                                        for q, i, t in failed.index[where])
        if (~where).any():
            verdict += "; the sampler did not converge: " + ", ".join(
                f"{t} {row.draws:.4g} (threshold {row.tolerance:g})"
                for (_, _, t), row in failed[~where].iterrows())
        kind = "independent" if self.meta["iid_draws"] else "MCMC"
        caption = (f"posterior ({kind} draws) vs an independent computation, 4-sigma tolerances "
                   f"on both Monte-Carlo errors: {verdict}")
        return table(out, caption, passed=passed)

    #: the :class:`~bayeval.methods.mvu.plan.FeaturePlanner` of the run (rebuilt from the group
    #: ``imputation`` of a saved one by :meth:`feature_planner`)
    planner = None

    def feature_planner(self, classifier=None, what: str = "this"):
        """The run's :class:`~bayeval.methods.mvu.plan.FeaturePlanner`, rebuilt from the saved
        group ``imputation`` after :func:`bayeval.load` (with ``classifier`` unless the run's
        is linear); None for a run that has none (not a Gaussian-imputation fast path).

        Raises
        ------
        ValueError
            A saved non-linear run without ``classifier`` (``what`` names the caller).

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.methods.mvu.api import mvu
        >>> from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
        >>> imputer = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> ev = mvu(LinearClassifier([[1.0, 1.0]], [-1.0]), [[np.nan, 0.9]], imputer=imputer)
        >>> MVUEvaluation(ev.tree).feature_planner().reveal(0, [[0]])[0].round(4).tolist()
        [0.2655]
        """
        state = self.tree[STATE].to_dataset() if STATE in self.tree.children else None
        if self.planner is None and state is not None and set(state.dims) <= {
                "instance", "feature", "feature_other", "logit", "class"}:  # not gathered
            cf, seed = self.closed_form, self.meta.get("random_seed")
            weights = self.meta.get("weights")
            self.planner = FeaturePlanner.from_dataset(
                state, cf["missing"].values, cf["c_hard"].values,
                cf.sizes["class"], weights=weights, classifier=classifier,
                random_seed=seed if isinstance(seed, int) else None, what=what)
        return self.planner

    def decide(self, threshold: float | None = None, *, collect_cost: float | None = None,
               change_cost: float = 1.0, costs=None, groups=None, classifier=None) -> Table:
        r"""Where to collect the missing features, the expected cost of each choice, and (with
        ``costs``) which features to measure first.

        Deciding now costs ``change_cost`` when the decision on the complete row would differ, so
        its expected cost (``risk``) is :math:`(1 - c_\mathrm{hard})\,\mathrm{change\_cost}`.
        Collect where :math:`c_\mathrm{hard} <` ``threshold``, or, without a threshold, where the
        risk exceeds ``collect_cost``. ``expected_cost`` is ``collect_cost`` (0 if not given) for
        collected rows and the risk for the others; a complete row has :math:`c_\mathrm{hard}=1`
        and costs nothing.

        With ``costs`` (per feature) every row to collect gets a greedy plan
        (:mod:`bayeval.methods.mvu.plan`): measure next the feature most likely to change the
        decision per cost, until the expected :math:`c_\mathrm{hard}` reaches the level
        (``threshold``, else :math:`1 - \mathrm{collect\_cost}/\mathrm{change\_cost}`).
        ``groups`` names features measured together at one cost: a group's missing features are
        revealed at once, :math:`p_\mathrm{flip}(G) = P(y_{G \cap M} \ne y)`; it costs its cost
        in a row missing at least one of them and is no candidate in the others.

        Parameters
        ----------
        threshold : float in (0, 1], optional
        collect_cost, change_cost : float, optional
        costs : float, array (d,) or dict, optional
            Cost of measuring each feature (one number for all; a dict by feature name), or with
            ``groups`` each group and each feature of no group (one number or a dict by name).
        groups : dict, optional
            ``{group name: [feature names]}``: features measured together at one cost (each
            feature in at most one group; the others are measured alone). By default the
            run's ``groups`` (:func:`~bayeval.methods.mvu.mvu`), if it had any.
        classifier : classifier or callable, optional
            The run's classifier, which plans of a result read back from disk need unless it
            is linear (its coefficients are saved).

        Returns
        -------
        Table indexed by ``instance`` with ``y_hard``, ``c_hard``, ``risk``, ``collect``,
        ``expected_cost``; ``attrs`` hold ``n_collect`` and ``total_expected_cost``. After
        ``mnar=`` also ``c_hard_mar`` and ``collect_mar``, the same rule at random. With
        ``costs`` also ``first`` (the feature to measure first), ``p_flip_first`` (the
        probability that it alone changes the decision), ``gain_first`` (its expected reduction
        of :math:`1 - c_\mathrm{hard}`), ``plan`` (the features in order), ``plan_cost`` and
        ``c_hard_after`` (expected once the plan is done), and ``attrs["by_feature"]``: a table
        by (``instance``, ``feature``) of ``p_flip``, ``gain`` and ``cost`` of every missing
        feature revealed alone. With ``groups``, ``first``, ``plan`` and ``feature`` name the
        groups.

        Raises
        ------
        ValueError
            Neither ``threshold`` nor ``collect_cost``; a threshold outside (0, 1]; a negative
            cost; ``costs`` without a Gaussian-imputation run in this session; ``groups``
            without ``costs``, or not a dict of non-empty lists of features, each in one group.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.methods.mvu.api import mvu
        >>> from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
        >>> imputer = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
        >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], imputer=imputer)
        >>> plan = ev.decide(collect_cost=0.1)  # collect where 1 - c_hard > 0.1
        >>> plan["collect"].tolist(), plan["risk"].round(4).tolist()
        ([True, False, False], [0.2655, 0.0, 0.0])

        Which feature first? Feature 2 is five times cheaper but rarely changes the decision:

        >>> imputer = GaussianImputer(np.zeros(3), [[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1]])
        >>> clf = LinearClassifier([[1.0, 1.0, 0.5]], [0.0])
        >>> ev = mvu(clf, [[np.nan, 0.3, np.nan]], imputer=imputer)
        >>> plan = ev.decide(0.9, costs=[1.0, 1.0, 0.2])
        >>> plan[["c_hard", "first", "p_flip_first", "plan", "c_hard_after"]].round(4)
        ... # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
        collect where c_hard < 0.9: 1 of 1 rows; ...; plans measure features until the ...
                  c_hard  first  p_flip_first  plan  c_hard_after
        instance
        0         0.6736      2        0.1841  2, 0           1.0
        >>> plan.attrs["by_feature"].round(4)  # doctest: +NORMALIZE_WHITESPACE
                          p_flip    gain  cost
        instance feature
        0        0        0.3017  0.1773   1.0
                 2        0.1841  0.0436   0.2

        Features 0 and 2 come from one blood panel, measured at once for 1.1; it reveals all
        that is missing, so its p_flip is 1 - c_hard:

        >>> panel = ev.decide(0.9, costs={"panel": 1.1, 1: 1.0}, groups={"panel": [0, 2]})
        >>> panel.attrs["by_feature"].round(4)  # doctest: +NORMALIZE_WHITESPACE
                          p_flip    gain  cost
        instance feature
        0        panel    0.3264  0.3264   1.1
        """
        if threshold is None and collect_cost is None:
            raise ValueError("decide() needs a threshold on c_hard or a collect_cost.")
        if threshold is not None and not 0 < threshold <= 1:
            raise ValueError(f"threshold must lie in (0, 1], got {threshold}.")
        for name, value in (("collect_cost", collect_cost), ("change_cost", change_cost)):
            if value is not None and not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a non-negative number, got {value}.")
        cf = self.closed_form
        frame = cf[["y_hard", "c_hard"]].to_dataframe()
        frame["risk"] = (1 - frame["c_hard"]) * change_cost
        frame["collect"] = (frame["c_hard"] < threshold if threshold is not None
                            else frame["risk"] > collect_cost)
        frame["expected_cost"] = np.where(frame["collect"], collect_cost or 0.0, frame["risk"])
        rule = (f"c_hard < {threshold:g}" if threshold is not None
                else f"(1 - c_hard) x {change_cost:g} > {collect_cost:g}")
        total = float(frame["expected_cost"].sum())
        caption = (f"collect where {rule}: {int(frame['collect'].sum())} of {len(frame)} rows; "
                   f"total expected cost {total:.4g}")
        if "c_hard_mar" in cf:
            frame["c_hard_mar"] = cf["c_hard_mar"].values
            frame["collect_mar"] = (frame["c_hard_mar"] < threshold if threshold is not None
                                    else (1 - frame["c_hard_mar"]) * change_cost > collect_cost)
            caption += (f" (missing not at random; at random {int(frame['collect_mar'].sum())} "
                        "rows)")
        extra = {}
        if groups is None and costs is not None and self.meta.get("groups"):  # the run's sensors
            names = cf["feature"].values
            groups = {label: [names[i] for i in positions]
                      for label, positions in self.meta["groups"].items()}
        if groups is not None and costs is None:
            raise ValueError("groups= names features measured together at one cost: give "
                             "costs= too.")
        if costs is not None:
            level = threshold if threshold is not None else 1 - collect_cost / max(change_cost,
                                                                                   1e-300)
            extra["by_feature"] = self._plan(frame, costs, groups, level, classifier)
            caption += f"; plans measure features until the expected c_hard reaches {level:g}"
        return table(frame, caption, n_collect=int(frame["collect"].sum()),
                     total_expected_cost=total, **extra)

    def _plan(self, frame, costs, groups, level: float, classifier):
        """Fill the plan columns of ``frame`` in place; the by-feature table."""
        planner = self.feature_planner(classifier, "decide(costs=)")
        if planner is None:
            raise ValueError("costs= needs the classifier and the imputer of this run: a "
                             "Gaussian-imputation run (imputer='gaussian' or a GaussianImputer, "
                             "also read back from disk) or a copula run in the session that ran "
                             "it, with method='exact' or 'mc' and without dirichlet=.")
        labels, units = plan_units(groups, self.closed_form["feature"].values)
        cost = _feature_costs(costs, labels, groups is not None)
        for col, empty in (("first", None), ("p_flip_first", np.nan), ("gain_first", np.nan),
                           ("plan", ""), ("plan_cost", 0.0)):
            frame[col] = empty
        frame["c_hard_after"] = frame["c_hard"]
        records = []
        for pos in np.flatnonzero(frame["collect"].to_numpy()):
            order, first, after = planner.plan(pos, cost, level, units)
            label = frame.index[pos]
            records += [(label, labels[k], p, g, cost[k]) for k, (p, g) in first.items()]
            if order:
                frame.iloc[pos, frame.columns.get_indexer(
                    ["first", "p_flip_first", "gain_first", "plan", "plan_cost",
                     "c_hard_after"])] = [labels[order[0]], *first[order[0]],
                                          ", ".join(str(labels[k]) for k in order),
                                          float(cost[order].sum()), after]
        return pd.DataFrame.from_records(
            records, columns=["instance", "feature", "p_flip", "gain", "cost"]).set_index(
            ["instance", "feature"])


    def bayes_actions(self, loss, actions=None, *, collect_cost: float | None = None,
                      draws: int | None = None, random_seed=None, classifier=None) -> Table:
        r"""The Bayes action of every row under a loss matrix, and whether collecting pays off.

        :math:`a^* = \arg\min_a \sum_y L[a, y]\,\mathrm{E}\Phi_y` now, with expected loss
        :math:`R_\mathrm{now}`; once the missing features are known the action is chosen
        knowing :math:`\Phi`, expected loss :math:`R_\mathrm{after} = \mathrm{E}\min_a
        \sum_y L[a, y]\Phi_y`; their difference is the expected value of the information
        (:mod:`bayeval.methods.mvu.decisions`). Exact for two classes under a Beta MVU or a
        linear classifier under Gaussian imputation; from ``draws`` MVU draws otherwise.

        Parameters
        ----------
        loss : array (A, K) or DataFrame
            ``loss[a, y]``, the cost of action ``a`` when the class is ``y``: one row per class
            (predict it) and any others, e.g. abstain or refer. A DataFrame is indexed by the
            actions, its columns the classes.
        actions : sequence of A names, optional
            The rows' names (default: the classes, when A = K).
        collect_cost : float, optional
            Cost of collecting a row's missing features: adds ``collect`` (value above it) and
            ``expected_cost`` (:math:`\min(R_\mathrm{now}, R_\mathrm{after} +` cost)).
        draws : int, optional
            MVU draws per row where the law is not exact (default: the run's ``draws``).
        random_seed : int or Generator, optional
        classifier : classifier or callable, optional
            The run's classifier, which a result read back from disk needs unless it is linear
            (its coefficients and the imputer's parameters are saved).

        Returns
        -------
        Table
            Indexed by ``instance``: ``action`` (:math:`a^*`), ``loss_now``, ``loss_after``,
            ``loss_after_se`` (Monte-Carlo standard error, 0 where exact), ``value``
            (:math:`R_\mathrm{now} - R_\mathrm{after}`), ``p_change`` (the probability that
            the complete row calls for another action), and with ``collect_cost`` also
            ``collect`` and ``expected_cost``; ``attrs["total_expected_cost"]``.

        Raises
        ------
        ValueError
            A loss that does not match the classes, unnamed extra actions, a negative
            ``collect_cost``, or a run without the MVU's law (posterior or sampler-object runs,
            or a run read back from disk whose non-linear classifier is not given).

        Examples
        --------
        Predict a class (cost 1 if wrong) or refer the case to a person (cost 0.4); measuring the
        missing feature costs 0.01:

        >>> import numpy as np
        >>> from bayeval.methods.mvu.api import mvu
        >>> from bayeval.methods.mvu.estimators import GaussianImputer, LinearClassifier
        >>> imputer = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
        >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], imputer=imputer)
        >>> loss = [[0.0, 1.0], [1.0, 0.0], [0.4, 0.4]]
        >>> tab = ev.bayes_actions(loss, ["0", "1", "refer"], collect_cost=0.01)
        >>> tab[["action", "loss_now", "loss_after", "value", "p_change", "collect"]].round(4)
        ... # doctest: +NORMALIZE_WHITESPACE, +ELLIPSIS
        Bayes actions ...
                 action  loss_now  loss_after   value  p_change  collect
        instance
        0         refer    0.4000      0.3781  0.0219     0.389     True
        1             1    0.0348      0.0348  0.0000     0.000    False
        2             0    0.3775      0.3775  0.0000     0.000    False
        """
        frame = bayes_actions(self, loss, actions, collect_cost=collect_cost, draws=draws,
                              random_seed=random_seed, classifier=classifier)
        exact = frame.attrs.pop("exact")
        total = float(frame["expected_cost" if collect_cost is not None else "loss_now"].sum())
        caption = ("Bayes actions under the loss matrix, expected loss now and once the missing "
                   "features are collected (" + ("exact" if exact else "Monte Carlo where "
                                                 "loss_after_se > 0") + ")")
        if collect_cost is not None:
            caption += (f"; collect where value > {collect_cost:g}: "
                        f"{int(frame['collect'].sum())} of {len(frame)} rows")
        return table(frame, caption + f"; total expected cost {total:.4g}",
                     total_expected_cost=total)


def _with_reported(frame: pd.DataFrame, closed_form) -> pd.DataFrame:
    r"""The check's rows of each quantity and row followed by ``reported``: the value the results
    table reports (``mean`` of :math:`\Phi_{\hat y}`, ``c_hard``) against the reference mean,
    with the tolerance of the draws' mean (the reported value is at least as precise: the
    same draws' mean, or their mixture's)."""
    parts = []
    for (quantity, instance), group in frame.groupby(level=["quantity", "instance"], sort=False):
        mean = group.xs("mean", level="test").iloc[0]
        value = float(closed_form["mean" if quantity == "phi" else "c_hard"].sel(
            instance=instance))
        parts += [group, pd.DataFrame(
            {"fast": mean["fast"], "draws": value, "statistic": abs(value - mean["fast"]),
             "tolerance": mean["tolerance"], "n_eff": mean["n_eff"]},
            index=pd.MultiIndex.from_tuples([(quantity, instance, "reported")],
                                            names=frame.index.names))]
    return pd.concat(parts)


def _feature_costs(costs, names, grouped: bool = False) -> np.ndarray:
    """Per-unit costs from one number, an array (not with groups) or a dict by the names of
    the features (or groups, and features of no group)."""
    what = "group or feature" if grouped else "feature"
    if isinstance(costs, dict):
        unknown = [str(k) for k in costs if k not in list(names)]
        lacking = [str(n) for n in names if n not in costs]
        if unknown or lacking:
            raise ValueError(f"costs must give every {what}'s cost; unknown {unknown}, "
                             f"missing {lacking}.")
        costs, grouped = [costs[n] for n in names], False
    cost = np.broadcast_to(np.asarray(costs, dtype=float), (len(names),)) \
        if np.ndim(costs) == 0 or (np.shape(costs) == (len(names),) and not grouped) else None
    if cost is None or not np.all(np.isfinite(cost)) or (cost <= 0).any():
        count = "" if what != "feature" else f", {len(names)} numbers (one per feature)"
        raise ValueError(f"costs must be positive: one number{count} or a dict by {what} name; "
                         f"got {costs!r}.")
    return np.array(cost)
