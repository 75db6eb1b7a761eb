r"""MVU estimators: imputation heuristics, the conditional-Gaussian imputer, Dirichlet fits, DMV.

Masks: ``mask[n, i] = True`` means feature *i* of row *n* is missing.

* **Heuristics** (paper §5.1): impute :math:`\hat x`, :math:`\hat\phi = \pi(\hat x)`, then a point
  mass (zero variance), :math:`\alpha = \hat\phi\,(1/s - 1)` (:math:`\mathrm{Var}\,\Phi_j =
  s\,\hat\phi_j(1 - \hat\phi_j)`, "s-max-variance") or :math:`\alpha = c\,\hat\phi`
  ("scale-probability").
* **Conditional Gaussian** (:class:`GaussianImputer`): with precision :math:`\Lambda = \Sigma^{-1}`,
  :math:`x_M \mid x_O \sim N(\mu_M - \Lambda_{MM}^{-1}\Lambda_{MO}(x_O - \mu_O),
  \Lambda_{MM}^{-1})`. Every row is solved at once with
  :math:`A = D_m \Lambda D_m + I - D_m` (:math:`D_m = \mathrm{diag}(m)`), which is
  :math:`\Lambda_{MM}` on the missing block and the identity elsewhere, so one batched solve and
  Cholesky factorisation serve rows with different masks (no loop over mask patterns).
* **Dirichlet fits** of MVU draws :math:`\phi^{(s)}`: moments with a pooled concentration
  :math:`\hat\alpha_0 = \mathrm{median}_j[\hat\mu_j(1 - \hat\mu_j)/\hat v_j] - 1` (per-class
  concentrations are not a Dirichlet for K > 2), and the maximum-likelihood
  :math:`\psi(\alpha_j) - \psi(\alpha_0) = \overline{\log\phi_j}` by Newton's method with the
  diagonal-plus-rank-one Hessian (Minka 2000).
* **DMV** (:class:`DMV`, paper §5.2): a network :math:`\alpha = \exp g_\psi(\tilde x, m)`
  trained on randomly masked copies of complete rows by the Dirichlet negative log-likelihood of
  the clean classifier's probabilities :math:`\pi(x)` (Proposition 1: this minimises the expected
  KL divergence to the true MVU, with no conditional sampling).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy
from scipy import special
from threadpoolctl import threadpool_limits

from bayeval.deprecation import renamed_arguments
from bayeval.sampling import progress
from bayeval.validation import as_seed

# as_classifier, classifier_of, linear_parts, pushforward and conditional_{moments,logits,draws}
# are the engine of bayeval.methods.mvu.api (GaussianImputer's methods are their public face)
__all__ = [
    "DMV",
    "GaussianImputer",
    "LinearClassifier",
    "alpha_max_variance",
    "alpha_scale_probability",
    "dirichlet_mle",
    "dirichlet_moments",
    "mcar_mask",
    "sensor_groups",
]

#: floor of MVU draws in the Dirichlet fits (log 0 = -inf otherwise); the PyMC models censor
#: the fractions within it of a vertex instead (:mod:`bayeval.methods.mvu.models`)
CLIP = 1e-6
CHUNK = 1 << 22
#: independent random shifts of the quasi-Monte-Carlo imputations (their spread is the error)
SHIFTS = 8


# ------------------------------------------------------------------------------- classifiers
class LinearClassifier:
    r"""A fixed linear classifier: :math:`\sigma(w^\top x + b)` (one row of ``coef``) or
    :math:`\mathrm{softmax}(W x + b)`, with scikit-learn's ``predict_proba``.

    :func:`~bayeval.methods.mvu.api.mvu` recognises it (like a fitted ``LogisticRegression``) and
    takes the exact Gaussian-logit path.

    Parameters
    ----------
    coef : array (r, d)
        :math:`W`; one row (r = 1) for a binary sigmoid classifier.
    intercept : array (r,)
        :math:`b`.

    Examples
    --------
    >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])  # the paper's synthetic pi(x)
    >>> clf.predict_proba([[0.5, 0.5]])
    array([[0.5, 0.5]])
    """

    def __init__(self, coef, intercept):
        self.coef_ = np.atleast_2d(np.asarray(coef, dtype=float))
        self.intercept_ = np.atleast_1d(np.asarray(intercept, dtype=float))
        self.n_features_in_ = self.coef_.shape[1]
        self.classes_ = np.arange(max(2, len(self.coef_)))

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (n, K); binary: :math:`(1 - p, p)`.

        Examples
        --------
        >>> LinearClassifier(np.eye(3)[:, :2], np.zeros(3)).predict_proba([[np.log(2), 0.0]])
        array([[0.5 , 0.25, 0.25]])
        """
        z = np.asarray(X, dtype=float) @ self.coef_.T + self.intercept_
        if z.shape[1] == 1:
            p = special.expit(z[:, 0])
            return np.stack([1 - p, p], axis=1)
        return special.softmax(z, axis=1)


