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

**Per feature.** A mapping ``{feature: delta or (mean, sd)}`` gives feature :math:`i` its own
shift :math:`\delta_i = \mu_i + \tau_i\varepsilon` in its own conditional standard deviations,
one :math:`\varepsilon \sim N(0, 1)` shared by the features (a feature not named has
:math:`\mu_i = \tau_i = 0`). With :math:`a = \mu \odot \sigma_M` and :math:`b = \tau \odot
\sigma_M`,

.. math::

    x_M \mid x_O, m \sim N(\hat x_M + a,\ \Sigma_{M|O} + b b^\top),

and the logits of a linear classifier are Gaussian with mean :math:`W\hat x + b_0 + W_M a` and
covariance :math:`W_M \Sigma_{M|O} W_M^\top + (W_M b)(W_M b)^\top`: the scalar form is the mapping
that names every feature with the same value.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy

from bayeval.methods.mvu.estimators import GaussianImputer, pushforward
from bayeval.methods.mvu.result import empirical, gaussian_logits
from bayeval.table import Table, table
from bayeval.validation import as_mnar, as_seed

__all__ = ["MNAR_SHIFT", "MNARGaussianImputer", "as_feature_mnar", "delta_sensitivity"]

#: prior quantiles of delta at which :func:`delta_sensitivity` reports c_hard by default
SENSITIVITY_QUANTILES = (0.025, 0.25, 0.5, 0.75, 0.975)
MNAR_SHIFT = "every missing feature shifted, in conditional standard deviations,"
"""What ``mnar=``'s delta shifts (for its error message)."""


def as_feature_mnar(mnar, features) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    r"""The ``mnar`` argument as the prior mean :math:`\mu_i` and sd :math:`\tau_i` of every
    feature's shift, in conditional standard deviations (module docstring).

    Parameters
    ----------
    mnar : float, (mean, sd), mapping or Series
        One shift for every feature (:func:`~bayeval.validation.as_mnar`), or ``{feature: delta
        or (mean, sd)}`` by feature name or position (a Series: by its index); features not
        named are not shifted.
    features : array (d,)
        The feature names (positions when the features have no names).

    Returns
    -------
    mean, sd : numpy.ndarray, shape (d,)
    named : numpy.ndarray of bool, shape (d,), or None
        The features a mapping names (None for one shift of every feature).

    Raises
    ------
    ValueError
        A key that is neither a feature's name nor a position in ``range(d)``, a feature named
        twice, or a value that is not a number or ``(mean, sd)`` with ``sd >= 0``.

    Examples
    --------
    >>> mean, sd, _ = as_feature_mnar({"b": 0.5, 2: (1.0, 0.2)}, ["a", "b", "c"])
    >>> mean.tolist(), sd.tolist()
    ([0.0, 0.5, 1.0], [0.0, 0.0, 0.2])
    """
    names = [f.item() if isinstance(f, np.generic) else f for f in features]
    d = len(names)
    if isinstance(mnar, pd.Series):
        mnar = dict(mnar.items())
    if not isinstance(mnar, Mapping):
        delta, tau = as_mnar(mnar, MNAR_SHIFT)
        return np.full(d, delta), np.full(d, tau), None
    mean, sd, seen = np.zeros(d), np.zeros(d), {}
    for key, value in mnar.items():
        pos = feature_position(key, names, "mnar's keys")
        if pos in seen:
            raise ValueError(f"mnar names feature {names[pos]!r} twice (keys {seen[pos]!r} and "
                             f"{key!r}).")
        seen[pos] = key
        try:
            mean[pos], sd[pos] = as_mnar(value, f"feature {names[pos]!r} shifted, in its "
                                         "conditional standard deviations,")
        except ValueError as err:
            raise ValueError(f"mnar[{key!r}]: {err}") from None
    return mean, sd, np.isin(np.arange(d), list(seen))


