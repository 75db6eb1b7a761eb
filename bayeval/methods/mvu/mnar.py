r"""Missing features not at random: a shift of the Gaussian imputation, with a prior.

Under missingness at random the missing block of a row follows the conditional Gaussian
:math:`x_M \mid x_O \sim N(\hat x_M, \Sigma_{M|O})`. When whether a feature is missing depends on
its own value (a sensor that fails on extreme readings, a test not ordered when it would be
normal), the data cannot tell by how much; a sensitivity parameter :math:`\delta` moves every
missing feature by :math:`\delta` of its conditional standard deviation,

.. math::

    x_M \mid x_O, m, \delta \sim N(\hat x_M + \delta\,\sigma_M,\ \Sigma_{M|O}), \qquad
    \sigma_M = \sqrt{\mathrm{diag}\,\Sigma_{M|O}},

(a pattern-mixture model, Little 1993), with a normal prior :math:`\delta \sim N(\delta_0,
\tau^2)`. Integrated over :math:`\delta` the law is again Gaussian,

.. math::

    x_M \mid x_O, m \sim N(\hat x_M + \delta_0\,\sigma_M,\
    \Sigma_{M|O} + \tau^2 \sigma_M \sigma_M^\top),

so a linear classifier's logits :math:`z = W x + b` stay Gaussian, with mean
:math:`W\hat x + b + \delta_0 W_M \sigma_M` and covariance
:math:`W_M \Sigma_{M|O} W_M^\top + \tau^2 (W_M\sigma_M)(W_M\sigma_M)^\top`, and hard confidence
stays exact. Imputations add :math:`\delta^{(s)} \sigma_M`, one :math:`\delta^{(s)} \sim
N(\delta_0, \tau^2)` per draw shared by the row's missing features. With one missing feature and
residual :math:`r = (x_M - \hat x_M)/\sigma_M`, the selection model
:math:`P(m = 1 \mid x) \propto e^{\delta r}` (exponential tilting) gives exactly this shift:
:math:`\delta > 0` means higher values are more often missing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy

from bayeval.methods.mvu.estimators import GaussianImputer, pushforward
from bayeval.methods.mvu.result import empirical, gaussian_logits
from bayeval.table import Table, table
from bayeval.validation import as_mnar, as_seed

__all__ = ["MNAR_SHIFT", "MNARGaussianImputer", "delta_sensitivity"]

#: prior quantiles of delta at which :func:`delta_sensitivity` reports c_hard by default
SENSITIVITY_QUANTILES = (0.025, 0.25, 0.5, 0.75, 0.975)
MNAR_SHIFT = "every missing feature shifted, in conditional standard deviations,"
"""What ``mnar=``'s delta shifts (for its error message)."""


class MNARGaussianImputer(GaussianImputer):
    r"""Conditional Gaussian imputation shifted by :math:`\delta \sim N(\delta_0, \tau^2)`
    conditional standard deviations (module docstring).

    Parameters
    ----------
    mean : array (d,)
    cov : array (d, d), symmetric positive definite
    mnar : float or (mean, sd)
        :math:`\delta` (fixed) or :math:`(\delta_0, \tau)`, as :func:`~bayeval.validation.as_mnar`.

    Examples
    --------
    Missing :math:`x_1` given :math:`x_2 = 1` in the paper's Gaussian: conditional mean 0.3834,
    sd :math:`\sqrt{0.153}`; half a standard deviation higher, with a prior sd of 0.5:

    >>> imp = MNARGaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]], (0.5, 0.5))
    >>> x_hat, cov = imp.conditional([[np.nan, 1.0]], [[True, False]])
    >>> round(float(x_hat[0, 0]), 4), round(float(cov[0, 0, 0]), 4)  # 0.153 (1 + 0.25)
    (0.579, 0.1912)
    """

    def __init__(self, mean, cov, mnar):
        super().__init__(mean, cov)
        self.delta, self.tau = as_mnar(mnar, MNAR_SHIFT)

    @classmethod
    def shifting(cls, imputer: GaussianImputer, mnar) -> MNARGaussianImputer:
        """The imputer's mean and covariance, shifted by ``mnar``.

        Examples
        --------
        >>> base = GaussianImputer([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
        >>> MNARGaussianImputer.shifting(base, 1.0).delta
        1.0
        """
        return cls(imputer.mean, imputer.cov, mnar)

    def _sd(self, X, mask) -> np.ndarray:
        """Conditional standard deviations (n, d), zero on the observed entries."""
        cov = super().conditional(X, mask)[1]
        return np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1), 0.0))

    def conditional(self, X, mask) -> tuple[np.ndarray, np.ndarray]:
        r"""Means :math:`\hat x + \delta_0 \sigma` and covariances
        :math:`\Sigma_{M|O} + \tau^2 \sigma\sigma^\top` of the missing block (observed entries
        kept, covariance zero outside the block).

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 2.0)
        >>> imp.conditional([[np.nan, 3.0]], [[True, False]])[0].tolist()
        [[2.0, 3.0]]
        """
        x_hat, cov = super().conditional(X, mask)
        sd = np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1), 0.0))
        return (x_hat + self.delta * sd,
                cov + self.tau**2 * sd[..., :, None] * sd[..., None, :])

    def logits(self, X, mask, coef, intercept) -> tuple[np.ndarray, np.ndarray]:
        r"""Law of the logits: mean :math:`W\hat x + b + \delta_0 W\sigma`, covariance
        :math:`W_M \Sigma_{M|O} W_M^\top + \tau^2 (W\sigma)(W\sigma)^\top`.

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]], (0.5, 0.5))
        >>> mean, cov = imp.logits([[np.nan, 1.0]], [[True, False]], [[1.0, 1.0]], [-1.0])
        >>> round(float(mean[0, 0]), 4), round(float(cov[0, 0, 0]), 4)
        (0.579, 0.1912)
        """
        mean, cov = super().logits(X, mask, coef, intercept)
        v = self._sd(X, mask) @ np.atleast_2d(coef).T  # W sigma, (n, r)
        return mean + self.delta * v, cov + self.tau**2 * v[..., :, None] * v[..., None, :]

    def sample(self, X, mask, draws: int, random_seed=None, qmc: bool = False) -> np.ndarray:
        r"""Imputations of the missing-at-random imputer plus :math:`\delta^{(s)}\sigma`, one
        :math:`\delta^{(s)} \sim N(\delta_0, \tau^2)` per draw (drawn after the imputations,
        so :math:`\tau = 0` shifts the same draws).

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], (1.0, 1.0))
        >>> x = imp.sample([[np.nan, 0.0]], [[True, False]], 20000, random_seed=0)
        >>> round(float(x[0, :, 0].mean()), 1), round(float(x[0, :, 0].var()), 1)
        (1.0, 2.0)
        """
        rng = as_seed(random_seed)
        out = super().sample(X, mask, draws, rng, qmc=qmc)
        shift = np.full(out.shape[:-1], self.delta)
        if self.tau > 0:
            shift = shift + self.tau * rng.standard_normal(shift.shape)
        return out + shift[..., None] * self._sd(X, mask)[..., None, :]


