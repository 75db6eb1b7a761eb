r"""Estimators of class prevalences from a judge of K categories (pure numpy).

Humans give :math:`Y \in \{1, \dots, K\}` on :math:`m` items, the judge gives :math:`\hat Y` on
those and on :math:`n` others, :math:`N = m + n` (e.g. K = 3: "A wins", "tie", "B wins").
The labelled items form the K×K table :math:`C_{kj}` = #{Y = k, Ŷ = j}; :math:`u_j` of the
unlabelled items are judged :math:`j` (:class:`ClassCounts`). Write :math:`m_k = \sum_j C_{kj}`,
:math:`c_j = \sum_k C_{kj}`, the labelled shares :math:`\bar y_k = m_k/m`,
:math:`\bar{\hat y}_{L,j} = c_j/m` and the unlabelled shares :math:`\hat p_j = u_j/n`.

The estimands are the prevalences :math:`\pi_k = P(Y = k)` and a weighted score
:math:`\theta_w = \sum_k w_k\pi_k` (a win rate counting a tie as half: :math:`w = (1, 1/2, 0)`).
The judge's misclassification matrix is :math:`M_{kj} = P(\hat Y = j \mid Y = k)`, so that
:math:`P(\hat Y = j) = \sum_k \pi_k M_{kj}`, i.e. :math:`p = M^\top\pi`.

Every estimator returns a :class:`ClassEstimate`: the vector of prevalences and its covariance
matrix, from which the weighted score follows as :math:`w^\top\hat\pi` with variance
:math:`w^\top\hat\Sigma w`. All functions work on arrays of tables (leading dimensions), so that
thousands of simulated replicates are estimated in one call.

=================  ===========================================================================
estimator          definition
=================  ===========================================================================
naive              the judge's shares on the unlabelled items, :math:`\hat p`
classical          the human shares :math:`\bar y`
rogan_gladen       :math:`\hat\pi = (\hat M^\top)^{-1}\hat p` (Rogan & Gladen 1978)
ppi                prediction-powered inference on each class indicator
ppi_pp             PPI++ with one power-tuning :math:`\hat\lambda` for all classes, in [0, 1]
ppi_pp_unclipped   the same :math:`\hat\lambda`, not clipped
eif                post-stratification on the judge's label, pooled over all items
mle                joint maximum likelihood of :math:`(\pi, M)` by EM (Dawid & Skene 1979)
bayes              the exact posterior of the conjugate Dirichlet model (:func:`posterior_draws`)
=================  ===========================================================================

References
----------
Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), Prediction-powered inference, Science 382.
Angelopoulos, Duchi, Zrnic (2023), PPI++: efficient prediction-powered inference, arXiv:2311.01453.
Rogan, Gladen (1978), Estimating prevalence from the results of a screening test, Am. J.
Epidemiol. 107. Dawid, Skene (1979), Maximum likelihood estimation of observer error-rates using
the EM algorithm, J. R. Stat. Soc. C 28.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "CLASS_ESTIMATORS",
    "MAX_CONDITION",
    "ClassCounts",
    "ClassEstimate",
    "by_name",
    "classical",
    "condition_number",
    "eif",
    "misclassification",
    "mle",
    "mle_em",
    "naive",
    "posterior_draws",
    "posterior_moments",
    "ppi_pp",
    "ppi_pp_lambda",
    "rogan_gladen",
]

CLASS_ESTIMATORS = ("naive", "classical", "rogan_gladen", "ppi", "ppi_pp", "ppi_pp_unclipped",
                    "eif", "mle", "bayes")
#: Rogan–Gladen is refused above this 2-norm condition number of :math:`\hat M` (for two classes
#: with :math:`q_0 = q_1` it is :math:`1/\kappa`: 100 is a Youden index of 0.01)
MAX_CONDITION = 100.0
#: EM stops when no parameter moves by more than this, or after :data:`EM_MAX_ITER` steps
EM_TOL, EM_MAX_ITER = 1e-12, 100_000


class ClassCounts(NamedTuple):
    r"""Sufficient statistics of a judge of K categories.

    Attributes
    ----------
    table : numpy.ndarray, shape (..., K, K)
        Labelled items: ``table[k, j]`` = #{Y = k, Ŷ = j} (rows the human label).
    unlabelled : numpy.ndarray, shape (..., K)
        Unlabelled items the judge labels ``j``.

    Examples
    --------
    >>> c = ClassCounts.from_codes([0, 0, 1, 2], [0, 1, 1, 2], [2, 2, 0], 3)
    >>> c.table.tolist(), c.unlabelled.tolist(), int(c.m), int(c.n)
    ([[1, 1, 0], [0, 1, 0], [0, 0, 1]], [1, 0, 2], 4, 3)
    """

    table: np.ndarray
    unlabelled: np.ndarray

    @classmethod
    def from_codes(cls, y, yhat, yhat_unlabeled, n_classes: int) -> ClassCounts:
        """The counts of class codes 0..K-1.

        Examples
        --------
        >>> ClassCounts.from_codes([1, 0], [1, 1], [0], 2).table.tolist()
        [[0, 1], [0, 1]]
        """
        y, yhat = np.asarray(y, dtype=np.int64), np.asarray(yhat, dtype=np.int64)
        table = np.bincount(y * n_classes + yhat, minlength=n_classes**2)
        return cls(table.reshape(n_classes, n_classes),
                   np.bincount(np.asarray(yhat_unlabeled, dtype=np.int64), minlength=n_classes))

    @property
    def m(self) -> np.ndarray:
        """Labelled items.

        Examples
        --------
        >>> int(ClassCounts(np.ones((2, 2)), np.ones(2)).m)
        4
        """
        return self.table.sum(axis=(-2, -1))

    @property
    def n(self) -> np.ndarray:
        """Unlabelled items.

        Examples
        --------
        >>> int(ClassCounts(np.ones((2, 2)), np.ones(2)).n)
        2
        """
        return self.unlabelled.sum(axis=-1)


class ClassEstimate(NamedTuple):
    r"""Estimated prevalences and their covariance.

    Attributes
    ----------
    estimate : numpy.ndarray, shape (..., K)
        :math:`\hat\pi`.
    cov : numpy.ndarray, shape (..., K, K)
        Its estimated covariance :math:`\hat\Sigma`.

    Examples
    --------
    >>> e = ClassEstimate(np.array([0.5, 0.3, 0.2]), np.diag([0.01, 0.004, 0.004]))
    >>> [round(float(v), 4) for v in e.weighted([1, 0.5, 0])]  # 0.5 + 0.15, sqrt(0.01 + 0.001)
    [0.65, 0.1049]
    """

    estimate: np.ndarray
    cov: np.ndarray

    def se(self) -> np.ndarray:
        """Standard errors of the prevalences, :math:`\\sqrt{\\hat\\Sigma_{kk}}`.

        Examples
        --------
        >>> ClassEstimate(np.array([0.5, 0.5]), np.diag([0.04, 0.01])).se().tolist()
        [0.2, 0.1]
        """
        return np.sqrt(np.maximum(np.diagonal(self.cov, axis1=-2, axis2=-1), 0.0))

    def weighted(self, w) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(w^\top\hat\pi, \sqrt{w^\top\hat\Sigma w})`.

        Examples
        --------
        >>> e = ClassEstimate(np.array([0.6, 0.4]), np.array([[0.01, -0.01], [-0.01, 0.01]]))
        >>> [round(float(v), 4) for v in e.weighted([1, 0])]
        [0.6, 0.1]
        """
        w = np.asarray(w, dtype=float)
        var = np.einsum("k,...kl,l->...", w, self.cov, w)
        return self.estimate @ w, np.sqrt(np.maximum(var, 0.0))


