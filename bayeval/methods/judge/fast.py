r"""Frequentist estimators of a rate from a noisy judge plus a few human labels (pure numpy).

Notation: :math:`m` labelled items with the human label :math:`Y` and the
judge's label :math:`\hat Y`, :math:`n` unlabelled items with :math:`\hat Y` only,
:math:`N = m + n`. For a binary judge the labelled items form the 2×2 table :math:`n_{ab}` =
#{Y = a, Ŷ = b}; :math:`T_1` of the :math:`n` unlabelled items are judged positive. Sensitivity
:math:`q_1 = P(\hat Y = 1 \mid Y = 1)`, specificity :math:`q_0 = P(\hat Y = 0 \mid Y = 0)`,
Youden's :math:`\kappa = q_0 + q_1 - 1`.

Every estimator returns an :class:`Estimate` (point estimate and standard error) and works
element-wise on arrays of counts or moments, so that thousands of simulated replicates are
estimated in one call. The estimators trust their inputs: :func:`bayeval.methods.judge.api.judge`
validates them once.

=========================  ====================================================================
estimator                  definition
=========================  ====================================================================
naive                      mean of the judge over the unlabelled items
classical                  mean of the human labels
rogan_gladen               :math:`(\hat p + \hat q_0 - 1)/(\hat q_0 + \hat q_1 - 1)`, paper eq. (6)
rogan_gladen_adjusted      the same after "+2" smoothing of the rates (the paper's code)
ppi                        prediction-powered inference, :math:`\lambda = 1`
ppi_pp                     PPI++ with ppi_py's power-tuned :math:`\hat\lambda`, clipped to [0, 1]
ppi_pp_unclipped           the same :math:`\hat\lambda`, not clipped
eif                        efficient influence function with calibration-cell means, pooled
mle                        joint maximum likelihood of :math:`(\theta, q_0, q_1)`
=========================  ====================================================================
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy
from scipy import special

__all__ = [
    "ESTIMATORS",
    "Counts",
    "Estimate",
    "Moments",
    "by_name",
    "cell_variance",
    "classical",
    "eif_cells",
    "eif_linear",
    "interval",
    "mle",
    "mle_parameters",
    "moments",
    "naive",
    "observed_information",
    "ppi",
    "ppi_pp",
    "ppi_pp_lambda",
    "reported",
    "rogan_gladen",
    "youden",
    "z_value",
]

ESTIMATORS = ("naive", "classical", "rogan_gladen", "rogan_gladen_adjusted", "ppi", "ppi_pp",
              "ppi_pp_unclipped", "eif", "mle")
#: the paper's code clamps the estimate to this before the logit transform
LOGIT_CLAMP = 1e-6


class Estimate(NamedTuple):
    """Point estimate and standard error (arrays of the same shape).

    Attributes
    ----------
    estimate : numpy.ndarray
        The point estimate :math:`\\hat\\theta`.
    se : numpy.ndarray
        Its standard error.

    Examples
    --------
    >>> est = Estimate(estimate=0.2628, se=0.0276)
    >>> [round(float(v), 4) for v in interval(est, z_value(0.95), kind="wald")]
    [0.2087, 0.3169]
    """

    estimate: np.ndarray
    se: np.ndarray


class Counts(NamedTuple):
    r"""Sufficient statistics of a binary judge: the labelled 2×2 table and the unlabelled count.

    ``n11`` = #{Y=1, Ŷ=1}, ``n10`` = #{Y=1, Ŷ=0}, ``n01`` = #{Y=0, Ŷ=1}, ``n00`` = #{Y=0, Ŷ=0}
    among the labelled items; ``t1`` and ``t0`` count the unlabelled items the judge calls 1 and 0.

    Examples
    --------
    200 labelled items (50 positives, 36 of them judged positive; 29 of 150 negatives judged
    positive) and 1800 unlabelled items, 627 judged positive (the running example below):

    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> c.m, c.n
    (200, 1800)
    """

    n11: np.ndarray
    n10: np.ndarray
    n01: np.ndarray
    n00: np.ndarray
    t1: np.ndarray
    t0: np.ndarray

    @classmethod
    def from_labels(cls, y, yhat, yhat_unlabeled) -> Counts:
        """The counts of binary label vectors.

        Parameters
        ----------
        y, yhat : array-like of 0/1, shape (m,)
            Human and judge labels of the labelled items.
        yhat_unlabeled : array-like of 0/1, shape (n,)
            Judge labels of the unlabelled items.

        Returns
        -------
        Counts
            Of Python ints.

        Examples
        --------
        >>> Counts.from_labels([1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [1, 1, 0])
        Counts(n11=1, n10=1, n01=1, n00=2, t1=2, t0=1)
        """
        y, yhat = np.asarray(y, dtype=bool), np.asarray(yhat, dtype=bool)
        t1 = int(np.count_nonzero(yhat_unlabeled))
        return cls(n11=int(np.count_nonzero(y & yhat)), n10=int(np.count_nonzero(y & ~yhat)),
                   n01=int(np.count_nonzero(~y & yhat)), n00=int(np.count_nonzero(~y & ~yhat)),
                   t1=t1, t0=np.size(yhat_unlabeled) - t1)

    @property
    def m(self):
        """Number of labelled items, :math:`n_{11}+n_{10}+n_{01}+n_{00}`.

        Examples
        --------
        >>> Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173).m
        200
        """
        return self.n11 + self.n10 + self.n01 + self.n00

    @property
    def n(self):
        """Number of unlabelled items, :math:`T_1+T_0`.

        Examples
        --------
        >>> Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173).n
        1800
        """
        return self.t1 + self.t0

    def cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labelled count, labelled sum of Y, unlabelled count) per judge label 0, 1: last axis.

        The arguments of :func:`eif_cells` for a binary judge.

        Returns
        -------
        c, s, u : numpy.ndarray
            Shape (..., 2): :math:`c_k` = #{labelled, Ŷ=k}, :math:`s_k` = #{labelled, Y=1, Ŷ=k},
            :math:`u_k` = #{unlabelled, Ŷ=k}.

        Examples
        --------
        >>> Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173).cells()
        (array([135,  65]), array([14, 36]), array([1173,  627]))
        """
        c = np.stack([np.add(self.n10, self.n00), np.add(self.n11, self.n01)], axis=-1)
        s = np.stack([self.n10, self.n11], axis=-1)
        u = np.stack([self.t0, self.t1], axis=-1)
        return c, s, u


