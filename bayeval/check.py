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

ArviZ (ESS and MCSE of MCMC draws) is imported when :func:`compare` runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["TESTS", "compare"]

TESTS = ("mean", "variance_ratio", "ks", "interval_mass")
_Z = 4.0
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
    rows.append(("mean", mean, xbar, abs(xbar - mean), _Z * mcse, n_eff))

    if sd > 0:
        if iid:
            kurt = 3.0
            if pmf is not None:
                v, p = np.asarray(pmf[0], float), np.asarray(pmf[1], float)
                kurt = float(np.sum(p * (v - mean) ** 4) / sd**4)
            m = max(n, 4)
            tol = _Z * np.sqrt(max(kurt - (m - 3) / (m - 1), 0.0) / m)
        else:
            tol = _Z * 2 * float(az.mcse(x, method="sd")) / sd
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
        tol = _Z * np.sqrt(mass * (1 - mass) / ne)
        rows.append(("interval_mass", mass, frac, abs(frac - mass), tol, ne))

    out = pd.DataFrame(rows, columns=["test", "fast", "draws", "statistic", "tolerance", "n_eff"])
    out["passed"] = out["statistic"] <= out["tolerance"]
    return out.set_index("test")