def feature_position(key, names: list, what: str) -> int:
    """Position of a feature given by name (first) or by position in ``range(len(names))``.

    Examples
    --------
    >>> feature_position("b", ["a", "b"], "x"), feature_position(0, ["a", "b"], "x")
    (1, 0)
    """
    for pos, name in enumerate(names):
        try:
            if bool(name == key):
                return pos
        except (TypeError, ValueError):
            continue
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)) and (
            0 <= key < len(names)):
        return int(key)
    raise ValueError(f"{what} must name features: a name among {names} or a position 0 to "
                     f"{len(names) - 1}; got {key!r}.")


class MNARGaussianImputer(GaussianImputer):
    r"""Conditional Gaussian imputation shifted by :math:`\delta \sim N(\delta_0, \tau^2)`
    conditional standard deviations, or feature :math:`i` by :math:`\delta_i = \mu_i +
    \tau_i\varepsilon` of its own (module docstring).

    Parameters
    ----------
    mean : array (d,)
    cov : array (d, d), symmetric positive definite
    mnar : float, (mean, sd) or mapping
        :math:`\delta` (fixed) or :math:`(\delta_0, \tau)`, as :func:`~bayeval.validation.as_mnar`,
        or ``{feature: delta or (mean, sd)}`` (:func:`as_feature_mnar`).
    features : array (d,), optional
        The names a mapping may use (default: the positions).

    Attributes
    ----------
    delta, tau : numpy.ndarray, shape (d,)
        :math:`\mu_i` and :math:`\tau_i` of every feature.
    named : numpy.ndarray of bool, shape (d,), or None
        The features a mapping names (None for the scalar form).

    Examples
    --------
    Missing :math:`x_1` given :math:`x_2 = 1` in the paper's Gaussian: conditional mean 0.3834,
    sd :math:`\sqrt{0.153}`; half a standard deviation higher, with a prior sd of 0.5:

    >>> imp = MNARGaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]], (0.5, 0.5))
    >>> x_hat, cov = imp.conditional([[np.nan, 1.0]], [[True, False]])
    >>> round(float(x_hat[0, 0]), 4), round(float(cov[0, 0, 0]), 4)  # 0.153 (1 + 0.25)
    (0.579, 0.1912)
    """

    def __init__(self, mean, cov, mnar, features=None):
        super().__init__(mean, cov)
        names = np.arange(len(self.mean)) if features is None else features
        self.delta, self.tau, self.named = as_feature_mnar(mnar, names)

    @classmethod
    def shifting(cls, imputer: GaussianImputer, mnar, features=None) -> MNARGaussianImputer:
        """The imputer's mean and covariance, shifted by ``mnar``.

        Examples
        --------
        >>> base = GaussianImputer([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
        >>> MNARGaussianImputer.shifting(base, 1.0).delta.tolist()
        [1.0, 1.0]
        >>> MNARGaussianImputer.shifting(base, {"x2": (0.5, 1.0)}, ["x1", "x2"]).tau.tolist()
        [0.0, 1.0]
        """
        return cls(imputer.mean, imputer.cov, mnar, features)

    def _sd(self, X, mask) -> np.ndarray:
        """Conditional standard deviations (n, d), zero on the observed entries."""
        cov = super().conditional(X, mask)[1]
        return np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1), 0.0))

    def conditional(self, X, mask) -> tuple[np.ndarray, np.ndarray]:
        r"""Means :math:`\hat x + a` and covariances :math:`\Sigma_{M|O} + b b^\top`,
        :math:`a = \mu \odot \sigma`, :math:`b = \tau \odot \sigma`, of the missing block
        (observed entries kept, covariance zero outside the block).

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 2.0)
        >>> imp.conditional([[np.nan, 3.0]], [[True, False]])[0].tolist()
        [[2.0, 3.0]]
        """
        x_hat, cov = super().conditional(X, mask)
        sd = np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1), 0.0))
        b = self.tau * sd
        return x_hat + self.delta * sd, cov + b[..., :, None] * b[..., None, :]

    def logits(self, X, mask, coef, intercept) -> tuple[np.ndarray, np.ndarray]:
        r"""Law of the logits: mean :math:`W\hat x + b_0 + W a`, covariance
        :math:`W_M \Sigma_{M|O} W_M^\top + (W b)(W b)^\top` (:math:`a = \mu \odot \sigma`,
        :math:`b = \tau \odot \sigma`).

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]], (0.5, 0.5))
        >>> mean, cov = imp.logits([[np.nan, 1.0]], [[True, False]], [[1.0, 1.0]], [-1.0])
        >>> round(float(mean[0, 0]), 4), round(float(cov[0, 0, 0]), 4)
        (0.579, 0.1912)
        """
        mean, cov = super().logits(X, mask, coef, intercept)
        sd, w = self._sd(X, mask), np.atleast_2d(coef).T
        v = (self.tau * sd) @ w  # W b, (n, r)
        return mean + (self.delta * sd) @ w, cov + v[..., :, None] * v[..., None, :]

    def sample(self, X, mask, draws: int, random_seed=None, qmc: bool = False) -> np.ndarray:
        r"""Imputations of the missing-at-random imputer plus :math:`(\mu +
        \tau\varepsilon^{(s)}) \odot \sigma`, one :math:`\varepsilon^{(s)} \sim N(0, 1)` per
        draw (drawn after the imputations, so :math:`\tau = 0` shifts the same draws).

        Examples
        --------
        >>> imp = MNARGaussianImputer([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], (1.0, 1.0))
        >>> x = imp.sample([[np.nan, 0.0]], [[True, False]], 20000, random_seed=0)
        >>> round(float(x[0, :, 0].mean()), 1), round(float(x[0, :, 0].var()), 1)
        (1.0, 2.0)
        """
        rng = as_seed(random_seed)
        out = super().sample(X, mask, draws, rng, qmc=qmc)
        shift = np.broadcast_to(self.delta, out.shape)
        if (self.tau > 0).any():
            shift = shift + self.tau * rng.standard_normal(out.shape[:-1])[..., None]
        return out + shift * self._sd(X, mask)[..., None, :]


