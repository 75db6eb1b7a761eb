r"""Mixed data: a Gaussian copula imputer for continuous, integer and categorical features.

Every feature :math:`x_i` is a function of latent standard normals :math:`z`, jointly
:math:`z \sim N(0, R)` with a correlation matrix :math:`R` (Hoff 2007):

* **continuous**: :math:`x_i = F_i^{-1}(\Phi(z_i))` with :math:`F_i` the empirical distribution
  of the training values (the semiparametric copula of Genest, Ghoudi & Rivest 1995; imputed
  values interpolate the training quantiles);
* **ordinal** (integers, booleans, ordered categories, any two-level feature): the level
  :math:`l_k` with :math:`\tau_{k-1} < z_i \le \tau_k`, thresholds
  :math:`\tau_k = \Phi^{-1}(\hat P(x_i \le l_k))` from the training frequencies;
* **nominal** (unordered categories with three or more levels; multinomial probit): one latent
  per level, :math:`x_i = \arg\max_k (\mu_k + z_{ik})` with the levels' latents independent of
  each other (an identity block of :math:`R`) and :math:`\mu` matching the training frequencies,
  :math:`P(\arg\max_k(\mu_k + \varepsilon_k) = k) = \hat p_k`; only the latents' differences
  are identified, so their common direction is uncorrelated with the other latents.

**Fit** (:meth:`CopulaImputer.fit`, complete training rows): the continuous latents are the
normal scores :math:`\Phi^{-1}(\mathrm{rank}/(N+1))`; the discrete ones are data augmentation:
stochastic EM alternates :math:`R \leftarrow` the correlation of the latents (with the nominal
constraints) and one Gibbs sweep drawing every discrete latent from its normal full conditional
truncated to the region its observed level allows; :math:`R` is the average over the second half
of the iterations.

**Imputation** (:meth:`CopulaImputer.sample`): given a row's observed features, the latents of
observed continuous features are known, those of observed discrete features lie in their regions
(a truncated multivariate normal, drawn by Gibbs sweeps from a random feasible start,
independently for every draw: at least ``sweeps``, and as many as the untruncated conditional's
Gauss-Seidel contraction :math:`\rho` needs for :math:`\rho^t \le 0.01`), and the missing
features' latents are drawn exactly from
:math:`N(R_{MO} R_{OO}^{-1} z_O, R_{MM} - R_{MO} R_{OO}^{-1} R_{OM})` and mapped back through the
margins: a draw of the missing features from their conditional law given the observed ones
(exact when only continuous features are observed). The parameters are plug-in estimates
(their uncertainty is not propagated).

:class:`FeatureCodec` turns a DataFrame's columns into the copula's numbers (continuous and
integer values as they are, categories as level positions) and back, so that the classifier sees
the user's columns, levels and dtypes.

References: P. D. Hoff (2007), Extending the rank likelihood for semiparametric copula
estimation, Ann. Appl. Stat. 1(1); C. Genest, K. Ghoudi and L.-P. Rivest (1995), A
semiparametric estimation procedure of dependence parameters in multivariate families of
distributions, Biometrika 82(3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize, special

from bayeval.validation import as_positive_int, as_seed

__all__ = ["KINDS", "CopulaImputer", "FeatureCodec", "level_probabilities", "nominal_locations",
           "truncated_normal"]

KINDS = ("continuous", "ordinal", "nominal")
#: Gauss-Hermite nodes of the nominal level probabilities
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(64)
#: numbers per block of (row, draw, latent) work in sample()
CHUNK = 1 << 21


# ------------------------------------------------------------------------------------ margins
class _Continuous:
    """Empirical margin: F(x) interpolates the mid-ranks / (N + 1), F^-1 the inverse."""

    def __init__(self, values):
        values = np.sort(np.asarray(values, dtype=float))
        self.values, first = np.unique(values, return_index=True)
        counts = np.diff(np.append(first, len(values)))
        self.u = (first + (counts + 1) / 2) / (len(values) + 1)

    def cdf(self, x):
        return np.interp(x, self.values, self.u)

    def ppf(self, u):
        return np.interp(u, self.u, self.values)


class _Levels:
    """Levels (sorted codes) with probabilities; ordinal thresholds or nominal locations."""

    def __init__(self, levels, probs, nominal: bool):
        self.levels, self.probs = np.asarray(levels, dtype=float), np.asarray(probs, dtype=float)
        self.nominal = nominal and len(self.levels) > 2
        if self.nominal:
            self.mu = nominal_locations(self.probs)
        else:
            self.cut = special.ndtri(np.clip(np.cumsum(self.probs)[:-1], 0.0, 1.0))

    @property
    def width(self) -> int:
        return len(self.levels) if self.nominal else 1

    def index(self, codes):
        """Level positions of codes (nearest level for an unseen ordinal value)."""
        pos = np.clip(np.searchsorted(self.levels, codes), 0, len(self.levels) - 1)
        below = np.clip(pos - 1, 0, None)
        nearer = np.abs(self.levels[below] - codes) <= np.abs(self.levels[pos] - codes)
        return np.where(nearer, below, pos)

    def interval(self, pos):
        edges = np.concatenate([[-np.inf], self.cut, [np.inf]])
        return edges[pos], edges[pos + 1]

    def value(self, z):
        """Codes of latents (..., width)."""
        if self.nominal:
            return self.levels[np.argmax(self.mu + z, axis=-1)]
        return self.levels[np.searchsorted(self.cut, z[..., 0])]


def nominal_locations(probs, tol: float = 1e-12) -> np.ndarray:
    r"""Locations :math:`\mu` (mean 0) of a multinomial probit with independent standard normal
    utilities whose level probabilities are ``probs``.

    .. math:: P_k(\mu) = \int \phi(t - \mu_k) \prod_{j \ne k} \Phi(t - \mu_j)\,dt

    by 64-point Gauss-Hermite quadrature (in logs); :math:`\log P_k(\mu) = \log p_k` is solved
    by Powell's hybrid method from :math:`\mu = \log p` (the probabilities sum to 1, so the
    first K - 1 equations with :math:`\mu_K = 0` suffice), then centred.

    Parameters
    ----------
    probs : array (K,)
        Positive probabilities summing to 1.
    tol : float
        Largest :math:`|\log(p_k / P_k(\mu))|` at convergence.

    Returns
    -------
    numpy.ndarray, shape (K,)

    Examples
    --------
    >>> mu = nominal_locations([0.2, 0.3, 0.5])
    >>> level_probabilities(mu).round(6).tolist()
    [0.2, 0.3, 0.5]
    """
    p = np.asarray(probs, dtype=float)
    if len(p) < 2:
        return np.zeros(len(p))
    start = np.log(p[:-1]) - np.log(p[-1])
    res = optimize.root(lambda v: _log_level_probabilities(np.append(v, 0.0))[:-1]
                        - np.log(p[:-1]), start, method="hybr", tol=tol)
    mu = np.append(res.x, 0.0)
    return mu - mu.mean()


def level_probabilities(mu) -> np.ndarray:
    r""":math:`P(\arg\max_k(\mu_k + \varepsilon_k) = k)` for independent standard normal
    :math:`\varepsilon` (see :func:`nominal_locations`).

    Parameters
    ----------
    mu : array (K,)

    Returns
    -------
    numpy.ndarray, shape (K,)

    Examples
    --------
    >>> level_probabilities([0.0, 0.0, 0.0]).round(6).tolist()
    [0.333333, 0.333333, 0.333333]
    """
    return np.exp(_log_level_probabilities(np.asarray(mu, dtype=float)))


def _log_level_probabilities(mu: np.ndarray) -> np.ndarray:
    t = mu[:, None] + np.sqrt(2) * _NODES  # (K, nodes): t - mu_k = sqrt(2) s
    log_cdf = special.log_ndtr(t[:, None, :] - mu[None, :, None])  # (k, j, nodes)
    log_cdf[np.arange(len(mu)), np.arange(len(mu))] = 0.0
    return special.logsumexp(log_cdf.sum(1) + np.log(_WEIGHTS), axis=-1) - np.log(np.pi) / 2


# ------------------------------------------------------------------------ truncated normals
def truncated_normal(mean, sd, lo, hi, rng) -> np.ndarray:
    r"""Draws of :math:`N(\mathrm{mean}, \mathrm{sd}^2)` truncated to :math:`[lo, hi]` by the
    inverse CDF, on the lower tail (mirrored when :math:`lo > \mathrm{mean}`) where
    :math:`\Phi` keeps its precision.

    Parameters
    ----------
    mean, sd, lo, hi : arrays (broadcast together)
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> z = truncated_normal(0.0, 1.0, 1.0, np.inf, np.random.default_rng(0))
    >>> bool(z >= 1.0)
    True
    """
    a, b = (lo - mean) / sd, (hi - mean) / sd
    flip = a > 0
    a, b = np.where(flip, -b, a), np.where(flip, -a, b)
    pa, pb = special.ndtr(a), special.ndtr(b)
    with np.errstate(divide="ignore"):
        t = special.ndtri(pa + rng.random(np.shape(pa)) * (pb - pa))
    t = np.clip(np.where(np.isfinite(t), t, np.where(np.isfinite(a), a, b)), a, b)
    return mean + sd * np.where(flip, -t, t)


# ------------------------------------------------------------------------------- the imputer
class CopulaImputer:
    r"""Gaussian copula imputation of mixed features (module docstring).

    Parameters
    ----------
    corr : array (D, D) or None
        Correlation matrix :math:`R` of the latents: one per continuous or ordinal feature (or
        nominal with two levels) and one per level of a nominal feature, in column order; the
        block of a nominal feature is the identity. None: independent latents.
    margins : list of length d
        Per feature: for ``"continuous"`` a 1-D sample (its empirical distribution) or a frozen
        ``scipy.stats`` distribution (``cdf``/``ppf``); otherwise ``(levels, probabilities)``
        (levels as numbers, sorted).
    kinds : list of str
        ``"continuous"``, ``"ordinal"`` or ``"nominal"`` per feature.
    sweeps : int
        Gibbs sweeps per draw over the latents of a row's observed discrete features, at least
        (more, up to ten times as many, when these latents are strongly correlated).

    Examples
    --------
    A continuous feature and a three-level nominal one, correlated through its first level:

    >>> from scipy import stats
    >>> corr = np.eye(4)
    >>> corr[0, 1:] = corr[1:, 0] = [0.6, -0.3, -0.3]
    >>> imp = CopulaImputer(corr, [stats.norm(), ([0, 1, 2], [0.3, 0.3, 0.4])],
    ...                     ["continuous", "nominal"])
    >>> x = imp.sample([[2.0, np.nan], [-2.0, np.nan]], [[False, True], [False, True]], 4000,
    ...                random_seed=0)
    >>> [int(np.bincount(x[i, :, 1].astype(int), minlength=3).argmax()) for i in range(2)]
    [0, 2]
    """

    def __init__(self, corr, margins, kinds, sweeps: int = 20):
        self.kinds = [str(k) for k in kinds]
        bad = [k for k in self.kinds if k not in KINDS]
        if bad or len(self.kinds) != len(margins):
            raise ValueError(f"kinds must give one of {KINDS} per feature ({len(margins)} "
                             f"margins); got {list(kinds)!r}.")
        self.margins = [_margin(mg, kind) for mg, kind in zip(margins, self.kinds, strict=True)]
        width = [getattr(mg, "width", 1) for mg in self.margins]
        self.slots = np.split(np.arange(sum(width)), np.cumsum(width)[:-1])
        self._varies = np.repeat([len(getattr(mg, "levels", (0, 1))) > 1 for mg in self.margins],
                                 width)
        self.corr = np.eye(sum(width)) if corr is None else np.asarray(corr, dtype=float)
        if self.corr.shape != (sum(width),) * 2 or not np.allclose(self.corr, self.corr.T):
            raise ValueError(f"corr must be a symmetric ({sum(width)}, {sum(width)}) matrix "
                             f"(one latent per feature, one per level of a nominal feature); got "
                             f"shape {self.corr.shape}.")
        self.sweeps = as_positive_int(sweeps, "sweeps")

    @classmethod
    def fit(cls, train, kinds=None, *, iterations: int = 200, sweeps: int = 20,
            random_seed=None) -> CopulaImputer:
        r"""Margins and latent correlation of complete training rows (stochastic EM, module
        docstring).

        Parameters
        ----------
        train : array (N, d) or DataFrame
            Complete rows; ordinal and nominal features as numbers (level codes). A DataFrame
            is coded by :class:`FeatureCodec` (its dtypes give the kinds), as ``mvu`` codes the
            rows it imputes.
        kinds : list of str, optional
            Kind of every feature (default: all ``"continuous"``, or the DataFrame's).
        iterations : int
            Stochastic-EM iterations (one Gibbs sweep each); :math:`R` averages the second half.
        sweeps : int
            Gibbs sweeps per imputation (:class:`CopulaImputer`).
        random_seed : int or numpy.random.Generator, optional

        Returns
        -------
        CopulaImputer

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> z = rng.multivariate_normal([0, 0], [[1, 0.7], [0.7, 1]], size=3000)
        >>> train = np.column_stack([np.exp(z[:, 0]), (z[:, 1] > 0.5).astype(float)])
        >>> imp = CopulaImputer.fit(train, ["continuous", "ordinal"], random_seed=0)
        >>> round(float(imp.corr[0, 1]), 2)  # latent correlation 0.7, seen through a threshold
        0.68
        """
        if isinstance(train, pd.DataFrame):
            codec = FeatureCodec(train)
            train, kinds = codec.encode(train, "train"), codec.kinds if kinds is None else kinds
        x = np.asarray(train, dtype=float)
        if x.ndim != 2 or not np.isfinite(x).all() or len(x) < 2:
            raise ValueError("train must be at least 2 complete rows (2-D, no NaN) to fit the "
                             f"copula; got shape {x.shape}.")
        kinds = ["continuous"] * x.shape[1] if kinds is None else list(kinds)
        margins = [np.sort(col) if kind == "continuous" else np.unique(col, return_counts=True)
                   for col, kind in zip(x.T, kinds, strict=True)]
        margins = [m if kind == "continuous" else (m[0], m[1] / len(x))
                   for m, kind in zip(margins, kinds, strict=True)]
        imp = cls(None, margins, kinds, sweeps)
        rng = as_seed(random_seed)
        z, region = imp._latents(x, np.zeros(x.shape, bool), rng, iid=True)
        free = imp._discrete(np.ones(x.shape[1], bool))
        iterations = as_positive_int(iterations, "iterations", least=2)
        total = np.zeros_like(imp.corr)
        for it in range(iterations):
            imp.corr = imp._constrain(z.T @ z / len(z))
            if it >= iterations // 2:
                total += imp.corr
            imp._sweep(z, np.linalg.inv(imp.corr), free, region, rng)
        imp.corr = imp._constrain(total / (iterations - iterations // 2))
        return imp

    # -------------------------------------------------------------------------- internals
    def _discrete(self, observed: np.ndarray) -> list[tuple[int, int, int]]:
        """(latent, feature, level) of the latents of the observed discrete features."""
        return [(int(j), int(i), k) for i in np.flatnonzero(observed)
                if self.kinds[i] != "continuous" for k, j in enumerate(self.slots[i])]

    def _constrain(self, cov: np.ndarray) -> np.ndarray:
        """A correlation matrix from a latent second-moment matrix: unit diagonal, identity
        nominal blocks whose common direction is uncorrelated with the rest, positive definite
        (off-diagonal shrunk towards 0 if needed); a latent without variance or of a feature
        with one level is independent of the others."""
        sd = np.sqrt(np.diag(cov))
        ok = (sd > 1e-12) & self._varies
        r = np.where(np.outer(ok, ok), cov / np.outer(np.where(ok, sd, 1), np.where(ok, sd, 1)),
                     0.0)
        q = np.eye(len(r))
        for slot in self.slots:
            if len(slot) > 1:
                q[np.ix_(slot, slot)] -= 1 / len(slot)
        r = q @ r @ q.T
        for slot in self.slots:
            r[np.ix_(slot, slot)] = np.eye(len(slot))
        for _ in range(200):
            if np.linalg.eigvalsh(r).min() > 1e-6:
                break
            r = 0.95 * r + 0.05 * np.eye(len(r))
        return r

    def _latents(self, x, m, rng, iid: bool = False):
        """Starting latents (n, D) of rows and the regions of their observed discrete latents:
        ``region[i]`` is ``(lo, hi)`` (ordinal) or the level positions (nominal), per row."""
        n = len(x)
        z = rng.standard_normal((n, len(self.corr))) if iid else np.zeros((n, len(self.corr)))
        region = {}
        for i, (mg, kind) in enumerate(zip(self.margins, self.kinds, strict=True)):
            obs = ~m[:, i]
            j = self.slots[i]
            if kind == "continuous":
                u = np.clip(mg.cdf(np.where(obs, x[:, i], 0.0)), 1e-12, 1 - 1e-12)
                z[obs, j[0]] = special.ndtri(u[obs])
                continue
            codes = np.where(obs, x[:, i], mg.levels[0])
            pos = mg.index(codes)
            if mg.nominal:
                unknown = obs & (mg.levels[pos] != codes)
                if unknown.any():
                    raise ValueError(f"feature {i} is nominal with levels {mg.levels.tolist()}; "
                                     f"X has the unknown level {codes[unknown][0]:g} (row "
                                     f"{int(np.flatnonzero(unknown)[0])}).")
                region[i] = pos
                sub = z[:, j]
                _feasible(sub, pos, obs, mg.mu)
                z[:, j] = sub
            else:
                region[i] = mg.interval(pos)
                z[obs, j[0]] = np.clip(z[obs, j[0]], region[i][0][obs], region[i][1][obs])
        return z, region

    def _sweep(self, z, prec, coords, region, rng) -> None:
        """One Gibbs sweep over the latents ``coords`` (position in z, feature, level) of
        z (..., D') in place, each from its normal full conditional under precision ``prec``
        truncated to its region."""
        for j, i, k in coords:
            sd = 1 / np.sqrt(prec[j, j])
            mean = z[..., j] - (z @ prec[:, j]) * sd**2
            mg = self.margins[i]
            if mg.nominal:
                pos = region[i]
                block = z[..., j - k:j - k + mg.width] + mg.mu
                others = np.delete(block, k, axis=-1).max(-1) - mg.mu[k]
                mine = _take(block, pos) - mg.mu[k]
                top = _expand(pos == k, z)
                lo, hi = np.where(top, others, -np.inf), np.where(top, np.inf, mine)
            else:
                lo, hi = (_expand(b, z) for b in region[i])
            z[..., j] = truncated_normal(mean, sd, lo, hi, rng)

    def _sweeps(self, prec: np.ndarray) -> int:
        r"""Gibbs sweeps for latents of precision ``prec``: at least ``sweeps``, and enough for
        the Gauss-Seidel contraction :math:`\rho` of the untruncated conditional to reach
        :math:`\rho^t \le 0.01` (strongly correlated latents mix slowly), at most 10 times
        ``sweeps``."""
        step = np.linalg.solve(np.tril(prec), -np.triu(prec, 1))
        rho = float(np.abs(np.linalg.eigvals(step)).max())
        need = np.ceil(np.log(0.01) / np.log(rho)) if 0 < rho < 1 else 0
        return int(min(max(self.sweeps, need), 10 * self.sweeps))

    def sample(self, X, mask, draws: int, random_seed=None) -> np.ndarray:
        r"""``draws`` imputations of every row from the conditional law of its missing features
        given its observed ones, shape (n, S, d); observed entries are kept.

        Parameters
        ----------
        X : array (n, d)
            Rows (codes for discrete features; missing entries are ignored, NaN is fine).
        mask : array (n, d) of bool
            True where missing.
        draws : int
            Imputations per row S (independent of each other).
        random_seed : int or numpy.random.Generator, optional

        Returns
        -------
        numpy.ndarray, shape (n, S, d)

        Examples
        --------
        >>> corr = np.array([[1.0, 0.8], [0.8, 1.0]])
        >>> imp = CopulaImputer(corr, [([0, 1, 2], [0.2, 0.5, 0.3]), ([0, 1], [0.5, 0.5])],
        ...                     ["ordinal", "ordinal"])
        >>> x = imp.sample([[np.nan, 1.0]], [[True, False]], 5000, random_seed=0)
        >>> (np.bincount(x[0, :, 0].astype(int), minlength=3) / 5000).round(2).tolist()
        [0.02, 0.45, 0.53]

        The exact law, from the bivariate normal CDF, is (0.020, 0.437, 0.543).
        """
        x, m = np.asarray(X, dtype=float), np.asarray(mask, dtype=bool)
        draws = as_positive_int(draws, "draws")
        rng = as_seed(random_seed)
        out = np.repeat(np.where(m, np.nan, x)[:, None, :], draws, axis=1)
        patterns, inverse = np.unique(m, axis=0, return_inverse=True)
        for p, pattern in enumerate(patterns):
            if not pattern.any():
                continue
            rows = np.flatnonzero(inverse.ravel() == p)
            step = max(1, CHUNK // (draws * len(self.corr)))
            for start in range(0, len(rows), step):
                block = rows[start:start + step]
                out[block] = self._impute(x[block], pattern, draws, rng)
        return out

    def _impute(self, x, pattern, draws: int, rng) -> np.ndarray:
        """Imputations (r, S, d) of rows sharing one mask pattern."""
        observed = np.concatenate([self.slots[i] for i in np.flatnonzero(~pattern)] or [[]])
        observed = observed.astype(int)
        missing = np.concatenate([self.slots[i] for i in np.flatnonzero(pattern)]).astype(int)
        m = np.broadcast_to(pattern, x.shape)
        z0, region = self._latents(x, m, rng)
        r_oo = self.corr[np.ix_(observed, observed)]
        r_mo = self.corr[np.ix_(missing, observed)]
        gain = np.linalg.solve(r_oo, r_mo.T).T if observed.size else r_mo
        cond = self.corr[np.ix_(missing, missing)] - gain @ r_mo.T
        zo = np.repeat(z0[:, None, observed], draws, axis=1)
        local = {int(c): at for at, c in enumerate(observed)}
        discrete = [(local[c], i, k) for c, i, k in self._discrete(~pattern)]
        if discrete:
            prec = np.linalg.inv(r_oo)
            # a random feasible start: the discrete latents drawn given the continuous ones
            disc = [j for j, _, _ in discrete]
            cont = [c for c in range(len(observed)) if c not in disc]
            g = (np.linalg.solve(r_oo[np.ix_(cont, cont)], r_oo[np.ix_(cont, disc)]).T
                 if cont else np.zeros((len(disc), 0)))
            s = r_oo[np.ix_(disc, disc)] - g @ r_oo[np.ix_(cont, disc)]
            eps = rng.standard_normal((*zo.shape[:2], len(disc)))
            zo[..., disc] = zo[..., cont] @ g.T + eps @ _chol(s).T
            for i in np.flatnonzero(~pattern):
                if self.kinds[i] == "continuous":
                    continue
                j = [local[c] for c in self.slots[i]]
                if self.margins[i].nominal:
                    sub = zo[..., j]
                    _feasible(sub, region[i], np.ones(len(x), bool), self.margins[i].mu)
                    zo[..., j] = sub
                else:
                    lo, hi = (_expand(b, zo) for b in region[i])
                    zo[..., j[0]] = np.clip(zo[..., j[0]], lo, hi)
            for _ in range(self._sweeps(prec[np.ix_(disc, disc)])):
                self._sweep(zo, prec, discrete, region, rng)
        eps = rng.standard_normal((*zo.shape[:2], len(missing)))
        zm = zo @ gain.T + eps @ _chol(cond).T
        out = np.repeat(x[:, None, :], draws, axis=1)
        at = 0
        for i in np.flatnonzero(pattern):
            width = len(self.slots[i])
            zi = zm[..., at:at + width]
            at += width
            mg = self.margins[i]
            out[..., i] = (mg.ppf(special.ndtr(zi[..., 0])) if self.kinds[i] == "continuous"
                           else mg.value(zi))
        return out


def _margin(margin, kind: str):
    if kind == "continuous":
        if hasattr(margin, "cdf") and hasattr(margin, "ppf"):
            return margin
        values = np.asarray(margin, dtype=float)
        if values.ndim != 1 or values.size < 1 or not np.isfinite(values).all():
            raise ValueError("a continuous margin must be a 1-D sample of finite values or a "
                             "frozen scipy.stats distribution.")
        return _Continuous(values)
    levels, probs = (np.asarray(v, dtype=float) for v in margin)
    if (levels.shape != probs.shape or levels.ndim != 1 or (np.diff(levels) <= 0).any()
            or (probs <= 0).any() or not np.isclose(probs.sum(), 1.0)):
        raise ValueError(f"an {kind} margin must be (levels, probabilities): sorted distinct "
                         "levels and positive probabilities summing to 1.")
    return _Levels(levels, probs, kind == "nominal")


def _chol(cov: np.ndarray) -> np.ndarray:
    """Cholesky factor of a covariance (eigen-decomposition when singular)."""
    try:
        return np.linalg.cholesky(cov + 1e-12 * np.eye(len(cov)))
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(cov)
        return v * np.sqrt(np.clip(w, 0.0, None))


def _take(block: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """block[..., pos] with one position per row (first axis)."""
    idx = np.reshape(pos, (len(pos),) + (1,) * (block.ndim - 1))
    return np.take_along_axis(block, np.broadcast_to(idx, (*block.shape[:-1], 1)), -1)[..., 0]


def _expand(values, z: np.ndarray) -> np.ndarray:
    """Per-row values (r,) or (r, 1) broadcast against z[..., 0]."""
    v = np.asarray(values)
    return v.reshape((len(v),) + (1,) * (z.ndim - 2)) if v.ndim == 1 else v


def _feasible(block: np.ndarray, pos: np.ndarray, obs: np.ndarray, mu: np.ndarray) -> None:
    """Raise the observed level's latent of rows ``obs`` until it is the largest utility."""
    u = block + mu
    best = u.max(-1)
    mine = _take(u, pos)
    lift = np.where(_expand(obs, block), np.maximum(best - mine, 0.0) + 1e-9, 0.0)
    hot = np.arange(block.shape[-1]) == np.reshape(pos, (len(pos),) + (1,) * (block.ndim - 1))
    block += hot * lift[..., None]


# ---------------------------------------------------------------------------------- the codec
class FeatureCodec:
    r"""A DataFrame's columns as the copula's numbers, and back with their dtypes and levels.

    The kind of a column follows its dtype in the training frame: floats are ``"continuous"``;
    integers, booleans and ordered categoricals ``"ordinal"``; other categoricals, strings and
    objects ``"nominal"``. Continuous and integer values are coded as themselves, booleans as
    0/1, categoricals by their position among the dtype's categories and other levels by their
    position among the sorted training levels.

    Parameters
    ----------
    train : DataFrame
        Complete training rows: they fix every column's kind, dtype and levels.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"age": [30, 41, 52], "smoker": [True, False, True],
    ...                       "blood": pd.Categorical(["A", "B", "O"])})
    >>> codec = FeatureCodec(train)
    >>> codec.kinds
    ['ordinal', 'ordinal', 'nominal']
    >>> codes = codec.encode(pd.DataFrame({"age": [35, None], "smoker": [None, False],
    ...                                    "blood": ["O", None]}), "X")
    >>> codes
    array([[35., nan,  2.],
           [nan,  0., nan]])
    >>> codec.decode([[35.0, 1.0, 2.0]]).dtypes.astype(str).tolist()
    ['int64', 'bool', 'category']
    """

    def __init__(self, train: pd.DataFrame):
        self.names = list(train.columns)
        self.dtypes = list(train.dtypes)
        self.kinds, self.levels = [], []
        for name, dtype in zip(self.names, self.dtypes, strict=True):
            kind, levels = "continuous", None
            if isinstance(dtype, pd.CategoricalDtype):
                kind, levels = ("ordinal" if dtype.ordered else "nominal"), list(dtype.categories)
            elif pd.api.types.is_bool_dtype(dtype):
                kind = "ordinal"
            elif pd.api.types.is_integer_dtype(dtype):
                kind = "ordinal"
            elif not pd.api.types.is_float_dtype(dtype):
                kind, levels = "nominal", _sorted(train[name].dropna().unique().tolist())
            self.kinds.append(kind)
            self.levels.append(levels)

    @staticmethod
    def mixed(frame) -> bool:
        """Whether a frame has a column that is not floating point (the copula's data).

        Examples
        --------
        >>> import pandas as pd
        >>> FeatureCodec.mixed(pd.DataFrame({"a": [1.0], "b": [2]}))
        True
        """
        return isinstance(frame, pd.DataFrame) and not all(
            pd.api.types.is_float_dtype(t) for t in frame.dtypes)

    def encode(self, frame, name: str) -> np.ndarray:
        """Codes (n, d), NaN where a value is missing.

        Parameters
        ----------
        frame : DataFrame or array (n, d)
            Rows with the training columns (in their order).
        name : str
            The argument's name, for error messages.

        Returns
        -------
        numpy.ndarray, shape (n, d)

        Raises
        ------
        ValueError
            On a level that does not occur in the training frame or a non-number in a numeric
            column.

        Examples
        --------
        >>> import pandas as pd
        >>> codec = FeatureCodec(pd.DataFrame({"colour": ["red", "blue"], "x": [0.5, 1.0]}))
        >>> codec.encode(pd.DataFrame({"colour": ["red", None], "x": [2.0, 3.0]}), "X")
        array([[ 1.,  2.],
               [nan,  3.]])
        """
        if not isinstance(frame, pd.DataFrame):
            frame = pd.DataFrame(np.asarray(frame, dtype=object), columns=self.names)
        out = np.empty(frame.shape, dtype=float)
        for i, col in enumerate(self.names):
            values = frame[col]
            missing = values.isna().to_numpy()
            levels = self.levels[i]
            if levels is None:
                try:
                    numbers = pd.to_numeric(values.astype(object).where(~missing, np.nan))
                except (TypeError, ValueError):
                    raise ValueError(f"{name}[{col!r}] must hold numbers (its training column is "
                                     f"{self.dtypes[i]}); got {values.dtype} values such as "
                                     f"{values[~missing].iloc[0]!r}.") from None
                out[:, i] = np.asarray(numbers, dtype=float)
                continue
            codes = pd.Index(levels).get_indexer(values.astype(object)).astype(float)
            unknown = (codes < 0) & ~missing
            if unknown.any():
                raise ValueError(f"{name}[{col!r}] has the level "
                                 f"{values[unknown].iloc[0]!r}, which is not among the training "
                                 f"levels {levels}; the imputer can only condition on levels it "
                                 "was fitted on.")
            out[:, i] = np.where(missing, np.nan, codes)
        return out

    def decode(self, codes) -> pd.DataFrame:
        """Rows of codes (n, d) as a DataFrame with the training columns, dtypes and levels.

        Parameters
        ----------
        codes : array (n, d)
            Complete codes.

        Returns
        -------
        DataFrame

        Examples
        --------
        >>> import pandas as pd
        >>> codec = FeatureCodec(pd.DataFrame({"colour": ["red", "blue"], "n": [1, 2]}))
        >>> codec.decode([[0.0, 2.0], [1.0, 1.0]])
          colour  n
        0   blue  2
        1    red  1
        """
        codes = np.asarray(codes, dtype=float)
        columns = {}
        for i, (col, dtype) in enumerate(zip(self.names, self.dtypes, strict=True)):
            levels, values = self.levels[i], codes[:, i]
            if isinstance(dtype, pd.CategoricalDtype):
                columns[col] = pd.Categorical.from_codes(values.astype(int), dtype=dtype)
            elif levels is not None:
                columns[col] = pd.Series(np.asarray(levels, dtype=object)[values.astype(int)],
                                         dtype=dtype)
            elif pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_integer_dtype(dtype):
                columns[col] = pd.Series(np.rint(values), dtype=dtype)
            else:
                columns[col] = pd.Series(values, dtype=dtype)
        return pd.DataFrame(columns)


def _sorted(values: list) -> list:
    """Levels sorted, or in order of first appearance where they do not sort."""
    try:
        return sorted(values)
    except TypeError:
        return values