class Moments(NamedTuple):
    """First and second moments (``ddof=0``) that the mean-type estimators need.

    ``y_*`` and ``yhat_*`` are over the ``m`` labelled items, ``yhat_u_*`` over the ``n``
    unlabelled ones; ``cov`` is the labelled covariance of Y and Ŷ.

    Examples
    --------
    >>> mo = Moments.from_counts(Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173))
    >>> float(mo.y_mean), float(mo.yhat_mean), round(float(mo.cov), 5)
    (0.25, 0.325, 0.09875)
    """

    m: np.ndarray
    n: np.ndarray
    y_mean: np.ndarray
    yhat_mean: np.ndarray
    yhat_u_mean: np.ndarray
    y_var: np.ndarray
    yhat_var: np.ndarray
    yhat_u_var: np.ndarray
    cov: np.ndarray

    @classmethod
    def from_counts(cls, c: Counts) -> Moments:
        r"""The moments of binary labels from their :class:`Counts`.

        :math:`\bar Y=(n_{11}+n_{10})/m`, :math:`\bar{\hat Y}_L=(n_{11}+n_{01})/m`,
        :math:`\bar{\hat Y}_U=T_1/n`, variances :math:`x(1-x)` of these means and
        :math:`\mathrm{Cov}_L(Y,\hat Y)=n_{11}/m-\bar Y\bar{\hat Y}_L`.

        Parameters
        ----------
        c : Counts

        Returns
        -------
        Moments

        Examples
        --------
        >>> mo = Moments.from_counts(Counts(n11=1, n10=1, n01=1, n00=2, t1=2, t0=1))
        >>> float(mo.y_mean), float(mo.yhat_u_mean), round(float(mo.cov), 4)
        (0.4, 0.6666666666666666, 0.04)
        """
        m, n = c.m, c.n
        y, yh, p = np.add(c.n11, c.n10) / m, np.add(c.n11, c.n01) / m, c.t1 / n
        return cls(m=m, n=n, y_mean=y, yhat_mean=yh, yhat_u_mean=p, y_var=y * (1 - y),
                   yhat_var=yh * (1 - yh), yhat_u_var=p * (1 - p), cov=c.n11 / m - y * yh)

    def pooled_yhat_var(self) -> np.ndarray:
        r"""Variance (``ddof=0``) of the judge over all :math:`N` items.

        .. math:: s_N^2(\hat Y)=\frac{m\,s_L^2+n\,s_U^2
                  +\frac{mn}{N}(\bar{\hat Y}_L-\bar{\hat Y}_U)^2}{N}.

        Examples
        --------
        >>> mo = Moments.from_counts(Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173))
        >>> round(float(mo.pooled_yhat_var()), 6)  # p = (65 + 627) / 2000 = 0.346: p(1 - p)
        0.226284
        """
        m, n = self.m, self.n
        gap = self.yhat_mean - self.yhat_u_mean
        return (m * self.yhat_var + n * self.yhat_u_var + m * n / (m + n) * gap**2) / (m + n)