def _shares_cov(p, size) -> np.ndarray:
    r"""Multinomial covariance of shares, :math:`(\mathrm{diag}\,p - pp^\top)/\mathrm{size}`."""
    return (_diag(p) - p[..., :, None] * p[..., None, :]) / np.asarray(size, float)[..., None, None]


def _diag(p) -> np.ndarray:
    return p[..., :, None] * np.eye(p.shape[-1])


def _shares(c: ClassCounts):
    """(human shares, judge shares on the labelled items, judge shares on the unlabelled)."""
    table = np.asarray(c.table, dtype=float)
    m, n = table.sum(axis=(-2, -1)), np.asarray(c.unlabelled, float).sum(axis=-1)
    return (table.sum(axis=-1) / m[..., None], table.sum(axis=-2) / m[..., None],
            np.asarray(c.unlabelled, float) / n[..., None])


def naive(c: ClassCounts) -> ClassEstimate:
    r"""The judge's shares on the unlabelled items, :math:`\hat p_j = u_j/n`, covariance
    :math:`(\mathrm{diag}\,\hat p - \hat p\hat p^\top)/n`; biased by :math:`M^\top\pi - \pi`.

    Examples
    --------
    >>> naive(ClassCounts(np.eye(3) * 10, np.array([50, 30, 20]))).estimate.tolist()
    [0.5, 0.3, 0.2]
    """
    p = _shares(c)[2]
    return ClassEstimate(p, _shares_cov(p, c.n))