def delta_sensitivity(ev, deltas=None, *, features=None, draws: int | None = None,
                      random_seed=None, classifier=None) -> Table:
    r"""Hard confidence of every row at fixed MNAR shifts :math:`\delta`, jointly or per feature.

    Each column is the run's MVU with the missing features shifted by exactly :math:`\delta`
    conditional standard deviations: exact for a linear classifier, otherwise the vote of
    ``draws`` quasi-Monte-Carlo imputations. :math:`\delta = 0` is missingness at random.
    Per feature, feature :math:`i` alone is shifted (:math:`\delta_i = \delta`, the others at
    random), so that each column shows what that feature's departure from randomness does.

    Parameters
    ----------
    ev : MVUEvaluation
        A result of :func:`~bayeval.methods.mvu.api.mvu` with Gaussian imputation and
        ``method="exact"`` or ``"mc"`` (also read back by :func:`bayeval.load`).
    deltas : array of float, optional
        The shifts. Default: 0 and, under a prior ``(mean, sd)``, its 2.5, 25, 50, 75 and
        97.5 % quantiles, rounded to 4 decimals (with a fixed delta: 0 and delta); per feature,
        those of the feature's own prior.
    features : sequence of feature names or positions, optional
        Report these features one at a time. Default: the features a mapping ``mnar=`` names,
        or all features shifted together after a scalar ``mnar=`` (or none).
    draws : int, optional
        Imputations per row of a classifier without closed form (default: the run's).
    random_seed : int or Generator, optional
    classifier : classifier or callable, optional
        The run's classifier, needed by a result read back from disk unless it is linear (its
        coefficients are saved).

    Returns
    -------
    Table
        Indexed by ``instance``; columns ``delta`` values of ``c_hard`` (per feature: columns
        ``(feature, delta)``), and ``attrs["y_hard"]``, the decisions at each shift (a
        DataFrame of the same shape).

    Raises
    ------
    ValueError
        Without the run's Gaussian imputer (or its non-linear classifier after loading), for
        non-finite shifts or unknown features.

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

    Per feature, from a mapping ``mnar=`` (the second feature's shift moves the second row):

    >>> ev = mvu(clf, [[np.nan, 0.9], [-0.5, np.nan]], imputer=imp, mnar={0: 0.5, 1: -1.0})
    >>> delta_sensitivity(ev).round(4)  # doctest: +NORMALIZE_WHITESPACE
    c_hard at fixed MNAR shifts delta of one feature at a time (conditional sds; 0: at random)
    feature          0                    1
    delta          0.0       0.5       -1.0       0.0
    instance
    0           0.7345    0.8700     0.7345    0.7345
    1           0.9986    0.9986     1.0000    0.9986
    """
    planner = _planner(ev, classifier, "delta_sensitivity")
    names = ev.closed_form["feature"].values.tolist()
    run = planner.imputer
    zero = np.zeros(len(names))  # a missing-at-random run: no shift
    mu, tau, named = (getattr(run, "delta", zero), getattr(run, "tau", zero),
                      getattr(run, "named", None))
    if deltas is not None:
        deltas = np.atleast_1d(np.asarray(deltas, dtype=float))
        if deltas.ndim != 1 or not deltas.size or not np.isfinite(deltas).all():
            raise ValueError(f"deltas must be finite shifts (a number or a 1-D array), got "
                             f"{deltas}.")
    if features is None:
        features = None if named is None else list(np.flatnonzero(named))
    else:
        if isinstance(features, (str, int, np.integer)):
            features = [features]
        features = [feature_position(f, names, "features") for f in features]
    draws = int(ev.meta["n_draws"]) if draws is None else draws
    rng = as_seed(random_seed)
    columns, c, y = [], [], []
    for pos in [None] if features is None else features:
        at = np.asarray(deltas if deltas is not None else _defaults(
            float(mu[0] if pos is None else mu[pos]), float(tau[0] if pos is None else tau[pos])))
        for d in at:
            shift = float(d) if pos is None else {pos: float(d)}
            ck, yk = _at(planner, MNARGaussianImputer(run.mean, run.cov, shift), draws, rng)
            c.append(ck)
            y.append(yk if planner.classes is None else planner.classes[yk])
            columns.append(float(d) if pos is None else (names[pos], float(d)))
    index = ev.closed_form["instance"].to_index()
    cols = (pd.Index(columns, name="delta") if features is None
            else pd.MultiIndex.from_tuples(columns, names=["feature", "delta"]))
    what = "" if features is None else " of one feature at a time"
    return table(pd.DataFrame(np.array(c).T, index=index, columns=cols),
                 f"c_hard at fixed MNAR shifts delta{what} (conditional sds; 0: at random)",
                 y_hard=pd.DataFrame(np.array(y, dtype=object).T, index=index, columns=cols))