def moments(y, yhat, yhat_unlabeled) -> Moments:
    """:class:`Moments` of 1-D arrays (any real values).

    Parameters
    ----------
    y, yhat : array-like, shape (m,)
        Human labels and judge outputs of the labelled items.
    yhat_unlabeled : array-like, shape (n,)
        Judge outputs of the unlabelled items.

    Returns
    -------
    Moments

    Examples
    --------
    Judge scores need not be binary:

    >>> mo = moments([1, 0, 1, 0], [0.9, 0.2, 0.6, 0.4], [0.8, 0.1, 0.3])
    >>> float(mo.yhat_mean), round(float(mo.cov), 4), round(float(mo.yhat_u_mean), 4)
    (0.525, 0.1125, 0.4)
    """
    y, yhat, yhat_u = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    return Moments(m=y.size, n=yhat_u.size, y_mean=y.mean(), yhat_mean=yhat.mean(),
                   yhat_u_mean=yhat_u.mean(), y_var=y.var(), yhat_var=yhat.var(),
                   yhat_u_var=yhat_u.var(), cov=np.mean((y - y.mean()) * (yhat - yhat.mean())))


# ------------------------------------------------------------------------------- intervals
def z_value(ci_prob: float) -> float:
    r""":math:`z = \Phi^{-1}((1 + p)/2)`, e.g. 1.6449 for 90 % and 1.96 for 95 % intervals.

    Parameters
    ----------
    ci_prob : float
        Interval level :math:`p`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(z_value(0.95), 4), round(z_value(0.9), 4)
    (1.96, 1.6449)
    """
    return float(scipy.stats.norm.ppf((1 + ci_prob) / 2))


def interval(est: Estimate, z: float, kind: str = "logit") -> tuple[np.ndarray, np.ndarray]:
    r"""Wald or logit-Wald interval of an :class:`Estimate`.

    ``kind="wald"``: :math:`\hat\theta \pm z\,\mathrm{se}` (can leave [0, 1]).
    ``kind="logit"``: :math:`\mathrm{expit}\big(\mathrm{logit}\,\tilde\theta \pm
    z\,\mathrm{se}/(\tilde\theta(1-\tilde\theta))\big)` with :math:`\tilde\theta` the estimate
    clamped to :math:`[10^{-6}, 1 - 10^{-6}]`, as the paper's code does: an
    estimate on or outside the boundary gives an interval close to [0, 1].

    Parameters
    ----------
    est : Estimate
        Estimate and standard error.
    z : float
        Normal quantile (:func:`z_value`).
    kind : {"logit", "wald"}

    Returns
    -------
    lower, upper : numpy.ndarray

    Examples
    --------
    >>> est = Estimate(estimate=0.2628, se=0.0276)
    >>> [round(float(v), 4) for v in interval(est, 1.96)]  # asymmetric, inside (0, 1)
    [0.2124, 0.3203]
    >>> [round(float(v), 4) for v in interval(Estimate(-0.01, 0.02), 1.96, kind="wald")]
    [-0.0492, 0.0292]
    """
    theta, se = np.asarray(est.estimate, float), np.asarray(est.se, float)
    if kind == "wald":
        return theta - z * se, theta + z * se
    t = np.clip(theta, LOGIT_CLAMP, 1 - LOGIT_CLAMP)
    half = z * se / (t * (1 - t))
    return special.expit(special.logit(t) - half), special.expit(special.logit(t) + half)