def classical(c: ClassCounts) -> ClassEstimate:
    r"""The human shares :math:`\bar y_k = m_k/m`, covariance
    :math:`(\mathrm{diag}\,\bar y - \bar y\bar y^\top)/m`; ignores the judge.

    Examples
    --------
    >>> classical(ClassCounts(np.array([[6, 2], [0, 2]]), np.array([5, 5]))).estimate.tolist()
    [0.8, 0.2]
    """
    y = _shares(c)[0]
    return ClassEstimate(y, _shares_cov(y, c.m))


def ppi_pp_lambda(c: ClassCounts, clip: bool = True) -> np.ndarray:
    r"""One power-tuning parameter for all class indicators (ppi_py's ``lam_optim_mode=
    "overall"``, which minimises the sum of the variances):

    .. math::
        \hat\lambda = \frac{\sum_k \widehat{\mathrm{Cov}}_L(Y_k, \hat Y_k)}
            {(1 + m/n)\sum_k \widehat{\mathrm{Var}}_{L\cup U}(\hat Y_k)},

    :math:`Y_k = 1\{Y = k\}`, the covariance over the labelled items (``ddof=0``), the variances
    over all :math:`N` judge labels (``ddof=1``); clipped to [0, 1] when ``clip``. For two classes
    it is the binary judge's :math:`\hat\lambda`.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> round(float(ppi_pp_lambda(c)), 4)
    0.4849
    """
    y, yl, _ = _shares(c)
    table = np.asarray(c.table, float)
    m, n = c.m, c.n
    cov = np.diagonal(table, axis1=-2, axis2=-1).sum(-1) / m - np.sum(y * yl, axis=-1)
    n_total = m + n
    pooled = (table.sum(axis=-2) + c.unlabelled) / n_total[..., None]
    var = np.sum(pooled * (1 - pooled), axis=-1) * n_total / (n_total - 1)
    lam = cov / ((1 + m / n) * var)
    return np.clip(lam, 0.0, 1.0) if clip else lam


def ppi_pp(c: ClassCounts, lam) -> ClassEstimate:
    r"""PPI++ on the class indicators with the tuning :math:`\lambda` (PPI at :math:`\lambda = 1`,
    the classical shares at 0):

    .. math::
        \hat\pi = \bar y + \lambda(\hat p - \bar{\hat y}_L),\qquad
        \hat\Sigma = \frac{\lambda^2 S_U(\hat Y)}{n} + \frac{S_L(Y - \lambda\hat Y)}{m},

    :math:`S` the covariance matrices (``ddof=0``) of the indicator vectors over the unlabelled
    and the labelled items: the binary formulas per class, and their covariance across classes.
    The prevalences sum to 1.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> ppi_pp(c, 1.0).estimate.round(4).tolist()  # 0.5 + 0.45 - 0.48, 0.3 + 0.32 - 0.34, ...
    [0.47, 0.28, 0.25]
    """
    y, yl, p = _shares(c)
    table = np.asarray(c.table, float)
    lam = np.asarray(lam, float)[..., None, None]
    joint = table / c.m[..., None, None]  # E_L[Y_k Yhat_l]
    cross = joint - y[..., :, None] * yl[..., None, :]
    resid = (_shares_cov(y, 1) + lam**2 * _shares_cov(yl, 1)
             - lam * (cross + np.swapaxes(cross, -1, -2)))
    cov = lam**2 * _shares_cov(p, c.n) + resid / c.m[..., None, None]
    return ClassEstimate(y + lam[..., 0] * (p - yl), cov)


def _cell_means(c: ClassCounts):
    r""":math:`\hat\mu_{kj} = C_{kj}/c_j` (the human shares where :math:`c_j = 0`), the sizes
    (:math:`c_j`, or :math:`m`) and the pooled judge shares :math:`\bar\rho_j = (c_j + u_j)/N`."""
    table = np.asarray(c.table, float)
    col = table.sum(axis=-2)
    m = c.m[..., None]
    seen = col > 0
    y = table.sum(axis=-1) / m
    mu = np.where(seen[..., None, :], table / np.where(seen, col, 1.0)[..., None, :],
                  y[..., :, None])
    rho = (col + c.unlabelled) / (m + c.n[..., None])
    return mu, np.where(seen, col, m), rho