def _normalise_proba(p, n: int) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim == 2 and p.shape[1] == 1:
        p = p[:, 0]
    if p.ndim == 1:
        p = np.stack([1 - p, p], axis=1)
    ok = (p.ndim == 2 and len(p) == n and p.shape[1] >= 2 and np.isfinite(p).all()
          and (p >= -1e-12).all() and np.allclose(p.sum(1), 1.0, atol=1e-6))
    if not ok:
        raise ValueError(f"predict_proba must return class probabilities of shape (n, K) with "
                         f"rows summing to 1 (or the positive-class probability, shape (n,)); "
                         f"got an array of shape {p.shape}.")
    return np.clip(p, 0.0, 1.0)


def classifier_of(predict_proba):
    """The fitted estimator behind ``predict_proba``: itself, or the owner of a bound
    ``predict_proba`` method (``clf.predict_proba``)."""
    owner = getattr(predict_proba, "__self__", None)
    if owner is not None and getattr(predict_proba, "__name__", "") == "predict_proba":
        return owner
    return predict_proba


def as_classifier(predict_proba, columns=None) -> Callable[[np.ndarray], np.ndarray]:
    """``X -> (n, K)`` probabilities from a classifier with ``predict_proba`` or a callable.

    A binary output of shape (n,) is read as the probability of class 1: ``(1 - p, p)``. With
    ``columns`` (the classifier's ``feature_names_in_``) the rows are passed as a DataFrame with
    those column names; with a :class:`~bayeval.methods.mvu.copula.FeatureCodec`, as its decoded
    DataFrame (the training columns' dtypes and levels).
    """
    fn = getattr(predict_proba, "predict_proba", None)
    if fn is None and callable(predict_proba) and not hasattr(predict_proba, "fit"):
        fn = predict_proba
    if fn is None or not callable(fn):
        raise ValueError(f"predict_proba must be a fitted classifier with a predict_proba "
                         f"method (scikit-learn style) or a function X -> probabilities; got "
                         f"{type(predict_proba).__name__}, which has no predict_proba.")
    frame = _framer(columns)
    return lambda X: _normalise_proba(fn(frame(X)), len(X))


def _framer(columns):
    """numpy rows -> what the classifier was fitted on (a DataFrame with ``columns``, or the
    decoded DataFrame of a :class:`~bayeval.methods.mvu.copula.FeatureCodec`)."""
    if columns is None:
        return lambda X: X
    if callable(getattr(columns, "decode", None)):
        return columns.decode
    return lambda X: pd.DataFrame(np.asarray(X, dtype=float), columns=columns)


def _affine(transform, d: int, probe: np.ndarray):
    """(A, c) with transform(x) = x A + c, checked on the probe rows; None if not affine."""
    basis = np.vstack([np.zeros(d), np.eye(d)])
    out = np.asarray(transform(basis), dtype=float)
    c, a = out[0], out[1:] - out[0]
    ok = np.allclose(np.asarray(transform(probe), dtype=float), probe @ a + c, atol=1e-8)
    return (a, c) if ok else None


def linear_parts(classifier, probe: np.ndarray, columns=None):
    r"""``(W, b)`` with :math:`\pi(x) = \sigma/\mathrm{softmax}(W x + b)`, or None if not linear.

    Recognises estimators with ``coef_``/``intercept_`` (e.g. ``LogisticRegression``) and
    scikit-learn pipelines of affine transformers ending in one (rows are passed as DataFrames
    with ``columns`` where given). The identity is verified on the ``probe`` rows against
    ``predict_proba`` (to 1e-8), so one-vs-rest or calibrated models fall back to the general
    path.
    """
    classifier = classifier_of(classifier)
    frame = _framer(columns)
    last, transform = classifier, None
    if hasattr(classifier, "steps"):
        last = classifier.steps[-1][1]
        transform = lambda X: classifier[:-1].transform(frame(X))  # noqa: E731
    if not (hasattr(last, "coef_") and hasattr(last, "intercept_")
            and hasattr(classifier, "predict_proba")):
        return None
    w, b = np.atleast_2d(last.coef_).astype(float), np.atleast_1d(last.intercept_).astype(float)
    if transform is not None:
        parts = _affine(transform, probe.shape[1], probe)
        if parts is None:
            return None
        w, b = w @ parts[0].T, b + w @ parts[1]
    if w.shape[1] != probe.shape[1]:
        return None
    expected = LinearClassifier(w, b).predict_proba(probe)
    got = _normalise_proba(classifier.predict_proba(frame(probe)), len(probe))
    return (w, b) if got.shape == expected.shape and np.allclose(got, expected, atol=1e-8) else None