def reported(est: Estimate, z: float, kind: str = "logit", low: float = 0.0, high: float = 1.0
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The reported estimate and interval of a quantity in ``[low, high]`` (a rate: [0, 1]).

    The :func:`interval` of the estimate rescaled to [0, 1], mapped back. An estimate outside
    the range (PPI, PPI++ and Rogan–Gladen can leave it) is reported as the nearest end (its
    projection, never farther from the truth) and its interval, computed from the raw estimate,
    is clipped to the range: the set of values it covers is unchanged. Every interval contains
    its reported estimate (a logit interval is computed at the estimate clamped to
    :math:`[10^{-6}, 1 - 10^{-6}]`, and extended to the estimate where that clamp moved it).
    Estimates inside the range keep their interval as computed (ppi_py's Wald interval
    included).

    Parameters
    ----------
    est : Estimate
    z : float
        Normal quantile (:func:`z_value`).
    kind : {"logit", "wald"}
    low, high : float
        The range of the quantity, ``low < high``.

    Returns
    -------
    mean, lower, upper : numpy.ndarray

    Examples
    --------
    >>> [round(float(v), 4) for v in reported(Estimate(1.25, 0.2165), 1.96, "wald")]
    [1.0, 0.8257, 1.0]
    >>> [round(float(v), 4) for v in reported(Estimate(0.75, 0.1), 1.96, "logit", 0.5, 1.0)]
    [0.75, 0.5863, 0.9137]
    """
    scale = high - low
    raw = (np.asarray(est.estimate, float) - low) / scale
    lower, upper = interval(Estimate(raw, np.asarray(est.se, float) / scale), z, kind)
    mean = np.clip(raw, 0.0, 1.0)
    outside = (raw < 0) | (raw > 1)
    lower = np.minimum(np.where(outside, np.clip(lower, 0.0, 1.0), lower), mean)
    upper = np.maximum(np.where(outside, np.clip(upper, 0.0, 1.0), upper), mean)
    return tuple(low + scale * v for v in (mean, lower, upper))


# ------------------------------------------------------------------------ mean-type estimators
def naive(mo: Moments) -> Estimate:
    r"""The judge's mean over the unlabelled items, :math:`\hat p = T_1/n`; se
    :math:`\sqrt{\hat p(1-\hat p)/n}`. Biased by :math:`(1-q_0) - \theta(2 - q_0 - q_1)`.

    Parameters
    ----------
    mo : Moments

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> [round(float(v), 4) for v in naive(mo)]  # 627 / 1800
    [0.3483, 0.0112]
    """
    return Estimate(mo.yhat_u_mean, np.sqrt(mo.yhat_u_var / mo.n))


def classical(mo: Moments) -> Estimate:
    r"""The human labels' mean :math:`\bar Y`, se :math:`\sqrt{\bar Y(1-\bar Y)/m}`; ignores
    the judge.

    Parameters
    ----------
    mo : Moments

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> [round(float(v), 4) for v in classical(mo)]  # 50 / 200
    [0.25, 0.0306]
    """
    return Estimate(mo.y_mean, np.sqrt(mo.y_var / mo.m))


def ppi_pp(mo: Moments, lam) -> Estimate:
    r"""PPI++ with a given power-tuning :math:`\lambda` (ppi_py's formulas).

    .. math::
        \hat\theta_\lambda = \bar Y + \lambda(\bar{\hat Y}_U - \bar{\hat Y}_L), \qquad
        \widehat{\mathrm{se}}^2 = \frac{\lambda^2 s^2(\hat Y_U)}{n}
            + \frac{s^2(Y - \lambda\hat Y_L)}{m},

    with variances over :math:`n` (``ddof=0``) as ppi_py computes them. :math:`\lambda = 1` is
    PPI and :math:`\lambda = 0` the classical mean.

    Parameters
    ----------
    mo : Moments
    lam : float or array
        The power-tuning parameter :math:`\lambda`.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> lam = ppi_pp_lambda(mo)
    >>> [round(float(v), 4) for v in ppi_pp(mo, lam)]  # ppi_py's ppi_mean_ci agrees
    [0.2592, 0.0272]
    >>> [round(float(v), 4) for v in ppi_pp(mo, 0.0)] == [round(float(v), 4) for v in classical(mo)]
    True
    """
    # s^2(Y - lam Yhat) >= 0; the expansion can round below 0 (e.g. Y = Yhat)
    resid_var = np.maximum(mo.y_var + lam**2 * mo.yhat_var - 2 * lam * mo.cov, 0.0)
    var = lam**2 * mo.yhat_u_var / mo.n + resid_var / mo.m
    return Estimate(mo.y_mean + lam * (mo.yhat_u_mean - mo.yhat_mean), np.sqrt(var))


def ppi(mo: Moments) -> Estimate:
    r"""Prediction-powered inference, :math:`\hat\theta = \bar{\hat Y}_U - \overline{(\hat Y
    - Y)}_L`: :func:`ppi_pp` at :math:`\lambda = 1`; unbiased, but can be worse than
    :func:`classical` for a weak judge.

    Parameters
    ----------
    mo : Moments

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> [round(float(v), 4) for v in ppi(mo)]  # 0.3483 - (0.325 - 0.25), se above classical's
    [0.2733, 0.0342]
    """
    return ppi_pp(mo, 1.0)


def ppi_pp_lambda(mo: Moments, clip: bool = True) -> np.ndarray:
    r"""ppi_py's power-tuning parameter for the mean (``_calc_lam_glm``):

    .. math::
        \hat\lambda = \frac{\widehat{\mathrm{Cov}}_L(Y, \hat Y)}
            {(1 + m/n)\,\widehat{\mathrm{Var}}_{L \cup U}(\hat Y)},

    the covariance over the :math:`m` labelled items with ``ddof=0``, the variance over all
    :math:`N` judge labels with ``ddof=1``; clipped to [0, 1] when ``clip``.

    Parameters
    ----------
    mo : Moments
    clip : bool
        Clip to [0, 1].

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> round(float(ppi_pp_lambda(mo)), 4)
    0.3926
    """
    n_total = mo.m + mo.n
    pooled = mo.pooled_yhat_var() * n_total / (n_total - 1)
    lam = mo.cov / ((1 + mo.m / mo.n) * pooled)
    return np.clip(lam, 0.0, 1.0) if clip else lam


def eif_linear(mo: Moments) -> Estimate:
    r"""EIF with a linear calibration curve :math:`\hat\mu(\hat y) = a + b\hat y` fitted by least
    squares on the labelled items ("EIF-linear"):

    .. math::
        \hat\theta = \frac1N\sum_{i=1}^N \hat\mu(\hat Y_i) = \bar Y + b\,(\bar{\hat Y}_N
            - \bar{\hat Y}_L), \qquad
        \widehat{\mathrm{se}}^2 = \frac{b^2 s_N^2(\hat Y)}{N}
            + \frac{s^2(Y - \hat\mu(\hat Y))_L}{m},

    the influence-function variance. This is PPI++ with :math:`\lambda = (n/N)\,b`.

    Parameters
    ----------
    mo : Moments

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> [round(float(v), 4) for v in eif_linear(mo)]
    [0.2595, 0.0272]
    """
    b = mo.cov / mo.yhat_var
    n_total = mo.m + mo.n
    shift = mo.n / n_total * (mo.yhat_u_mean - mo.yhat_mean)
    resid_var = np.maximum(mo.y_var - b * mo.cov, 0.0)  # s^2 - cov^2/s_hat^2 >= 0, rounded
    var = b**2 * mo.pooled_yhat_var() / n_total + resid_var / mo.m
    return Estimate(mo.y_mean + b * shift, np.sqrt(var))


# ------------------------------------------------------------------------------------ EIF
def eif_cells(c, s, u) -> Estimate:
    r"""Efficient (post-stratified) estimator with calibration-cell means, pooled over all items.

    Parameters
    ----------
    c, s, u : arrays of shape (..., K)
        Per judge value :math:`k`: labelled count :math:`c_k`, labelled sum of :math:`Y`
        :math:`s_k`, unlabelled count :math:`u_k`.

    Notes
    -----
    With :math:`\hat\mu_k = s_k/c_k` and :math:`\bar p_k = (c_k + u_k)/N`, eq. (15) of the paper
    reduces to

    .. math::
        \hat\theta = \sum_k \bar p_k \hat\mu_k, \qquad
        \widehat{\mathrm{se}}^2 = \frac1N\sum_k \bar p_k(\hat\mu_k - \hat\theta)^2
            + \sum_k \bar p_k^2\,\frac{\hat\mu_k(1-\hat\mu_k)}{c_k},

    the delta-method variance; for a binary judge :math:`\hat\theta = \hat\mu_0 +
    (\hat\mu_1 - \hat\mu_0)\bar p_N` is the joint MLE (:func:`mle`) exactly. A judge value that
    no labelled item has (:math:`c_k = 0`) takes the labelled mean :math:`\bar Y` as its cell
    mean, and the second term is :func:`cell_variance` (the empty cells share that one
    :math:`\bar Y`, so their errors add up).

    Returns
    -------
    Estimate
        Of the leading shape of the cells.

    Examples
    --------
    A binary judge (cells 0 and 1) gives the joint MLE:

    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> [round(float(v), 4) for v in eif_cells(*c.cells())]
    [0.2595, 0.0278]
    >>> round(float(mle(c).estimate), 4)
    0.2595
    """
    c, s, u = (np.asarray(a, dtype=float) for a in (c, s, u))
    m = c.sum(-1, keepdims=True)
    n_total = m + u.sum(-1, keepdims=True)
    y_bar = s.sum(-1, keepdims=True) / m
    seen = c > 0
    mu = np.where(seen, s / np.where(seen, c, 1.0), y_bar)
    p_bar = (c + u) / n_total
    theta = np.sum(p_bar * mu, axis=-1, keepdims=True)
    var = (np.sum(p_bar * (mu - theta) ** 2, axis=-1, keepdims=True) / n_total
           + cell_variance(c, p_bar, mu * (1 - mu), y_bar * (1 - y_bar)))
    return Estimate(theta[..., 0], np.sqrt(var[..., 0]))


def cell_variance(c, p_bar, sigma2, s2_y) -> np.ndarray:
    r"""The labelled cell means' part of the EIF's delta-method variance.

    A cell without labelled items takes the labelled mean :math:`\bar Y`; all such cells
    share it, so their share :math:`P_\varnothing = \sum_{c_k = 0}\bar p_k` counts once:

    .. math:: \sum_{c_k > 0}\bar p_k^2\frac{\sigma_k^2}{c_k}
              + P_\varnothing^2\frac{s^2_Y}{m}
              + 2P_\varnothing\sum_{c_k > 0}\bar p_k\frac{\sigma_k^2}{m},

    the last term the covariance of :math:`\bar Y` with the cell means it pools.

    Parameters
    ----------
    c, p_bar, sigma2 : arrays of shape (..., K)
        Labelled counts, the cells' shares of all items and the within-cell variances of
        :math:`Y`.
    s2_y : array of shape (..., 1)
        The variance of the labelled :math:`Y`.

    Returns
    -------
    numpy.ndarray of shape (..., 1)

    Examples
    --------
    >>> float(cell_variance(np.array([4.0, 0.0]), np.array([0.5, 0.5]), np.array([0.25, 0.0]),
    ...                     np.array([0.25]))[0])  # .25 * .25/4 + .25 * .25/4 + 2 * .25 * .25/4
    0.0625
    """
    seen = c > 0
    m = c.sum(-1, keepdims=True)
    empty = np.sum(np.where(seen, 0.0, p_bar), axis=-1, keepdims=True)
    own = np.where(seen, sigma2 / np.where(seen, c, 1.0), 0.0)
    return (np.sum(p_bar**2 * own, axis=-1, keepdims=True) + empty**2 * s2_y / m
            + 2 * empty * np.sum(np.where(seen, p_bar * sigma2, 0.0), axis=-1, keepdims=True) / m)


# ------------------------------------------------------------------------ binary-judge only
def _rg_rates(c: Counts, adjust: bool, z: float | None):
    """(p, n, q0, m0, q1, m1) of Rogan–Gladen, "+2"-smoothed when ``adjust``."""
    m1, m0, n = np.add(c.n11, c.n10), np.add(c.n01, c.n00), c.n
    if not adjust:
        return c.t1 / n, n, c.n00 / m0, m0, c.n11 / m1, m1
    if z is None:
        raise ValueError("rogan_gladen(adjust=True) needs z, the interval's normal quantile.")
    return ((c.t1 + z**2 / 2) / (n + z**2), n + z**2, (c.n00 + 1) / (m0 + 2), m0 + 2,
            (c.n11 + 1) / (m1 + 2), m1 + 2)


def youden(c: Counts, *, adjust: bool = False, z: float | None = None) -> np.ndarray:
    r"""Labelled-only :math:`\hat\kappa = \hat q_0 + \hat q_1 - 1`, Rogan–Gladen's divisor
    (of the smoothed rates with ``adjust``). Same sign as the MLE's :math:`\kappa`.

    Parameters
    ----------
    c : Counts
    adjust, z
        As in :func:`rogan_gladen`.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> round(float(youden(c)), 4)  # 121/150 + 36/50 - 1
    0.5267
    """
    _, _, q0, _, q1, _ = _rg_rates(c, adjust, z)
    return q0 + q1 - 1


def rogan_gladen(c: Counts, *, adjust: bool = False, z: float | None = None) -> Estimate:
    r"""Rogan–Gladen correction of the naive rate.

    .. math::
        \hat\theta = \frac{\hat p + \hat q_0 - 1}{\hat q_0 + \hat q_1 - 1},\qquad
        \widehat{\mathrm{se}}^2 = \frac{\hat p(1-\hat p)/n
            + (1-\hat\theta)^2\hat q_0(1-\hat q_0)/m_0
            + \hat\theta^2\hat q_1(1-\hat q_1)/m_1}{(\hat q_0 + \hat q_1 - 1)^2},

    with :math:`\hat p = T_1/n` (unlabelled only), :math:`\hat q_1 = n_{11}/m_1`,
    :math:`\hat q_0 = n_{00}/m_0` (labelled only). The textbook estimate can leave [0, 1].
    ``adjust=True`` is the finite-sample variant of the paper's code: :math:`\tilde p =
    (n\hat p + z^2/2)/(n + z^2)`, :math:`\tilde q_j = (m_j\hat q_j + 1)/(m_j + 2)`, the sizes
    increased likewise, and the estimate truncated to [0, 1]; it needs ``z``. Both divide by
    :func:`youden`, which must not be 0.

    Parameters
    ----------
    c : Counts
    adjust : bool
        The smoothed, truncated variant.
    z : float, optional
        Normal quantile of the interval (:func:`z_value`); needed with ``adjust``.

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        With ``adjust`` and no ``z``.

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> [round(float(v), 4) for v in rogan_gladen(c)]  # (0.3483 + 0.8067 - 1) / 0.5267
    [0.2943, 0.0598]
    >>> [round(float(v), 4) for v in rogan_gladen(c, adjust=True, z=1.96)]
    [0.2942, 0.0611]
    """
    p, n, q0, m0, q1, m1 = _rg_rates(c, adjust, z)
    kappa = q0 + q1 - 1
    theta = (p + q0 - 1) / kappa
    if adjust:
        theta = np.clip(theta, 0.0, 1.0)
    var = (p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0
           + theta**2 * q1 * (1 - q1) / m1) / kappa**2
    return Estimate(theta, np.sqrt(var))


def mle_parameters(c: Counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Closed-form joint MLE :math:`(\hat\theta, \hat q_0, \hat q_1)`.

    The likelihood factorises in :math:`(p, \mu_0, \mu_1)`, so :math:`\hat p = \bar p_N =
    (T_1 + c_1)/N`, :math:`\hat\mu_1 = n_{11}/c_1`, :math:`\hat\mu_0 = n_{10}/c_0` and

    .. math::
        \hat\theta = \bar p_N\hat\mu_1 + (1-\bar p_N)\hat\mu_0,\quad
        \hat q_1 = \bar p_N\hat\mu_1/\hat\theta,\quad
        \hat q_0 = (1-\bar p_N)(1-\hat\mu_0)/(1-\hat\theta).

    Needs both judge labels among the labelled items and :math:`0 < \hat\theta < 1`.

    Parameters
    ----------
    c : Counts

    Returns
    -------
    theta, q0, q1 : numpy.ndarray

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> [round(float(v), 4) for v in mle_parameters(c)]
    [0.2595, 0.7915, 0.7386]
    """
    c1, c0 = np.add(c.n11, c.n01), np.add(c.n10, c.n00)
    p_bar = (c.t1 + c1) / (c.m + c.n)
    mu1, mu0 = c.n11 / c1, c.n10 / c0
    theta = p_bar * mu1 + (1 - p_bar) * mu0
    return theta, (1 - p_bar) * (1 - mu0) / (1 - theta), p_bar * mu1 / theta


def observed_information(c: Counts, theta, q0, q1) -> np.ndarray:
    r"""Observed information of :math:`(\theta, q_0, q_1)`, shape (..., 3, 3).

    :math:`-\nabla^2\ell` of :math:`\ell = T_1\log p + T_0\log(1-p) + m_1\log\theta +
    m_0\log(1-\theta) + n_{11}\log q_1 + n_{10}\log(1-q_1) + n_{00}\log q_0 + n_{01}\log(1-q_0)`,
    :math:`p = \theta q_1 + (1-\theta)(1-q_0)`, :math:`\nabla p = (\kappa, -(1-\theta),
    \theta)`, :math:`\partial^2 p/\partial\theta\partial q_j = 1`.

    Parameters
    ----------
    c : Counts
    theta, q0, q1 : array-like
        Where to evaluate it, strictly inside (0, 1).

    Returns
    -------
    numpy.ndarray
        Shape (..., 3, 3), in the order :math:`(\theta, q_0, q_1)`.

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> info = observed_information(c, *mle_parameters(c))
    >>> info.round(1)
    array([[ 3259. , -3151.4,  1079. ],
           [-3151.4,  5236.8, -1533.2],
           [ 1079. , -1533.2,   808. ]])
    >>> round(float(np.sqrt(np.linalg.inv(info)[0, 0])), 4)  # the se of mle()
    0.0278
    """
    theta, q0, q1 = (np.asarray(a, float) for a in (theta, q0, q1))
    p = theta * q1 + (1 - theta) * (1 - q0)
    grad = np.stack([q0 + q1 - 1, -(1 - theta), theta], axis=-1)
    curv = c.t1 / p**2 + c.t0 / (1 - p) ** 2
    slope = c.t1 / p - c.t0 / (1 - p)
    info = curv[..., None, None] * grad[..., :, None] * grad[..., None, :]
    info[..., 0, 0] += np.add(c.n11, c.n10) / theta**2 + np.add(c.n01, c.n00) / (1 - theta) ** 2
    info[..., 1, 1] += c.n00 / q0**2 + c.n01 / (1 - q0) ** 2
    info[..., 2, 2] += c.n11 / q1**2 + c.n10 / (1 - q1) ** 2
    for j in (1, 2):
        info[..., 0, j] -= slope
        info[..., j, 0] -= slope
    return info


def mle(c: Counts) -> Estimate:
    r"""Joint misclassification MLE of :math:`\theta` with its observed-information se.

    The estimate is :func:`mle_parameters`; the standard error is
    :math:`\sqrt{[J^{-1}]_{\theta\theta}}` with :math:`J` the :func:`observed_information`. Where
    a cell of the labelled table is empty the MLE sits on the boundary and :math:`J` is
    undefined; there the se is its limit, the delta-method se of :func:`eif_cells`.

    Parameters
    ----------
    c : Counts

    Returns
    -------
    Estimate

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> [round(float(v), 4) for v in mle(c)]
    [0.2595, 0.0278]
    """
    theta, q0, q1 = mle_parameters(c)
    interior = (np.asarray(c.n11) > 0) & (np.asarray(c.n10) > 0) & (np.asarray(c.n01) > 0) & (
        np.asarray(c.n00) > 0)
    safe = [np.where(interior, v, 0.5) for v in (theta, q0, q1)]  # J is finite there
    info = np.where(interior[..., None, None], observed_information(c, *safe), np.eye(3))
    se_info = np.sqrt(np.linalg.inv(info)[..., 0, 0])
    se = np.where(interior, se_info, eif_cells(*c.cells()).se)
    return Estimate(theta, se)


def by_name(mo: Moments, counts: Counts | None, cells, z: float) -> dict:
    r"""Every estimator as a thunk returning its :class:`Estimate`, keyed by its name.

    ``counts`` (a binary judge) enables Rogan–Gladen and the MLE; ``cells`` (``eif_cells``'s
    arguments) selects the cell EIF, else the linear one. PPI++ uses ppi_py's clipped
    :math:`\lambda\in[0,1]` and ``ppi_pp_unclipped`` the raw one.

    Parameters
    ----------
    mo : Moments
    counts : Counts or None
    cells : (c, s, u) or None
    z : float
        Normal quantile, for ``rogan_gladen_adjusted``.

    Returns
    -------
    dict
        Name (:data:`ESTIMATORS`) to a function of no argument returning an :class:`Estimate`.

    Examples
    --------
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> mo = Moments.from_counts(c)
    >>> thunks = by_name(mo, c, c.cells(), z_value(0.95))
    >>> {name: round(float(f().estimate), 4) for name, f in thunks.items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'naive': 0.3483, 'classical': 0.25, 'ppi': 0.2733, 'ppi_pp': 0.2592,
     'ppi_pp_unclipped': 0.2592, 'eif': 0.2595, 'rogan_gladen': 0.2943,
     'rogan_gladen_adjusted': 0.2942, 'mle': 0.2595}
    """
    lam = ppi_pp_lambda(mo, clip=False)
    return {
        "naive": lambda: naive(mo), "classical": lambda: classical(mo),
        "ppi": lambda: ppi(mo), "ppi_pp": lambda: ppi_pp(mo, np.clip(lam, 0.0, 1.0)),
        "ppi_pp_unclipped": lambda: ppi_pp(mo, lam),
        "eif": lambda: eif_linear(mo) if cells is None else eif_cells(*cells),
        "rogan_gladen": lambda: rogan_gladen(counts),
        "rogan_gladen_adjusted": lambda: rogan_gladen(counts, adjust=True, z=z),
        "mle": lambda: mle(counts),
    }