def eif(c: ClassCounts) -> ClassEstimate:
    r"""Efficient (post-stratified) estimator: :math:`\hat\pi_k = \sum_j \bar\rho_j\hat\mu_{kj}`,
    :math:`\hat\mu_{kj} = C_{kj}/c_j` the human shares among labelled items the judge labels
    :math:`j`, :math:`\bar\rho_j = (c_j + u_j)/N` the judge's shares over all items. Its
    delta-method covariance:

    .. math::
        \hat\Sigma = \frac1N\sum_j\bar\rho_j(\hat\mu_{\cdot j} - \hat\pi)
            (\hat\mu_{\cdot j} - \hat\pi)^\top + \sum_j\frac{\bar\rho_j^2}{c_j}
            (\mathrm{diag}\,\hat\mu_{\cdot j} - \hat\mu_{\cdot j}\hat\mu_{\cdot j}^\top).

    Each class is the binary cell-mean EIF estimator on its indicator; a judge label no labelled
    item has takes the human shares, with size :math:`m`.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> eif(c).estimate.round(4).tolist()
    [0.478, 0.296, 0.226]
    """
    mu, size, rho = _cell_means(c)
    pi = np.einsum("...kj,...j->...k", mu, rho)
    dev = mu - pi[..., :, None]
    n_total = (c.m + c.n)[..., None, None]
    between = np.einsum("...j,...kj,...lj->...kl", rho, dev, dev) / n_total
    w = rho**2 / size
    within = (_diag(np.einsum("...j,...kj->...k", w, mu))
              - np.einsum("...j,...kj,...lj->...kl", w, mu, mu))
    return ClassEstimate(pi, between + within)


def misclassification(c: ClassCounts) -> np.ndarray:
    r"""The labelled-only misclassification matrix :math:`\hat M_{kj} = C_{kj}/m_k` (NaN rows
    for a class no labelled item has).

    Examples
    --------
    >>> misclassification(ClassCounts(np.array([[8, 2], [1, 9]]), np.zeros(2))).tolist()
    [[0.8, 0.2], [0.1, 0.9]]
    """
    table = np.asarray(c.table, float)
    rows = table.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return table / rows


def condition_number(c: ClassCounts) -> np.ndarray:
    r"""2-norm condition number of :math:`\hat M` (:func:`misclassification`); infinite when a
    class has no labelled item or :math:`\hat M` is singular.

    Examples
    --------
    >>> round(float(condition_number(ClassCounts(np.array([[8, 2], [1, 9]]), np.zeros(2)))), 3)
    1.456
    """
    mm = misclassification(c)
    finite = np.isfinite(mm).all(axis=(-2, -1))
    return np.where(finite, np.linalg.cond(np.where(finite[..., None, None], mm, 1.0)), np.inf)


def rogan_gladen(c: ClassCounts) -> ClassEstimate:
    r"""Rogan–Gladen by matrix inversion: :math:`\hat\pi = (\hat M^\top)^{-1}\hat p`, with
    :math:`\hat M` from the labelled items (:func:`misclassification`) and :math:`\hat p` the
    judge's shares on the unlabelled items. Delta method, rows of :math:`\hat M` independent
    multinomials: with :math:`A = (\hat M^\top)^{-1}`,

    .. math::
        \hat\Sigma = A\Big[\frac{\mathrm{diag}\,\hat p - \hat p\hat p^\top}{n}
            + \sum_k\hat\pi_k^2\,\frac{\mathrm{diag}\,\hat M_{k\cdot}
            - \hat M_{k\cdot}\hat M_{k\cdot}^\top}{m_k}\Big]A^\top.

    For two classes it is the binary :math:`(\hat p + \hat q_0 - 1)/(\hat q_0 + \hat q_1 - 1)`.
    The prevalences sum to 1 (the rows of :math:`\hat M` do) but can leave [0, 1]. The caller
    refuses an ill-conditioned :math:`\hat M` (:func:`condition_number`).

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> rogan_gladen(c).estimate.round(4).tolist()
    [0.4667, 0.2328, 0.3005]
    """
    mm = misclassification(c)
    p = _shares(c)[2]
    a = np.linalg.inv(np.swapaxes(mm, -1, -2))
    pi = np.einsum("...kj,...j->...k", a, p)
    rows = np.asarray(c.table, float).sum(axis=-1)
    inner = _shares_cov(p, c.n) + np.einsum(
        "...k,...kij->...ij", pi**2, _shares_cov(mm, rows))
    return ClassEstimate(pi, a @ inner @ np.swapaxes(a, -1, -2))