def _defaults(delta: float, tau: float) -> np.ndarray:
    """0 and the prior's quantiles (or delta)."""
    q = (np.round(delta + tau * scipy.stats.norm.ppf(SENSITIVITY_QUANTILES), 4) if tau > 0
         else [delta])
    return np.unique(np.concatenate([[0.0], q]))


def _at(planner, imputer, draws: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """c_hard and y_hard (positions) of every row under ``imputer``."""
    x, m = planner.x, planner.mask
    rows = np.flatnonzero(m.any(axis=1))
    c, y = np.ones(len(x)), planner.y.copy()
    if not rows.size:
        return c, y
    if planner.logit_parts is not None:
        a, b = imputer.logits(x[rows], m[rows], *planner.logit_parts)
        res = gaussian_logits(a, b, weights=planner.weights, draws=draws, random_seed=rng)
    else:
        phi = pushforward(planner.predict, imputer.sample(x[rows], m[rows], draws, rng, qmc=True))
        res = empirical(phi, weights=planner.weights)
    c[rows], y[rows] = res["c_hard"], res["y_hard"]
    return c, y


def _planner(ev, classifier, what: str):
    """The run's :class:`~bayeval.methods.mvu.plan.FeaturePlanner` (rebuilt if loaded)."""
    rebuild = getattr(ev, "feature_planner", None)
    planner = None if rebuild is None else rebuild(classifier, what)
    if planner is None or not isinstance(planner.imputer, GaussianImputer):
        raise ValueError(f"{what} needs the classifier and the Gaussian imputer of the "
                         "run: run mvu() with imputer='gaussian' (or a GaussianImputer) and "
                         "method='exact' or 'mc' (without dirichlet=).")
    return planner