def pushforward(predict: Callable, draws: np.ndarray) -> np.ndarray:
    r"""MVU draws :math:`\phi^{(s)} = \pi(x^{(s)})` of imputed rows (n, S, d) -> (n, S, K)."""
    n, s, d = draws.shape
    step = max(1, CHUNK // (s * d))
    blocks = progress([slice(i, i + step) for i in range(0, n, step)], n,
                      "MVU: classifier on the imputations")
    return np.concatenate([predict(draws[b].reshape(-1, d)).reshape(len(draws[b]), s, -1)
                           for b in blocks])


# ------------------------------------------------------------------------------------ masks
def sensor_groups(shape=(8, 8), grid=(4, 4)) -> np.ndarray:
    """Sensor id of each pixel of a row-major image cut into a grid of equal blocks.

    Parameters
    ----------
    shape : (height, width)
        Image shape.
    grid : (rows, columns)
        Blocks per axis; must divide ``shape``.

    Returns
    -------
    numpy.ndarray of int, shape (height * width,)

    Raises
    ------
    ValueError
        If the grid does not divide the image.

    Examples
    --------
    >>> sensor_groups((4, 4), (2, 2)).reshape(4, 4)
    array([[0, 0, 1, 1],
           [0, 0, 1, 1],
           [2, 2, 3, 3],
           [2, 2, 3, 3]])
    """
    (h, w), (gh, gw) = shape, grid
    if h % gh or w % gw:
        raise ValueError(f"grid {grid} must divide the image shape {shape}.")
    rows, cols = np.divmod(np.arange(h * w), w)
    return (rows // (h // gh)) * gw + cols // (w // gw)


def mcar_mask(n: int, groups, p: float, random_seed=None) -> np.ndarray:
    """Missing-completely-at-random masks: each group (sensor) of each row missing with prob. p.

    Parameters
    ----------
    n : int
        Number of rows.
    groups : array (d,)
        Sensor of each feature (e.g. :func:`sensor_groups`; ``np.arange(d)`` for single features).
    p : float
        Probability that a sensor is missing.
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    numpy.ndarray of bool, shape (n, d)
        True where missing.

    Examples
    --------
    >>> mcar_mask(2, [0, 0, 1], 0.5, random_seed=1).astype(int)
    array([[0, 0, 0],
           [1, 1, 0]])
    """
    groups = np.asarray(groups)
    ids, inverse = np.unique(groups, return_inverse=True)
    drop = as_seed(random_seed).random((n, len(ids))) < p
    return drop[:, inverse]


# ------------------------------------------------------------------------------- heuristics
def alpha_max_variance(phi, s: float = 0.5) -> np.ndarray:
    r""":math:`\alpha = \hat\phi\,(1/s - 1)`: the Dirichlet with :math:`\mathrm{Var}\,\Phi_j =
    s\,\hat\phi_j(1 - \hat\phi_j)` (s-max-variance heuristic), floored at 1e-35 like the paper.

    Parameters
    ----------
    phi : array (..., K)
        Probabilities :math:`\hat\phi = \pi(\hat x)` of the imputed rows.
    s : float in (0, 1)
        Fraction of the largest possible variance.

    Returns
    -------
    numpy.ndarray, shape (..., K)

    Raises
    ------
    ValueError
        If ``s`` is outside (0, 1).

    Examples
    --------
    >>> alpha_max_variance([[0.2, 0.8]], s=0.5)
    array([[0.2, 0.8]])
    """
    if not 0 < s < 1:
        raise ValueError(f"s (the fraction of the maximum variance) must lie in (0, 1), got {s}.")
    return np.maximum(np.asarray(phi, dtype=float) * (1 / s - 1), 1e-35)


def alpha_scale_probability(phi, c: float = 10.0) -> np.ndarray:
    r""":math:`\alpha = c\,\hat\phi` (scale-probability heuristic; :math:`c = 10` is
    :math:`s = 1/11`), floored at 1e-35.

    Parameters
    ----------
    phi : array (..., K)
        Probabilities of the imputed rows.
    c : float > 0
        The concentration :math:`\alpha_0`.

    Returns
    -------
    numpy.ndarray, shape (..., K)

    Raises
    ------
    ValueError
        If ``c`` is not positive.

    Examples
    --------
    >>> alpha_scale_probability([[0.2, 0.8]], c=10.0)
    array([[2., 8.]])
    """
    if not c > 0:
        raise ValueError(f"c (the scale of the probabilities) must be positive, got {c}.")
    return np.maximum(np.asarray(phi, dtype=float) * c, 1e-35)


# ------------------------------------------------------------------------ Gaussian imputer
class GaussianImputer:
    r"""Conditional Gaussian imputation :math:`x_M \mid x_O` under :math:`N(\mu, \Sigma)`.

    Parameters
    ----------
    mean : array (d,)
    cov : array (d, d), symmetric positive definite

    Notes
    -----
    Every row is solved at once with :math:`A = D_m \Lambda D_m + I - D_m` (module docstring),
    so rows with different masks share one batched solve.

    Examples
    --------
    >>> imp = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
    >>> x_hat, cov = imp.conditional([[np.nan, 1.0]], [[True, False]])
    >>> round(float(x_hat[0, 0]), 6), round(float(cov[0, 0, 0]), 6)  # paper's Gaussian
    (0.383406, 0.153)
    """

    def __init__(self, mean, cov):
        self.mean = np.asarray(mean, dtype=float)
        self.cov = np.asarray(cov, dtype=float)
        self.precision = np.linalg.inv(self.cov)

    @classmethod
    def fit(cls, train, ridge: float = 1e-6) -> GaussianImputer:
        r"""Sample mean and covariance of complete rows, plus ``ridge`` times the mean variance
        on the diagonal (keeps constant features, e.g. blank pixels, invertible).

        Parameters
        ----------
        train : array (N, d)
            Complete rows.
        ridge : float
            Relative ridge on the diagonal.

        Returns
        -------
        GaussianImputer

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> train = rng.multivariate_normal([1.0, 2.0], [[1.0, 0.5], [0.5, 2.0]], size=5000)
        >>> imp = GaussianImputer.fit(train)
        >>> imp.mean.round(2), imp.cov.round(2)
        (array([1.01, 2.02]), array([[0.96, 0.49],
               [0.49, 2.05]]))
        """
        x = np.asarray(train, dtype=float)
        cov = np.atleast_2d(np.cov(x, rowvar=False))
        cov += ridge * max(np.trace(cov) / len(cov), 1e-12) * np.eye(len(cov))
        return cls(x.mean(axis=0), cov)

    def _rows(self, n: int):
        return np.broadcast_to(self.mean, (n, len(self.mean))), np.broadcast_to(
            self.precision, (n, *self.precision.shape))

    def conditional(self, X, mask) -> tuple[np.ndarray, np.ndarray]:
        r"""Conditional means (observed entries kept) and covariances (zero outside the missing
        block) of every row.

        .. math:: \hat x_M = \mu_M - \Lambda_{MM}^{-1}\Lambda_{MO}(x_O - \mu_O), \qquad
                  \Sigma_{M|O} = \Lambda_{MM}^{-1}.

        Parameters
        ----------
        X : array (n, d)
            Rows (missing entries are ignored; NaN is fine).
        mask : array (n, d) of bool
            True where missing.

        Returns
        -------
        x_hat : numpy.ndarray, shape (n, d)
        cov : numpy.ndarray, shape (n, d, d)

        Examples
        --------
        Two rows with different masks, solved together:

        >>> imp = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> x_hat, cov = imp.conditional([[np.nan, 1.0], [0.5, np.nan]],
        ...                              [[True, False], [False, True]])
        >>> x_hat.round(4).tolist(), [c.diagonal().round(4).tolist() for c in cov]
        ([[0.3834, 1.0], [0.5, 0.639]], [[0.153, 0.0], [0.0, 0.51]])
        """
        x, m = np.asarray(X, dtype=float), np.asarray(mask, dtype=bool)
        return conditional_moments(x, m, *self._rows(len(x)))

    def logits(self, X, mask, coef, intercept) -> tuple[np.ndarray, np.ndarray]:
        r"""Law of the logits :math:`z = W x + b`: mean :math:`W \hat x + b` and covariance
        :math:`W_M \Sigma_{M|O} W_M^\top`, shapes (n, r) and (n, r, r).

        Parameters
        ----------
        X, mask
            As in :meth:`conditional`.
        coef, intercept : arrays (r, d) and (r,)
            A linear classifier's :math:`W` and :math:`b`.

        Returns
        -------
        mean : numpy.ndarray, shape (n, r)
        cov : numpy.ndarray, shape (n, r, r)

        Examples
        --------
        >>> imp = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> mean, cov = imp.logits([[np.nan, 1.0]], [[True, False]], [[1.0, 1.0]], [-1.0])
        >>> round(float(mean[0, 0]), 6), round(float(cov[0, 0, 0]), 6)  # x1 | x2 = 1
        (0.383406, 0.153)
        """
        x, m = np.asarray(X, dtype=float), np.asarray(mask, dtype=bool)
        return conditional_logits(x, m, *self._rows(len(x)), coef, intercept)

    @renamed_arguments(n_draws="draws")
    def sample(self, X, mask, draws: int, random_seed=None, qmc: bool = False) -> np.ndarray:
        """``draws`` conditional imputations of every row, shape (n, S, d).

        Observed entries are kept; see :func:`conditional_draws`.

        Parameters
        ----------
        X, mask
            As in :meth:`conditional`.
        draws : int
            Imputations per row S.
        random_seed : int or numpy.random.Generator, optional
        qmc : bool
            Randomly shifted Sobol points instead of independent draws: each imputation is
            still a draw of the conditional Gaussian, and averages over them are unbiased with a
            smaller error.

        Returns
        -------
        numpy.ndarray, shape (n, S, d)

        Examples
        --------
        >>> imp = GaussianImputer([0.0, 0.0], [[0.3, 0.383406], [0.383406, 1.0]])
        >>> x = imp.sample([[np.nan, 1.0]], [[True, False]], 20000, random_seed=0)
        >>> round(float(x[0, :, 0].mean()), 2), round(float(x[0, :, 0].var()), 2), x[0, 0, 1]
        (0.39, 0.15, np.float64(1.0))
        """
        x, m = np.asarray(X, dtype=float), np.asarray(mask, dtype=bool)
        return conditional_draws(x, m, *self._rows(len(x)), draws, random_seed, qmc)


def _system(x, m, mean, precision):
    """A = D Lambda D + I - D and the conditional means, for any leading dimensions."""
    mf = m.astype(float)
    a = (mf[..., :, None] * precision * mf[..., None, :]
         + np.eye(m.shape[-1]) * (1 - mf)[..., None, :])
    resid = np.where(m, 0.0, x - mean)
    rhs = -mf * np.einsum("...d,...de->...e", resid, precision)
    return a, np.where(m, mean + np.linalg.solve(a, rhs[..., None])[..., 0], x)


def _blocks(x: np.ndarray, per_element: int) -> list[slice]:
    """Slices of the first axis of x holding about CHUNK numbers of per-element work each."""
    size = int(np.prod(x.shape[1:-1], dtype=int)) * per_element
    step = max(1, CHUNK // max(size, 1))
    return [slice(i, i + step) for i in range(0, len(x), step)]


def conditional_moments(x, m, mean, precision):
    r"""Conditional means (observed entries kept) and covariances (zero outside the missing
    block). Every leading index has its own ``mean`` (..., d) and ``precision`` (..., d, d)
    (broadcast views are fine: the posterior draws of Model A use one per draw)."""
    means, covs = [], []
    for b in _blocks(x, 4 * x.shape[-1] ** 2):
        a, x_hat = _system(x[b], m[b], mean[b], precision[b])
        means.append(x_hat)
        covs.append(np.linalg.inv(a) * (m[b][..., :, None] & m[b][..., None, :]))
    return np.concatenate(means), np.concatenate(covs)


def conditional_logits(x, m, mean, precision, coef, intercept):
    r"""Mean (..., r) and covariance (..., r, r) of the logits :math:`W x + b` given the observed
    entries: :math:`W\hat x + b` and :math:`(D_m W^\top)^\top A^{-1} (D_m W^\top)`."""
    w = np.atleast_2d(coef)
    means, covs = [], []
    for b in _blocks(x, 4 * x.shape[-1] ** 2):
        a, x_hat = _system(x[b], m[b], mean[b], precision[b])
        wm = m[b][..., :, None] * w.T
        covs.append(np.swapaxes(wm, -1, -2) @ np.linalg.solve(a, wm))
        means.append(x_hat @ w.T + intercept)
    return np.concatenate(means), np.concatenate(covs)


def _sobol_normals(m: np.ndarray, draws: int, rng) -> np.ndarray:
    r"""Standard normal points (n, d, draws): :data:`SHIFTS` independent random digital shifts of
    one Sobol net per row, interleaved (draw s is point s // R of shift s % R). A shift XORs
    the points' 32-bit digits with uniform random bits, so every point is uniform and averages
    are unbiased; the spread between the shifts' averages gives their standard error. The first
    net coordinates go to each row's missing features (the others are never used)."""
    n, d = m.shape
    k, r = max(int(m.sum(-1).max()), 1), min(SHIFTS, draws)
    size = -(-draws // r)
    net = scipy.stats.qmc.Sobol(k, scramble=False).random_base2(int(np.ceil(np.log2(size))))
    bits = (net[np.arange(draws) // r] * 2.0**32).astype(np.uint64)  # (draws, k)
    shift = rng.integers(0, 2**32, size=(n, r, k), dtype=np.uint64)[:, np.arange(draws) % r]
    z = special.ndtri(((bits ^ shift).astype(float) + 0.5) / 2.0**32)
    z = np.concatenate([z, np.zeros((n, draws, d - k))], axis=-1)
    rank = np.argsort(np.argsort(~m, axis=-1, kind="stable"), axis=-1)  # missing first
    return np.swapaxes(np.take_along_axis(z, rank[:, None, :], axis=-1), -1, -2)


@renamed_arguments(n_draws="draws")
def conditional_draws(x, m, mean, precision, draws: int, random_seed=None, qmc: bool = False):
    r"""Imputations :math:`x = \hat x + D_m L^{-\top}\varepsilon`, :math:`A = L L^\top`,
    :math:`\varepsilon \sim N(0, I)`, shape (..., S, d). :math:`A` is block diagonal (missing
    block :math:`\Lambda_{MM}`, identity elsewhere), so is :math:`L`, and the missing entries get
    covariance :math:`\Lambda_{MM}^{-1} = \Sigma_{M|O}`. ``qmc=True`` (rows (n, d) only): the
    :math:`\varepsilon` of each row are randomly shifted quasi-Monte-Carlo points
    (:func:`_sobol_normals`), which estimate expectations with a smaller error than
    independent draws."""
    rng = as_seed(random_seed)
    d = x.shape[-1]
    out = []
    for b in progress(_blocks(x, max(4 * d * d, draws * d)), len(x), "MVU: imputation"):
        a, x_hat = _system(x[b], m[b], mean[b], precision[b])
        eps = (_sobol_normals(m[b], draws, rng) if qmc
               else rng.standard_normal((*a.shape[:-1], draws)))
        y = np.linalg.solve(np.swapaxes(np.linalg.cholesky(a), -1, -2), eps)
        out.append(x_hat[..., None, :] + np.swapaxes(y, -1, -2) * m[b][..., None, :])
    return np.concatenate(out)


# --------------------------------------------------------------------------- Dirichlet fits
def _clip_simplex(phi: np.ndarray) -> np.ndarray:
    p = np.clip(phi, CLIP, 1.0)
    return p / p.sum(axis=-1, keepdims=True)


def dirichlet_moments(phi, kappa_min: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    r"""Method of moments with a pooled concentration: ``(mu (n, K), kappa (n,))``.

    :math:`\hat\kappa = \mathrm{median}_j[\hat\mu_j(1-\hat\mu_j)/\hat v_j] - 1` over classes
    whose sample variance (ddof 1) exceeds rounding (1e-13 of its largest possible value), at
    least ``kappa_min``; ``inf`` (a point mass) when no class has one. :math:`\alpha = \hat\kappa
    \hat\mu`.

    Parameters
    ----------
    phi : array (n, S, K)
        MVU draws, S >= 2.
    kappa_min : float
        Floor of :math:`\hat\kappa`.

    Returns
    -------
    mu : numpy.ndarray, shape (n, K)
    kappa : numpy.ndarray, shape (n,)

    Examples
    --------
    >>> mu, kappa = dirichlet_moments([[[0.2, 0.8], [0.4, 0.6], [0.3, 0.7]]])
    >>> mu.round(2).tolist(), kappa.round(2).tolist()  # 0.3 * 0.7 / 0.01 - 1
    ([[0.3, 0.7]], [20.0])
    """
    phi = np.asarray(phi, dtype=float)
    mu, v = phi.mean(axis=-2), phi.var(axis=-2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.where(v > 1e-13 * mu * (1 - mu), mu * (1 - mu) / v - 1, np.nan)
    kappa = np.full(len(mu), np.inf)
    spread = ~np.isnan(per_class).all(axis=-1)
    kappa[spread] = np.maximum(np.nanmedian(per_class[spread], axis=-1), kappa_min)
    return mu, kappa


def _inv_digamma(y: np.ndarray) -> np.ndarray:
    x = np.where(y >= -2.22, np.exp(y) + 0.5, -1 / (y + np.euler_gamma))
    for _ in range(6):
        x -= (special.digamma(x) - y) / special.polygamma(1, x)
    return x


def dirichlet_mle(phi, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    r"""Maximum-likelihood Dirichlet of MVU draws (n, S, K) -> alpha (n, K).

    Newton's method on :math:`\ell(\alpha) = S[\log\Gamma(\alpha_0) - \sum_j\log\Gamma(\alpha_j) +
    \sum_j(\alpha_j - 1)\overline{\log\phi_j}]`, whose Hessian
    :math:`\mathrm{diag}(-S\psi'(\alpha_j)) + S\psi'(\alpha_0)\mathbf 1\mathbf 1^\top` inverts in
    O(K), started from the moments and halved to stay positive. Draws are floored at 1e-6.
    Rows whose floored draws have no spread (all within 1e-6 of one vertex, or a point mass)
    have no maximum: their alpha is NaN.

    Parameters
    ----------
    phi : array (n, S, K)
        MVU draws.
    max_iter : int
        Newton iterations.
    tol : float
        Relative change of :math:`\alpha` at which to stop.

    Returns
    -------
    numpy.ndarray, shape (n, K)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> alpha = dirichlet_mle(rng.dirichlet([2.0, 5.0, 3.0], size=(1, 20000)))
    >>> alpha.round(1)
    array([[2., 5., 3.]])
    """
    phi = _clip_simplex(np.asarray(phi, dtype=float))
    mu, kappa = dirichlet_moments(phi)
    out = np.full(mu.shape, np.nan)
    spread = np.isfinite(kappa)
    if spread.any():
        with np.errstate(all="ignore"):
            out[spread] = _newton_dirichlet(np.log(phi[spread]).mean(axis=-2),
                                            mu[spread] * kappa[spread, None], max_iter, tol)
    out[~(np.isfinite(out) & (out > 0)).all(-1)] = np.nan
    return out


def _newton_dirichlet(mean_log: np.ndarray, alpha: np.ndarray, max_iter: int,
                      tol: float) -> np.ndarray:
    """Newton iterations of :func:`dirichlet_mle` from ``alpha``."""
    for _ in range(max_iter):
        a0 = alpha.sum(-1, keepdims=True)
        g = special.digamma(a0) - special.digamma(alpha) + mean_log
        q = -special.polygamma(1, alpha)
        z = special.polygamma(1, a0)
        b = (g / q).sum(-1, keepdims=True) / (1 / z + (1 / q).sum(-1, keepdims=True))
        step = (g - b) / q
        scale = np.ones_like(a0)
        while ((alpha - scale * step) <= 0).any():
            scale = np.where(((alpha - scale * step) <= 0).any(-1, keepdims=True), scale / 2,
                             scale)
        new = alpha - scale * step
        done = np.abs(new - alpha).max() <= tol * max(1.0, float(np.abs(alpha).max()))
        alpha = new
        if done:
            break
    return alpha


# ---------------------------------------------------------------------------------------- DMV
class DMV:
    r"""Direct Missing Value estimator: :math:`\alpha = \exp g_\psi(\tilde x, m)`.

    :math:`g_\psi(h) = h V + \tanh(h W_1 + b_1) W_2 + b_2` (``hidden=0``: log-linear), with inputs
    :math:`h = [\tilde x, m]`: the standardised features with missing entries set to 0 (the
    training mean) and one missing-indicator per sensor (per feature without ``groups``). Fitted by
    L-BFGS on the mean Dirichlet negative log-likelihood

    .. math:: -\log\Gamma(\alpha_0) + \sum_j \log\Gamma(\alpha_j) - \sum_j (\alpha_j - 1)\log t_j
              + \tfrac{\lambda}{2}\lVert\psi\rVert^2,

    with targets :math:`t = \pi(x)` (floored at 1e-6) on ``n_masks`` MCAR-masked copies of every
    complete training row; copies with nothing missing are dropped (the likelihood is unbounded
    there: a point-mass target).

    Parameters
    ----------
    hidden : int
        Width of the tanh layer (0: log-linear Dirichlet regression).
    l2 : float
        Weight decay :math:`\lambda` (biases are not penalised).
    n_masks : int
        Masked copies per training row.
    p_missing : float
        Probability that a sensor is missing in training masks (the paper: 0.5).
    groups : array (d,), optional
        Sensor of every feature; a sensor is masked as a whole.
    max_iter : int
        L-BFGS iterations.
    random_seed : int or Generator, optional
        Seeds the masks and the initial weights.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> dmv = DMV(hidden=0, random_seed=0).fit(X, LinearClassifier([[2.0, 2.0]], [0.0]))
    >>> dmv.alpha([[5.0, np.nan]]).argmax(-1).tolist()  # x1 large: class 1 whatever x2 is
    [1]
    """

    def __init__(self, *, hidden: int = 16, l2: float = 1e-3, n_masks: int = 4,
                 p_missing: float = 0.5, groups=None, max_iter: int = 300, random_seed=None):
        self.hidden, self.l2, self.n_masks, self.p_missing = hidden, l2, n_masks, p_missing
        self.groups, self.max_iter, self.random_seed = groups, max_iter, random_seed

    def _inputs(self, x: np.ndarray, m: np.ndarray) -> np.ndarray:
        z = np.where(m, 0.0, (np.nan_to_num(x) - self.center_) / self.scale_)
        ind = m[:, self.first_] if self.groups is not None else m
        return np.hstack([z, ind.astype(float)])

    def fit(self, X, predict_proba) -> DMV:
        """Train on complete rows ``X`` (n, d) with the frozen classifier as teacher.

        Parameters
        ----------
        X : array (n, d)
            Complete training rows (no NaN).
        predict_proba : classifier or callable
            As :func:`bayeval.methods.mvu.api.mvu`'s ``predict_proba``.

        Returns
        -------
        DMV
            Itself, with ``params_``, ``n_iter_`` and ``loss_`` (the final penalised NLL).

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or holds NaN.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> dmv = DMV(hidden=0, random_seed=0).fit(X, LinearClassifier([[2.0, 2.0]], [0.0]))
        >>> round(float(dmv.loss_), 2)
        -0.43
        """
        x = np.asarray(X, dtype=float)
        if x.ndim != 2 or not np.isfinite(x).all():
            raise ValueError("X must be complete training rows (2-D, no NaN): DMV learns from "
                             "masked copies of complete rows.")
        groups = np.arange(x.shape[1]) if self.groups is None else np.asarray(self.groups)
        self.first_ = np.unique(groups, return_index=True)[1]
        self.center_, self.scale_ = x.mean(0), np.where(x.std(0) > 0, x.std(0), 1.0)
        rng = as_seed(self.random_seed)
        rep = np.repeat(x, self.n_masks, axis=0)
        m = mcar_mask(len(rep), groups, self.p_missing, rng)
        keep = m.any(axis=1)
        targets = np.log(_clip_simplex(as_classifier(predict_proba)(x)))
        h, t = self._inputs(rep[keep], m[keep]), np.repeat(targets, self.n_masks, axis=0)[keep]
        f, k = h.shape[1], t.shape[1]
        self.shapes_ = [(f, k), (f, self.hidden), (self.hidden,), (self.hidden, k), (k,)]
        init = [np.zeros((f, k)), rng.normal(0, 1 / np.sqrt(f), (f, self.hidden)),
                np.zeros(self.hidden), np.zeros((self.hidden, k)),
                np.log(10 * np.exp(t).mean(0))]
        res = scipy.optimize.minimize(self._loss, np.concatenate([p.ravel() for p in init]),
                                      args=(h, t), jac=True, method="L-BFGS-B",
                                      options={"maxiter": self.max_iter})
        self.params_, self.n_iter_, self.loss_ = self._unpack(res.x), res.nit, res.fun
        return self

    def _unpack(self, theta: np.ndarray) -> list[np.ndarray]:
        sizes = np.cumsum([int(np.prod(s)) for s in self.shapes_])[:-1]
        return [p.reshape(s) for p, s in zip(np.split(theta, sizes), self.shapes_, strict=True)]

    def _forward(self, params, h):
        v, w1, b1, w2, b2 = params
        a1 = np.tanh(h @ w1 + b1)
        return np.clip(h @ v + a1 @ w2 + b2, -30.0, 30.0), a1

    def _loss(self, theta: np.ndarray, h: np.ndarray, log_t: np.ndarray):
        params = self._unpack(theta)
        v, w1, _, w2, _ = params
        log_a, a1 = self._forward(params, h)
        a = np.exp(log_a)
        a0 = a.sum(1, keepdims=True)
        n = len(h)
        nll = (special.gammaln(a).sum() - special.gammaln(a0).sum() - ((a - 1) * log_t).sum()) / n
        reg = self.l2 / 2 * sum(float((p**2).sum()) for p in (v, w1, w2))
        g = a * (special.digamma(a) - special.digamma(a0) - log_t) / n  # d loss / d log alpha
        g_a1 = (g @ w2.T) * (1 - a1**2)
        grads = [h.T @ g + self.l2 * v, h.T @ g_a1 + self.l2 * w1, g_a1.sum(0),
                 a1.T @ g + self.l2 * w2, g.sum(0)]
        return nll + reg, np.concatenate([p.ravel() for p in grads])

    def alpha(self, X, mask=None) -> np.ndarray:
        """Dirichlet parameters (n, K) of rows with NaN (or ``mask``) marking missing features.

        Parameters
        ----------
        X : array (n, d)
        mask : array (n, d) of bool, optional
            True where missing (default: ``isnan(X)``).

        Returns
        -------
        numpy.ndarray, shape (n, K)

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> dmv = DMV(hidden=0, random_seed=0).fit(X, LinearClassifier([[2.0, 2.0]], [0.0]))
        >>> dmv.alpha([[5.0, np.nan], [np.nan, np.nan]]).round(1)  # sure; then a coin flip
        array([[ 0.1, 23.7],
               [ 0.6,  0.5]])
        """
        x = np.asarray(X, dtype=float)
        if mask is None:
            m = np.isnan(x)
        else:
            m, x = np.asarray(mask, dtype=bool), np.nan_to_num(x)
        v, w1, b1, w2, b2 = self.params_
        d, k = x.shape[1], len(b2)
        lin = np.hstack([v, w1])  # both layers' weights; the standardisation folded into them
        with threadpool_limits(1, "blas"):  # narrow products: threads only oversubscribe
            pre = np.where(m, self.center_, x) @ (lin[:d] / self.scale_[:, None])
            pre += m[:, self.first_].astype(float) @ lin[d:]
            pre += np.concatenate([b2, b1]) - (self.center_ / self.scale_) @ lin[:d]
            log_a = pre[:, :k] + np.tanh(pre[:, k:]) @ w2
        return np.exp(np.clip(log_a, -30.0, 30.0, out=log_a), out=log_a)
