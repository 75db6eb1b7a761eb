r"""Agreement of a fast path (closed form) with draws of the same quantity.

Every test is a 4σ rule on the Monte-Carlo error of the draws (false alarm about 6e-5 per test):

* **mean**: :math:`|\bar x - \mu| \le 4\,\mathrm{MCSE}`, with MCSE :math:`=\sigma/\sqrt N` for
  independent draws and ArviZ's MCSE of the mean for MCMC draws;
* **variance ratio**: :math:`|s^2/\sigma^2 - 1| \le 4\,\mathrm{sd}(s^2/\sigma^2)`; for independent
  draws :math:`\mathrm{sd}(s^2/\sigma^2) = \sqrt{(\mu_4/\sigma^4 - (N-3)/(N-1))/N}` with
  :math:`\mu_4/\sigma^4 = 3` unless the fast path gives the whole PMF (then its exact kurtosis);
  for MCMC draws :math:`2\,\mathrm{MCSE}(s)/\sigma` with ArviZ's MCSE of the sd;
* **KS** (discrete laws, needs the PMF): :math:`\sup_k |\hat F(k) - F(k)| \le 1.95/\sqrt N`
  (α ≈ 0.001, conservative for discrete laws);
* **interval mass**: the fraction of draws inside the fast path's interval differs from the
  interval's exact mass :math:`m` by at most :math:`4\sqrt{m(1-m)/N}`.

These tolerances assume draws from a converged sampler. :func:`sampler_tests` tests that
assumption on the whole posterior (Vehtari et al. 2021): the largest rank-normalised split
:math:`\hat R` at most :data:`RHAT_MAX`, the smallest bulk and tail ESS at least :data:`ESS_MIN`,
and no divergent transition; :meth:`~bayeval.evaluation.Evaluation.check` adds them to the
comparison of every MCMC run, so a sampler that has not converged fails the check even where
its draws happen to agree with the fast path. The thresholds hold for every scalar, so a
converged run of a posterior with very many scalars (thousands of latent rows) can cross 1.01 on
one of them by chance: rerun it with more draws before distrusting the fast path.

ArviZ (ESS and MCSE of MCMC draws) is imported when :func:`compare` runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ESS_MIN", "RHAT_MAX", "SAMPLER_TESTS", "TESTS", "Z_TOLERANCE", "compare",
           "sampler_tests"]

TESTS = ("mean", "variance_ratio", "ks", "interval_mass")
SAMPLER_TESTS = ("r_hat", "ess_bulk", "ess_tail", "divergences")
#: thresholds of the sampler's diagnostics (Vehtari et al. 2021)
RHAT_MAX, ESS_MIN = 1.01, 400.0
#: tolerances of the mean, variance and interval-mass tests, in Monte-Carlo standard errors
Z_TOLERANCE = 4.0
_KS = 1.95


def _ess(x: np.ndarray, iid: bool, method: str = "bulk") -> float:
    if iid:
        return float(x.size)
    import arviz as az

    return float(az.ess(x, method=method))


def compare(draws, *, mean: float, sd: float, interval: tuple[float, float] | None = None,
            interval_mass: float | None = None, pmf: tuple[np.ndarray, np.ndarray] | None = None,
            iid: bool = False) -> pd.DataFrame:
    r"""Test draws of one scalar quantity against its fast-path law.

    Parameters
    ----------
    draws : array of shape (chain, draw)
        Draws of the quantity (NaN draws, e.g. an undefined metric, are rejected upstream).
    mean, sd : float
        The fast path's mean and standard deviation.
    interval : (lower, upper), optional
        The fast path's interval; tested with ``interval_mass``.
    interval_mass : float, optional
        The exact probability of ``interval`` under the fast path (its nominal level when the law
        is continuous).
    pmf : (values, probs), optional
        The whole discrete law (sorted support and probabilities): enables the KS test and the
        exact kurtosis in the variance test.
    iid : bool
        True for independent draws (forward sampling); False for MCMC draws, whose effective
        sample size and MCSE come from ArviZ.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``test`` (the tests of the module docstring that apply), with columns
        ``fast``, ``draws``, ``statistic`` (the quantity compared with the tolerance),
        ``tolerance``, ``n_eff`` and ``passed``.

    Raises
    ------
    ValueError
        If ``draws`` is not 2-D.

    Examples
    --------
    Independent draws of a Poisson-binomial count against its exact law:

    >>> from bayeval.poibin import PoissonBinomial
    >>> law = PoissonBinomial([0.1, 0.2, 0.2, 0.7])
    >>> draws = law.rvs((1, 4000), random_state=0)
    >>> out = compare(draws, mean=law.mean(), sd=law.var() ** 0.5, interval=(0, 2),
    ...               interval_mass=float(law.cdf(2)), pmf=(np.arange(5), law.pmf()), iid=True)
    >>> out[["fast", "draws", "tolerance", "passed"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
                     fast  draws  tolerance  passed
    test
    mean            1.200  1.192      0.050    True
    variance_ratio  1.000  0.994      0.089    True
    ks              0.000  0.004      0.031    True
    interval_mass   0.948  0.950      0.014    True

    A fast path whose mean is off by 0.1 fails the mean test:

    >>> bool(compare(draws, mean=1.3, sd=law.var() ** 0.5, iid=True).loc["mean", "passed"])
    False
    """
    import arviz as az

    x = np.asarray(draws, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"draws must have shape (chain, draw), got {x.shape}.")
    flat = x.ravel()
    n = flat.size
    rows = []

    n_eff = _ess(x, iid)
    mcse = sd / np.sqrt(n) if iid else float(az.mcse(x, method="mean"))
    xbar = float(flat.mean())
    rows.append(("mean", mean, xbar, abs(xbar - mean), Z_TOLERANCE * mcse, n_eff))

    if sd > 0:
        if iid:
            kurt = 3.0
            if pmf is not None:
                v, p = np.asarray(pmf[0], float), np.asarray(pmf[1], float)
                kurt = float(np.sum(p * (v - mean) ** 4) / sd**4)
            m = max(n, 4)
            tol = Z_TOLERANCE * np.sqrt(max(kurt - (m - 3) / (m - 1), 0.0) / m)
        else:
            tol = Z_TOLERANCE * 2 * float(az.mcse(x, method="sd")) / sd
        ratio = float(flat.var(ddof=1) / sd**2)
        rows.append(("variance_ratio", 1.0, ratio, abs(ratio - 1.0), tol, n_eff))

    if pmf is not None:
        v, p = np.asarray(pmf[0], float), np.asarray(pmf[1], float)
        cdf = np.cumsum(p)
        cdf_left = cdf - p
        ecdf = np.searchsorted(np.sort(flat), v, side="right") / n
        ecdf_left = np.searchsorted(np.sort(flat), v, side="left") / n
        stat = float(max(np.abs(ecdf - cdf).max(), np.abs(ecdf_left - cdf_left).max()))
        rows.append(("ks", 0.0, stat, stat, _KS / np.sqrt(n_eff), n_eff))

    if interval is not None:
        lo, hi = interval
        inside = ((x >= lo) & (x <= hi)).astype(float)
        mass = interval_mass
        frac = float(inside.mean())
        ne = n_eff if iid or np.ptp(inside) == 0 else _ess(inside, iid, "mean")
        tol = Z_TOLERANCE * np.sqrt(mass * (1 - mass) / ne)
        rows.append(("interval_mass", mass, frac, abs(frac - mass), tol, ne))

    out = pd.DataFrame(rows, columns=["test", "fast", "draws", "statistic", "tolerance", "n_eff"])
    out["passed"] = out["statistic"] <= out["tolerance"]
    return out.set_index("test")


def sampler_tests(posterior, sample_stats=None) -> pd.DataFrame:
    r"""Whether an MCMC run converged: worst :math:`\hat R`, bulk and tail ESS, divergences.

    Parameters
    ----------
    posterior : xarray.Dataset
        The posterior draws (dims ``chain``, ``draw``, ...); every scalar of every variable is
        diagnosed.
    sample_stats : xarray.Dataset, optional
        The sampler's statistics; its ``diverging`` is counted.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``test`` (:data:`SAMPLER_TESTS` that apply: :math:`\hat R` needs two chains),
        with the columns of :func:`compare`: ``fast`` is the threshold, ``draws`` the worst value
        (largest :math:`\hat R`, smallest ESS, number of divergences), ``statistic`` the same
        value, ``tolerance`` the threshold and ``n_eff`` the smallest bulk ESS; ``passed`` says
        whether the value is on the right side of its threshold.

    Examples
    --------
    Two chains stuck in different places (a broken sampler run):

    >>> import xarray as xr
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(2, 500)) + np.array([[0.0], [3.0]])
    >>> out = sampler_tests(xr.Dataset({"theta": (("chain", "draw"), x)}))
    >>> out[["draws", "tolerance", "passed"]].round(2)  # doctest: +NORMALIZE_WHITESPACE
              draws  tolerance  passed
    test
    r_hat      1.75       1.01   False
    ess_bulk   3.08     400.00   False
    ess_tail  20.79     400.00   False
    """
    import arviz as az

    worst = {"r_hat": -np.inf, "ess_bulk": np.inf, "ess_tail": np.inf}
    for da in posterior.data_vars.values():
        if posterior.sizes.get("chain", 1) > 1:
            worst["r_hat"] = max(worst["r_hat"], float(np.nanmax(az.rhat(da).values)))
        for method in ("bulk", "tail"):
            ess = az.ess(da, method=method).values
            worst[f"ess_{method}"] = min(worst[f"ess_{method}"], float(np.nanmin(ess)))
    rows = []
    if np.isfinite(worst["r_hat"]):
        rows.append(("r_hat", RHAT_MAX, worst["r_hat"], worst["r_hat"] <= RHAT_MAX))
    for name in ("ess_bulk", "ess_tail"):
        rows.append((name, ESS_MIN, worst[name], worst[name] >= ESS_MIN))
    if sample_stats is not None and "diverging" in sample_stats:
        n_div = float(sample_stats["diverging"].sum())
        rows.append(("divergences", 0.0, n_div, n_div == 0))
    out = pd.DataFrame([(t, thr, v, v, thr, worst["ess_bulk"], ok) for t, thr, v, ok in rows],
                       columns=["test", "fast", "draws", "statistic", "tolerance", "n_eff",
                                "passed"])
    return out.set_index("test")