def mle_em(c: ClassCounts, tol: float = EM_TOL, max_iter: int = EM_MAX_ITER
           ) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Joint MLE of :math:`(\pi, M)` by EM over the unlabelled items' hidden labels.

    The log-likelihood is :math:`\sum_{kj}C_{kj}\log(\pi_kM_{kj}) + \sum_j u_j\log\sum_k
    \pi_kM_{kj}`. E-step: an unlabelled item judged :math:`j` is of class :math:`k` with
    probability :math:`r_{jk} = \pi_kM_{kj}/\sum_l\pi_lM_{lj}`; M-step on the completed table
    :math:`T_{kj} = C_{kj} + u_jr_{jk}`: :math:`\pi_k = \sum_jT_{kj}/N`, :math:`M_{kj} =
    T_{kj}/\sum_lT_{kl}` (Dawid & Skene 1979). It starts from the labelled items'
    shares and :math:`(C + 1/2)` row-normalised. The model is saturated: in the interior its
    maximum is :func:`eif`'s :math:`\hat\pi`, :math:`\hat M_{kj} = \bar\rho_j\hat\mu_{kj}/
    \hat\pi_k`.

    Returns
    -------
    pi : numpy.ndarray, shape (..., K)
    misclassification : numpy.ndarray, shape (..., K, K)
    iterations : int

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> pi, mm, _ = mle_em(c)
    >>> pi.round(4).tolist(), mm[0].round(4).tolist()
    ([0.478, 0.296, 0.226], [0.7892, 0.1584, 0.0524])
    """
    table = np.asarray(c.table, float)
    u = np.asarray(c.unlabelled, float)
    n_total = (c.m + c.n)[..., None]
    pi = table.sum(axis=-1) / c.m[..., None]
    mm = (table + 0.5) / (table + 0.5).sum(axis=-1, keepdims=True)
    iterations, step = 0, np.inf
    while step >= tol and iterations < max_iter:
        iterations += 1
        joint = pi[..., :, None] * mm  # pi_k M_kj
        r = joint / joint.sum(axis=-2, keepdims=True)
        full = table + r * u[..., None, :]
        new_pi = full.sum(axis=-1) / n_total
        new_mm = full / full.sum(axis=-1, keepdims=True)
        step = max(np.max(np.abs(new_pi - pi)), np.max(np.abs(new_mm - mm)))
        pi, mm = new_pi, new_mm
    return pi, mm, iterations


def mle(c: ClassCounts) -> ClassEstimate:
    r"""The joint MLE's prevalences (:func:`mle_em`) and their covariance.

    The observed information of the saturated model, mapped to :math:`\pi` by the delta method,
    does not depend on the parametrisation; in :math:`(\rho, \mu)` (judge shares and cell
    means) it is block-multinomial, and its inverse pushed to :math:`\pi = \sum_j\rho_j
    \mu_{\cdot j}` is :func:`eif`'s covariance, used here.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> mle(c).se().round(4).tolist() == eif(c).se().round(4).tolist()
    True
    """
    return ClassEstimate(mle_em(c)[0], eif(c).cov)


def posterior_draws(c: ClassCounts, alpha, draws: int, rng: np.random.Generator) -> np.ndarray:
    r"""Exact posterior draws of :math:`\pi` under a Dirichlet prior on the K×K table.

    A Dirichlet :math:`\alpha` on the cells :math:`P(Y = k, \hat Y = j)` is, by aggregation,
    :math:`\rho = P(\hat Y) \sim \mathrm{Dirichlet}(\sum_k\alpha_{k\cdot})` and independent
    :math:`\mu_{\cdot j} = P(Y \mid \hat Y = j) \sim \mathrm{Dirichlet}(\alpha_{\cdot j})`. The
    judge labels of all :math:`N` items inform :math:`\rho` alone, the labelled table's column
    :math:`j` informs :math:`\mu_{\cdot j}` alone (the unlabelled items' hidden labels summed
    out), so the posterior is conjugate:

    .. math::
        \rho \mid \cdot \sim \mathrm{Dirichlet}(\textstyle\sum_k\alpha_{kj} + c_j + u_j),\quad
        \mu_{\cdot j} \mid \cdot \sim \mathrm{Dirichlet}(\alpha_{\cdot j} + C_{\cdot j}),\quad
        \pi = \textstyle\sum_j\rho_j\mu_{\cdot j}.

    Parameters
    ----------
    c : ClassCounts
        One table (no leading dimensions).
    alpha : array (K, K)
        Prior concentrations (Jeffreys': all 1/2).
    draws : int
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        Shape (draws, K).

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> pi = posterior_draws(c, np.full((3, 3), 0.5), 20000, np.random.default_rng(0))
    >>> pi.mean(axis=0).round(2).tolist(), bool(np.allclose(pi.sum(axis=1), 1))
    ([0.48, 0.3, 0.23], True)
    """
    alpha = np.asarray(alpha, float)
    table = np.asarray(c.table, float)
    rho = rng.dirichlet(alpha.sum(axis=0) + table.sum(axis=0) + c.unlabelled, size=draws)
    g = rng.gamma(alpha + table, size=(draws, *table.shape))  # columns: Dirichlet(alpha_.j + C_.j)
    mu = g / g.sum(axis=-2, keepdims=True)
    return np.einsum("dkj,dj->dk", mu, rho)


def posterior_moments(c: ClassCounts, alpha) -> ClassEstimate:
    r"""Exact posterior mean and covariance of :math:`\pi` under :func:`posterior_draws`' model.

    With :math:`\rho \sim \mathrm{Dirichlet}(a)`, :math:`A = \sum_j a_j`, and independent
    :math:`\mu_{\cdot j} \sim \mathrm{Dirichlet}(b_{\cdot j})`, :math:`B_j = \sum_k b_{kj}`:
    :math:`E\,\rho_i\rho_j = (a_i\delta_{ij} + a_ia_j)/(A(A+1))`, :math:`E\,\mu_{ki}\mu_{li} =
    (b_{ki}\delta_{kl} + b_{ki}b_{li})/(B_i(B_i+1))` and :math:`E\,\mu_{ki}\mu_{lj} =
    E\mu_{ki}E\mu_{lj}` for :math:`i \ne j`, so :math:`E\,\pi_k\pi_l = \sum_{ij}
    E[\rho_i\rho_j]E[\mu_{ki}\mu_{lj}]`.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> post = posterior_moments(c, np.full((3, 3), 0.5))
    >>> post.estimate.round(4).tolist(), post.se().round(4).tolist()
    ([0.476, 0.2974, 0.2266], [0.0386, 0.0404, 0.0353])
    """
    alpha = np.asarray(alpha, float)
    table = np.asarray(c.table, float)
    a = alpha.sum(axis=0) + table.sum(axis=0) + np.asarray(c.unlabelled, float)
    b = alpha + table
    big_a, big_b = a.sum(), b.sum(axis=0)
    e_rho, e_mu = a / big_a, b / big_b
    rho2 = (np.diag(a) + np.outer(a, a)) / (big_a * (big_a + 1))
    mu2 = np.einsum("ki,lj->klij", e_mu, e_mu)  # E mu_ki mu_lj, i != j
    same = (np.einsum("ki,kl->kli", b, np.eye(len(a))) + np.einsum("ki,li->kli", b, b)) / (
        big_b * (big_b + 1))
    idx = np.arange(len(a))
    mu2[:, :, idx, idx] = same
    mean = e_mu @ e_rho
    return ClassEstimate(mean, np.einsum("ij,klij->kl", rho2, mu2) - np.outer(mean, mean))


def by_name(c: ClassCounts) -> dict:
    r"""The frequentist estimators as thunks returning their :class:`ClassEstimate`, by name.

    Examples
    --------
    >>> c = ClassCounts(np.array([[40, 8, 2], [6, 20, 4], [2, 6, 12]]), np.array([450, 320, 230]))
    >>> {k: round(float(f().estimate[0]), 4) for k, f in by_name(c).items()}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'naive': 0.45, 'classical': 0.5, 'rogan_gladen': 0.4667, 'ppi': 0.47, 'ppi_pp': 0.4855,
     'ppi_pp_unclipped': 0.4855, 'eif': 0.478, 'mle': 0.478}
    """
    lam = ppi_pp_lambda(c, clip=False)
    return {"naive": lambda: naive(c), "classical": lambda: classical(c),
            "rogan_gladen": lambda: rogan_gladen(c), "ppi": lambda: ppi_pp(c, 1.0),
            "ppi_pp": lambda: ppi_pp(c, np.clip(lam, 0.0, 1.0)),
            "ppi_pp_unclipped": lambda: ppi_pp(c, lam), "eif": lambda: eif(c),
            "mle": lambda: mle(c)}