def delta_sensitivity(ev, deltas=None, *, draws: int | None = None, random_seed=None) -> Table:
    r"""Hard confidence of every row at fixed MNAR shifts :math:`\delta`.

    Each column is the run's MVU with the missing features shifted by exactly :math:`\delta`
    conditional standard deviations: exact for a linear classifier, otherwise the vote of
    ``draws`` quasi-Monte-Carlo imputations. :math:`\delta = 0` is missingness at random.

    Parameters
    ----------
    ev : MVUEvaluation
        A result of :func:`~bayeval.methods.mvu.api.mvu` with Gaussian imputation and
        ``method="exact"`` or ``"mc"``, from this session (the classifier and the imputer are
        kept with it, not saved).
    deltas : array of float, optional
        The shifts. Default: 0 and, with ``mnar=(mean, sd)``, the 2.5, 25, 50, 75 and 97.5 %
        quantiles of the prior, rounded to 4 decimals (with a fixed ``mnar=delta``: 0 and
        delta).
    draws : int, optional
        Imputations per row of a classifier without closed form (default: the run's).
    random_seed : int or Generator, optional

    Returns
    -------
    Table
        Indexed by ``instance``; columns ``delta`` values of ``c_hard``, and ``attrs["y_hard"]``,
        the decisions at each shift (a DataFrame of the same shape).

    Raises
    ------
    ValueError
        Without the run's classifier and Gaussian imputer, or for non-finite shifts.

    Examples
    --------
    >>> from bayeval.methods.mvu.api import mvu
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> imp = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
    >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])
    >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan]], imputer=imp, mnar=(0.0, 1.0))
    >>> delta_sensitivity(ev, [-1.0, 0.0, 1.0]).round(4)  # doctest: +NORMALIZE_WHITESPACE
    c_hard at fixed MNAR shifts delta (conditional sds; 0: at random)
    delta       -1.0     0.0     1.0
    instance
    0         0.6456  0.7345  0.9481
    1         1.0000  1.0000  1.0000
    """
    planner = getattr(ev, "planner", None)
    if planner is None:
        raise ValueError("delta_sensitivity needs the classifier and the Gaussian imputer of the "
                         "run (not saved with it): rerun mvu() with imputer='gaussian' (or a "
                         "GaussianImputer) and method='exact' or 'mc' in this session.")
    if deltas is None:
        delta, tau = as_mnar(ev.meta.get("mnar"), MNAR_SHIFT)
        q = (np.round(delta + tau * scipy.stats.norm.ppf(SENSITIVITY_QUANTILES), 4) if tau > 0
             else [delta])
        deltas = np.unique(np.concatenate([[0.0], q]))
    deltas = np.atleast_1d(np.asarray(deltas, dtype=float))
    if deltas.ndim != 1 or not deltas.size or not np.isfinite(deltas).all():
        raise ValueError(f"deltas must be finite shifts (a number or a 1-D array), got {deltas}.")
    draws = int(ev.meta["n_draws"]) if draws is None else draws
    rng = as_seed(random_seed)
    x, m = planner.x, planner.mask
    rows = np.flatnonzero(m.any(axis=1))
    c = np.ones((len(x), deltas.size))
    y = np.tile(ev.closed_form["y_hard"].values[:, None], (1, deltas.size))
    for k, d in enumerate(deltas):
        if not rows.size:
            break
        imputer = MNARGaussianImputer(planner.imputer.mean, planner.imputer.cov, d)
        if planner.logit_parts is not None:
            a, b = imputer.logits(x[rows], m[rows], *planner.logit_parts)
            res = gaussian_logits(a, b, weights=planner.weights, draws=draws, random_seed=rng)
        else:
            phi = pushforward(planner.predict, imputer.sample(x[rows], m[rows], draws, rng,
                                                              qmc=True))
            res = empirical(phi, weights=planner.weights)
        c[rows, k] = res["c_hard"]
        y[rows, k] = (res["y_hard"] if planner.classes is None
                      else planner.classes[res["y_hard"]])
    index = ev.closed_form["instance"].to_index()
    columns = pd.Index(deltas, name="delta")
    return table(pd.DataFrame(c, index=index, columns=columns),
                 "c_hard at fixed MNAR shifts delta (conditional sds; 0: at random)",
                 y_hard=pd.DataFrame(y, index=index, columns=columns))
