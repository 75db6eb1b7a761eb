r"""Weak-label patterns and label models :math:`P(Y \mid Z)` for the Fréchet bounds.

Labelling functions (LFs) vote for a class :math:`0, \dots, K-1` or abstain (:math:`-1`). The
bounds treat the vector of votes of an item as **one categorical variable** :math:`Z`, whose
levels are the distinct rows of the weak-label matrix (the *patterns*). A label model turns a
pattern into a distribution :math:`\beta_z(y) = P(Y = y \mid Z = z)` without any true label:

* :func:`majority_vote`: the share of the non-abstaining votes that go to each class,
  :math:`\beta_z(k) = \#\{j: z_j = k\} / \#\{j: z_j \ne -1\}`;
* :func:`dawid_skene`: the Dawid–Skene model (the conditionally independent model of Snorkel),
  LFs independent given :math:`Y` with class-conditional vote probabilities
  :math:`\theta_j[y, v] = P(\lambda_j = v \mid Y = y)`, fitted by EM; then by Bayes' rule

  .. math:: \beta_z(y) \propto \pi_y \prod_j \theta_j[y, z_j].

Every function works on the unique patterns with their counts, so its cost grows with the
number of distinct patterns, not with the number of items. Inputs are trusted: the entry
function :func:`bayeval.methods.bounds.api.bounds` validates them once.
"""

from __future__ import annotations

import numpy as np
import scipy

__all__ = ["LABEL_MODELS", "LabelModelDelta", "dawid_skene", "dawid_skene_concerns",
           "dawid_skene_fit",
           "fit_label_model", "label_model_delta", "label_model_diagnostics",
           "label_model_pullback", "majority_vote", "majority_vote_concerns",
           "weak_label_patterns"]

LABEL_MODELS = ("majority_vote", "dawid_skene")
#: majority vote is flagged when a labelling function's accuracy under Dawid-Skene is below
#: LOW_ACCURACY, or two functions agree more than conditionally independent ones would by more
#: than EXCESS_MAX
LOW_ACCURACY, EXCESS_MAX = 0.7, 0.05
#: Dawid-Skene's derivative solves its (parameters x parameters) system directly up to this size
DENSE_SOLVE = 1500
#: draws of the label model's error (:meth:`LabelModelDelta.pooled_draws`)
DRAWS = 400
#: family-wise false-alarm level of the tests of a Dawid-Skene fit (:func:`dawid_skene_fit`)
FIT_LEVEL = 0.01
#: log of the smallest normal float
LOG_TINY = float(np.log(np.finfo(float).tiny))


def weak_label_patterns(weak_labels: np.ndarray, n_classes: int
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Encode each row of the weak-label matrix as the index of its pattern.

    Rows are read as numbers in base :math:`K + 1` (digit :math:`z_j + 1`), a few columns at a
    time so that no code overflows 64 bits, and the codes are made unique.

    Parameters
    ----------
    weak_labels : int array of shape (n_items, n_lfs)
        Votes in :math:`\{-1, 0, \dots, K-1\}`.
    n_classes : int
        :math:`K`.

    Returns
    -------
    cell : int array (n_items,)
        Index of each item's pattern.
    patterns : int array (n_patterns, n_lfs)
        The distinct rows, in the order of their codes.
    counts : int array (n_patterns,)
        Number of items with each pattern.

    Examples
    --------
    >>> cell, patterns, counts = weak_label_patterns(np.array([[0, -1], [1, 1], [0, -1]]), 2)
    >>> cell.tolist(), patterns.tolist(), counts.tolist()
    ([0, 1, 0], [[0, -1], [1, 1]], [2, 1])
    """
    n, n_lfs = weak_labels.shape
    base = n_classes + 1
    per_chunk = max(1, int((62 - np.log2(max(n, 2))) // np.log2(base)))
    compact = weak_labels.astype(np.int8 if n_classes < 127 else np.int64)  # faster scans
    code = np.zeros(n, dtype=np.int64)
    for start in range(0, n_lfs, per_chunk):
        for j in range(start, min(start + per_chunk, n_lfs)):
            code *= base
            code += compact[:, j]
            code += 1
        _, code, counts = np.unique(code, return_inverse=True, return_counts=True)
    example = np.empty(len(counts), dtype=np.int64)
    example[code] = np.arange(n)  # one item of each pattern
    return code, weak_labels[example], counts


def _votes(patterns: np.ndarray, n_classes: int) -> np.ndarray:
    """Number of votes for each class in each pattern, shape (n_patterns, K)."""
    return np.stack([(patterns == k).sum(axis=1) for k in range(n_classes)], axis=1)


def majority_vote(patterns: np.ndarray, n_classes: int, counts: np.ndarray | None = None
                  ) -> np.ndarray:
    r"""Soft majority vote: :math:`\beta_z(k)` is the share of non-abstaining votes for :math:`k`.

    A pattern whose voting LFs all agree gets probability 1, so the bounds collapse to a point
    in its cell: majority vote is not a calibrated posterior, prefer :func:`dawid_skene`. The
    pattern without any vote gets the class prior, the count-weighted mean of the other
    patterns' :math:`\beta_z` (uniform without ``counts``).

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
        Distinct weak-label rows.
    n_classes : int
    counts : int array (n_patterns,), optional
        Items per pattern, for the class prior of the pattern without votes.

    Returns
    -------
    float array (n_patterns, n_classes), rows summing to 1.

    Examples
    --------
    >>> majority_vote(np.array([[0, 0, 1], [1, -1, -1]]), 2).round(3).tolist()
    [[0.667, 0.333], [0.0, 1.0]]
    >>> majority_vote(np.array([[0, 0], [1, -1], [-1, -1]]), 2, np.array([1, 3, 5])).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.25, 0.75]]
    """
    votes = _votes(patterns, n_classes).astype(float)
    total = votes.sum(axis=1, keepdims=True)
    share = np.divide(votes, total, out=np.zeros_like(votes), where=total > 0)
    silent = total[:, 0] == 0
    if silent.any():
        weight = np.where(silent, 0.0, 1.0 if counts is None else np.asarray(counts, float))
        prior = (weight @ share / weight.sum() if weight.sum() > 0 else
                 np.full(n_classes, 1.0 / n_classes))
        share[silent] = prior if counts is not None else 1.0 / n_classes
    return share


def _one_hot(patterns: np.ndarray, n_classes: int) -> scipy.sparse.csr_matrix:
    """Sparse (n_patterns, n_lfs * (K + 1)) indicator of each LF's outcome (0 = abstain)."""
    n_pat, n_lfs = patterns.shape
    cols = (patterns + 1) + (n_classes + 1) * np.arange(n_lfs)[None, :]
    rows = np.repeat(np.arange(n_pat), n_lfs)
    data = np.ones(n_pat * n_lfs)
    return scipy.sparse.csr_matrix((data, (rows, cols.ravel())),
                                   shape=(n_pat, n_lfs * (n_classes + 1)))


def dawid_skene(patterns: np.ndarray, counts: np.ndarray, n_classes: int, *,
                class_balance=None, smoothing: float = 1.0, max_iter: int = 200,
                tol: float = 1e-7, start=None) -> np.ndarray:
    r"""Dawid–Skene label model fitted by EM on pattern counts: :math:`\beta_z(y)` per pattern.

    Model: :math:`Y \sim \mathrm{Cat}(\pi)`, LFs independent given :math:`Y`,
    :math:`P(\lambda_j = v \mid Y = y) = \theta_j[y, v]` for :math:`v \in \{-1, 0, .., K-1\}`.
    With :math:`c_u` items of pattern :math:`u`, EM alternates

    .. math::
        r_{uy} &\propto \pi_y \textstyle\prod_j \theta_j[y, z_{uj}] \quad\text{(E step)},\\
        \theta_j[y, v] &\propto s + \textstyle\sum_u c_u r_{uy}\,[z_{uj} = v],\qquad
        \pi_y \propto s + \textstyle\sum_u c_u r_{uy} \quad\text{(M step)},

    started from the soft majority vote (which fixes the labelling of the classes, so no label
    switching), with pseudo-count :math:`s` (``smoothing``) against zero probabilities. One
    iteration costs two sparse products with one non-zero per vote: an abstention enters
    through :math:`\sum_u c_u r_{uy}` less the votes, and the E step through
    :math:`\sum_j \log\theta_j[y, -1]` plus, per vote, :math:`\log\theta_j[y, v] -
    \log\theta_j[y, -1]`. EM is accelerated by SQUAREM (Varadhan & Roland, 2008) in the log
    expected counts: two EM steps, an extrapolation along them kept when it raises the
    penalised likelihood (the objective EM increases), one EM step from there; it stops, like
    plain EM, when one EM step moves no :math:`r_{uy}` by more than ``tol``, at the same fixed
    point in far fewer steps.

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
        Distinct weak-label rows (see :func:`weak_label_patterns`).
    counts : int array (n_patterns,)
        Number of items with each pattern.
    n_classes : int
    class_balance : array of n_classes floats, optional
        Known :math:`P(Y)` (the paper's setting); estimated by EM when None.
    smoothing : float
        Dirichlet pseudo-count :math:`s > 0` of every vote probability and class weight.
    max_iter, tol : int, float
        EM stops when one EM step moves no posterior :math:`r_{uy}` by more than ``tol``, or
        after ``max_iter`` EM steps.
    start : float array (n_patterns, n_classes), optional
        Posteriors to start EM from (e.g. a fit on nearby counts); default the soft majority
        vote.

    Returns
    -------
    float array (n_patterns, n_classes): :math:`P(Y = y \mid Z = z_u)`.

    Examples
    --------
    >>> patterns = np.array([[0, 0, 0], [1, 1, 1], [0, 1, 1], [1, 0, -1]])
    >>> dawid_skene(patterns, np.array([40, 40, 10, 10]), 2).round(2)[:2].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    em = _DawidSkeneEM(patterns, counts, n_classes, class_balance, smoothing)
    post = (majority_vote(patterns, n_classes, counts) if start is None
            else np.asarray(start, dtype=float))
    post = np.ascontiguousarray(post.T)  # (K, n_patterns): reductions over K are fast
    for _ in range(max_iter):
        new = em.e_step(em.m_step(post))
        done = np.abs(new - post).max() <= tol
        post = new
        if done:
            break
    return post.T.copy()


class _DawidSkeneEM:
    """Dawid-Skene's EM on the pattern counts, one non-zero per vote: the M step from the
    posteriors (K, n_patterns) to the log vote probabilities and class weights, the E step
    back (:func:`dawid_skene`). Class 0 enters both by difference (its posteriors are 1 less
    the others', its log joint the reference): K - 1 sparse products each."""

    def __init__(self, patterns, counts, n_classes, class_balance, smoothing):
        n_pat, n_lfs = patterns.shape
        voted = patterns != -1
        rows = np.broadcast_to(np.arange(n_pat)[:, None], patterns.shape)[voted]
        cols = (patterns + n_classes * np.arange(n_lfs)[None, :])[voted]
        self.votes = scipy.sparse.csr_matrix((np.ones(rows.size), (rows, cols)),
                                             shape=(n_pat, n_lfs * n_classes))
        self.votes_t = self.votes.T.tocsr()
        self.counts = np.asarray(counts, dtype=float)
        self.all_votes = self.votes_t @ self.counts  # per (function, vote), every class
        self.shape, self.smoothing = (n_lfs, n_classes + 1, n_classes), smoothing
        self.fixed_pi = (None if class_balance is None
                         else np.log(np.asarray(class_balance, dtype=float)))

    def m_step(self, post: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log theta (n_lfs, K + 1, K), abstention first, and log pi (K)."""
        n_lfs, _, k = self.shape
        weighted = post[1:] * self.counts
        rest = [self.votes_t @ row for row in weighted]
        votes = np.stack([self.all_votes - sum(rest), *rest], axis=1).reshape(n_lfs, k, k)
        mass = np.concatenate([[self.counts.sum() - weighted.sum()], weighted.sum(axis=1)])
        abstain = np.maximum(mass - votes.sum(axis=1), 0.0)[:, None, :]
        expected = np.concatenate([abstain, votes], axis=1) + self.smoothing
        log_theta = np.log(expected / expected.sum(axis=1, keepdims=True))
        if self.fixed_pi is not None:
            return log_theta, self.fixed_pi
        return log_theta, np.log((mass + self.smoothing) / (mass + self.smoothing).sum())

    def e_step(self, params: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        log_theta, log_pi = params
        n_lfs, _, k = self.shape
        shift = (log_theta[:, 1:, :] - log_theta[:, :1, :]).reshape(n_lfs * k, k)
        base = log_pi + log_theta[:, 0, :].sum(axis=0)
        log_joint = np.empty((k, self.counts.size))
        log_joint[0] = 0.0
        for y in range(1, k):
            log_joint[y] = self.votes @ (shift[:, y] - shift[:, 0])
            log_joint[y] += base[y] - base[0]
        log_joint -= log_joint.max(axis=0)
        post = np.zeros_like(log_joint)  # 0 below the normal floats: subnormals are slow
        np.exp(log_joint, out=post, where=log_joint > LOG_TINY)
        post /= post.sum(axis=0)
        return post


def fit_label_model(name: str, patterns: np.ndarray, counts: np.ndarray, n_classes: int
                    ) -> np.ndarray:
    r"""The named label model :math:`\beta_z(y)` of every pattern.

    Parameters
    ----------
    name : {"majority_vote", "dawid_skene"}
        :func:`majority_vote` or :func:`dawid_skene` (with its defaults).
    patterns : int array (n_patterns, n_lfs)
        Distinct weak-label rows.
    counts : int array (n_patterns,)
        Number of items with each pattern.
    n_classes : int

    Returns
    -------
    float array (n_patterns, n_classes): :math:`P(Y = y \mid Z = z_u)`.

    Examples
    --------
    >>> fit_label_model("majority_vote", np.array([[0, 0, 1]]), np.array([5]), 2).round(3)
    array([[0.667, 0.333]])
    """
    if name == "majority_vote":
        return majority_vote(patterns, n_classes, counts)
    return dawid_skene(patterns, counts, n_classes)


def _ds_state(patterns, counts, beta, n_classes, smoothing):
    """The EM state of a Dawid-Skene fit: one-hot, counts, expected counts E, their sums S per
    (function, class), class mass m and the E-step posterior r at (E, m)."""
    one_hot = _one_hot(patterns, n_classes)
    c = np.asarray(counts, dtype=float)
    n_lfs = patterns.shape[1]
    expected = smoothing + one_hot.T @ (c[:, None] * beta)  # (O, K)
    sums = expected.reshape(n_lfs, n_classes + 1, n_classes).sum(axis=1)  # (J, K)
    mass = smoothing + c @ beta
    log_theta = np.log(expected.reshape(n_lfs, n_classes + 1, n_classes) / sums[:, None, :])
    log_joint = np.log(mass / mass.sum()) + one_hot @ log_theta.reshape(-1, n_classes)
    log_joint -= log_joint.max(axis=1, keepdims=True)
    post = np.exp(log_joint)
    post /= post.sum(axis=1, keepdims=True)
    return one_hot, c, expected, sums, mass, post


def _ds_adjoint(state, w: np.ndarray) -> np.ndarray:
    r""":math:`(\partial r / \partial x)^\top w` for ``w`` (n, patterns, K), as (n, D)."""
    one_hot, _, expected, sums, mass, post = state
    n_lfs, k = sums.shape
    n, n_pat = w.shape[0], w.shape[1]
    q = w * post
    q = q - post * q.sum(axis=2, keepdims=True)  # d/d log-joint (softmax)
    g_theta = (one_hot.T @ q.transpose(1, 0, 2).reshape(n_pat, n * k)).reshape(-1, n, k)
    g_theta = g_theta.transpose(1, 0, 2).reshape(n, n_lfs, k + 1, k)
    g_pi = q.sum(axis=1)
    g_e = (g_theta / expected.reshape(n_lfs, k + 1, k)
           - g_theta.sum(axis=2, keepdims=True) / sums[:, None, :])
    g_m = g_pi / mass - g_pi.sum(axis=1, keepdims=True) / mass.sum()
    return np.concatenate([g_e.reshape(n, -1), g_m], axis=1)


class LabelModelDelta:
    r"""The delta method for a label model fitted on the pattern counts :math:`c_u`.

    Built by :func:`label_model_delta`; :meth:`pullback` gives derivatives of functions of
    :math:`\hat\beta` in the counts, :meth:`pooled_sd` the sampling sd of pooled
    :math:`\hat\beta`. Dawid–Skene's fit is the EM fixed point :math:`x = \Phi(x, c)` in its
    expected counts :math:`x = (E, m)` (:func:`label_model_pullback`); the majority vote moves
    only the prior of the pattern without votes.

    Examples
    --------
    >>> patterns = np.array([[0, 0, 0], [1, 1, 1], [0, 1, 1], [1, 0, -1], [0, 0, 1]])
    >>> counts = np.array([40, 30, 10, 10, 10])
    >>> delta = label_model_delta("dawid_skene", patterns, counts,
    ...                           dawid_skene(patterns, counts, 2))
    >>> delta.pooled_sd(np.array([0, 1, 2, 2, 2])).shape
    (3, 2)
    """

    def __init__(self, name: str, patterns, counts, beta, smoothing: float = 1.0):
        self.name, self.patterns = name, patterns
        self.counts, self.beta = np.asarray(counts, dtype=float), np.asarray(beta, dtype=float)
        self._lu = self._cov = None
        if name == "dawid_skene":
            self.state = _ds_state(patterns, self.counts, self.beta, self.beta.shape[1],
                                   smoothing)
            self.n_e = self.state[0].shape[1] * self.beta.shape[1]
            self.dim = self.n_e + self.beta.shape[1]

    def error_terms(self) -> dict:
        """The fit's error as :func:`~bayeval.methods.bounds.fast.exact_bounds`' arguments
        ``label_model_pullback``, ``label_model_sd`` and ``label_model_draws``.

        Examples
        --------
        >>> delta = label_model_delta("majority_vote", np.array([[0, 0], [-1, -1]]),
        ...                           np.array([30, 10]), np.array([[1.0, 0.0], [0.9, 0.1]]))
        >>> sorted(delta.error_terms())
        ['label_model_draws', 'label_model_pullback', 'label_model_sd']
        """
        return {"label_model_pullback": self.pullback, "label_model_sd": self.pooled_sd,
                "label_model_draws": self.pooled_draws}

    def _spread(self, v):
        """A v_E + v_m for a batch v (n, D), shape (n, patterns, K)."""
        one_hot, k = self.state[0], self.beta.shape[1]
        n = len(v)
        v_e = v[:, :self.n_e].reshape(n, -1, k).transpose(1, 0, 2).reshape(-1, n * k)
        return (one_hot @ v_e).reshape(-1, n, k).transpose(1, 0, 2) + v[:, None, self.n_e:]

    def _jac_t(self, v):
        r""":math:`J_x^\top v` for a batch of v (n, D): :math:`(\partial r/\partial x)^\top
        (c\,(A v_E + v_m))`."""
        return _ds_adjoint(self.state, self.state[1][None, :, None] * self._spread(v))

    def _factor(self):
        """LU factors of :math:`I - J_x`, built once (row d of the stacked
        :math:`J_x^\top e_d` is row d of :math:`J_x`)."""
        if self._lu is None:
            jac = np.concatenate([self._jac_t(block) for block in
                                  np.array_split(np.eye(self.dim), max(1, self.dim // 32))])
            self._lu = scipy.linalg.lu_factor(np.eye(self.dim) - jac)
        return self._lu

    def pullback(self, grad) -> np.ndarray:
        """:math:`dT_i/dc_u` for gradients ``grad`` (n, patterns, K), see
        :func:`label_model_pullback`."""
        grad = np.asarray(grad, dtype=float)
        if self.name == "majority_vote":
            return _mv_pullback(self.patterns, self.counts, self.beta, grad)
        g = _ds_adjoint(self.state, grad)  # (n, D)
        if self.dim <= DENSE_SOLVE:
            lam = scipy.linalg.lu_solve(self._factor(), g.T, trans=1).T
        else:  # many parameters: GMRES on (I - J_x)^T lambda = g, one product per iteration
            op = scipy.sparse.linalg.LinearOperator(
                (self.dim, self.dim), matvec=lambda v: v - self._jac_t(v.reshape(1, -1))[0],
                dtype=float)
            lam = np.stack([scipy.sparse.linalg.gmres(op, row, rtol=1e-12, atol=0.0,
                                                      restart=200, maxiter=50)[0]
                            for row in g])
        return (self.state[5][None] * self._spread(lam)).sum(axis=2)

    def _covariance(self) -> np.ndarray:
        r""":math:`\mathrm{Cov}\,\hat x = (I - J_x)^{-1}\Phi_c\Sigma_c\Phi_c^\top(I - J_x)^{-\top}`,
        :math:`\Sigma_c = \mathrm{diag}(c) - cc^\top/n` (multinomial counts), built once."""
        if self._cov is not None:
            return self._cov
        one_hot, c, *_, post = self.state
        k = post.shape[1]
        n_out = one_hot.shape[1]
        ee = np.zeros((n_out, k, n_out, k))
        em = np.zeros((n_out, k, k))
        for y in range(k):
            for y2 in range(k):
                w = c * post[:, y] * post[:, y2]
                ee[:, y, :, y2] = (one_hot.T @ one_hot.multiply(w[:, None])).toarray()
                em[:, y, y2] = one_hot.T @ w
        mm = (c[:, None] * post).T @ post
        q = np.block([[ee.reshape(self.n_e, self.n_e), em.reshape(self.n_e, k)],
                      [em.reshape(self.n_e, k).T, mm]])
        mean = np.concatenate([(one_hot.T @ (c[:, None] * post)).ravel(), c @ post])
        q -= np.outer(mean, mean) / c.sum()
        lu = self._factor()
        half = scipy.linalg.lu_solve(lu, q)
        self._cov = scipy.linalg.lu_solve(lu, half.T)
        return self._cov

    def _pooled_rows(self, group):
        r"""The pooled patterns' weights :math:`w_u = c_u/c_g` and, for Dawid–Skene, the
        gradients :math:`a_{gk} = \sum_{u\in g} w_u\,\partial r_{uk}/\partial x` of each pooled
        :math:`\hat\beta_{gk}` in the fit's expected counts, a list over k of (groups, D)."""
        group = np.asarray(group)
        n_groups, k = int(group.max()) + 1, self.beta.shape[1]
        sizes = np.bincount(group, self.counts, minlength=n_groups)
        weight = self.counts / np.maximum(sizes[group], 1e-300)
        if self.name == "majority_vote":
            return weight, None
        one_hot, _, expected, sums, mass, post = self.state
        n_lfs = sums.shape[0]
        member = scipy.sparse.csr_matrix((weight, (group, np.arange(len(group)))),
                                         shape=(n_groups, len(group)))
        jr = post[:, :, None] * (np.eye(k)[None] - post[:, None, :])  # (P, k, y)
        lf_of = np.repeat(np.arange(n_lfs), k + 1)
        rows = []
        for cls in range(k):
            a = np.zeros((n_groups, self.dim))
            e_part = a[:, :self.n_e].reshape(n_groups, -1, k)  # a view: (groups, O, K)
            for y in range(k):
                mixed = member @ one_hot.multiply(jr[:, cls, y][:, None])  # (groups, O)
                total = member @ jr[:, cls, y]
                e_part[:, :, y] = (mixed.toarray() / expected[:, y]
                                   - total[:, None] / sums[lf_of, y])
                a[:, self.n_e + y] = total / mass[y]
            rows.append(a)
        return weight, rows

    def _silent_covariance(self):
        r"""Majority vote: the pattern without votes (or None) and the covariance of its prior,
        :math:`\sum_{u\,\text{voting}} c_u (s_u - \beta)(s_u - \beta)^\top
        / (\sum_{u\,\text{voting}} c_u)^2`."""
        silent = (self.patterns == -1).all(axis=1)
        voting = self.counts * ~silent
        if not silent.any() or voting.sum() == 0:
            return None, None
        u = int(np.flatnonzero(silent)[0])
        dev = majority_vote(self.patterns, self.beta.shape[1]) - self.beta[u]
        return u, (voting[:, None] * dev).T @ dev / voting.sum() ** 2

    def pooled_sd(self, group, chunk: int = 2048) -> np.ndarray:
        r"""Sampling sd of the pooled label model :math:`\hat\beta_{gk} = \sum_{u \in g}
        w_u\hat\beta_{uk}`, :math:`w_u = c_u/c_g` held at the observed counts, shape
        (groups, K).

        Dawid–Skene: :math:`\mathrm{Var}\,\hat\beta_{gk} = a_{gk}^\top\,\mathrm{Cov}\,\hat x\,
        a_{gk}` with :math:`a_{gk} = \sum_{u\in g} w_u\,\partial r_{uk}/\partial x`; through
        the log-joint :math:`\ell_{uy} = \log(m_y/\sum m) + \sum_j \log(E_j[z_{uj}, y]
        / S_j[y])`, :math:`\partial r_{uk}/\partial\ell_{uy} = r_{uk}([k = y] - r_{uy})`.
        Majority vote: the prior of the pattern without votes,
        :math:`\mathrm{Var}\,\hat\beta_k = \sum_{u\,\text{voting}} c_u (s_{uk} - \beta_k)^2
        / (\sum_{u\,\text{voting}} c_u)^2`.
        """
        group = np.asarray(group)
        n_groups, k = int(group.max()) + 1, self.beta.shape[1]
        weight, rows = self._pooled_rows(group)
        var = np.zeros((n_groups, k))
        if rows is None:
            u, cov = self._silent_covariance()
            if u is not None:
                var[group[u]] = weight[u] ** 2 * np.diag(cov)
            return np.sqrt(var)
        cov = self._covariance()
        for cls, a in enumerate(rows):
            for start in range(0, n_groups, chunk):
                block = a[start:start + chunk]
                var[start:start + chunk, cls] = ((block @ cov) * block).sum(axis=1)
        return np.sqrt(np.maximum(var, 0.0))

    def pooled_draws(self, group, n_draws: int = DRAWS, seed: int = 0) -> np.ndarray:
        r"""Draws of the pooled label model's error :math:`\hat\beta_g - \beta_g` from its
        normal approximation (the delta method's, as :meth:`pooled_sd`), shape
        (n_draws, groups, K): one draw moves every pooled pattern together, as one refit
        of the label model does.

        Dawid–Skene: :math:`\delta_{gk} = a_{gk}^\top\xi`, :math:`\xi \sim
        N(0, \mathrm{Cov}\,\hat x)`. Majority vote: the prior of the pattern without votes
        moves, :math:`w_u\,N(0, \mathrm{Cov}\,\hat\beta_u)`.
        """
        group = np.asarray(group)
        n_groups, k = int(group.max()) + 1, self.beta.shape[1]
        rng = np.random.default_rng(seed)
        weight, rows = self._pooled_rows(group)
        out = np.zeros((n_draws, n_groups, k))
        if rows is None:
            u, cov = self._silent_covariance()
            if u is not None:
                out[:, group[u]] = weight[u] * _normal_draws(cov, n_draws, rng)
            return out
        xi = _normal_draws(self._covariance(), n_draws, rng)  # (S, D)
        for cls, a in enumerate(rows):
            out[:, :, cls] = xi @ a.T
        return out


def _normal_draws(cov, n_draws, rng):
    """Draws of N(0, cov), cov symmetrised and its rounding-error negative eigenvalues cut."""
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    return rng.standard_normal((n_draws, len(values))) @ root.T


def _mv_pullback(patterns, counts, beta, grad):
    """dT/dc_u through the majority vote: only the no-vote pattern's prior moves."""
    silent = (patterns == -1).all(axis=1)
    out = np.zeros(grad.shape[:2])
    voting = counts * ~silent
    if not silent.any() or voting.sum() == 0:
        return out
    prior = beta[silent][0]
    share = majority_vote(patterns, beta.shape[1])
    slope = np.where(~silent[:, None], share - prior, 0.0) / voting.sum()  # d prior / d c_u
    return np.einsum("nk,uk->nu", grad[:, silent].sum(axis=1), slope)


def label_model_delta(name: str, patterns: np.ndarray, counts: np.ndarray,
                      beta: np.ndarray) -> LabelModelDelta:
    """The delta method (:class:`LabelModelDelta`) for a label model fitted on ``counts``.

    Parameters
    ----------
    name : {"dawid_skene", "majority_vote"}
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
    beta : float array (n_patterns, n_classes)
        The fit on ``counts`` (:func:`fit_label_model`).

    Returns
    -------
    LabelModelDelta

    Examples
    --------
    >>> patterns = np.array([[0, 0], [1, 1], [-1, -1]])
    >>> delta = label_model_delta("majority_vote", patterns, np.array([30, 10, 10]),
    ...                           majority_vote(patterns, 2, np.array([30, 10, 10])))
    >>> delta.pooled_sd(np.array([0, 1, 2])).round(3).tolist()  # sqrt(.75 * .25 / 40)
    [[0.0, 0.0], [0.0, 0.0], [0.068, 0.068]]
    """
    return LabelModelDelta(name, patterns, counts, beta)


def label_model_pullback(name: str, patterns: np.ndarray, counts: np.ndarray,
                         beta: np.ndarray, grad: np.ndarray) -> np.ndarray:
    r"""Derivatives of functions of a fitted label model with respect to the pattern counts.

    For functions :math:`T_i(\beta)` with gradients ``grad`` :math:`= \partial T_i /
    \partial\beta_u(y)` at the fit :math:`\hat\beta = \beta(c)` on the counts :math:`c_u`,
    returns :math:`dT_i/dc_u = \sum_{u', y} \partial T_i/\partial\beta_{u'}(y)\,
    \partial\beta_{u'}(y)/\partial c_u`: how the label model refitted on slightly different
    counts moves :math:`T_i`.

    * Dawid–Skene: the fit is the fixed point :math:`x = \Phi(x, c)` of EM in its expected
      counts :math:`x = (E, m)`, :math:`E_{j}[v, y] = s + \sum_u c_u r_{uy}(x)[z_{uj} = v]`,
      :math:`m_y = s + \sum_u c_u r_{uy}(x)`, with :math:`r(x)` the E step. By the implicit
      function theorem :math:`dx/dc = (I - \partial_x\Phi)^{-1}\partial_c\Phi`, so with
      :math:`g = (\partial r/\partial x)^\top \nabla_\beta T` and
      :math:`\lambda = (I - \partial_x\Phi)^{-\top} g`,
      :math:`dT/dc_u = \sum_y r_{uy}\,(\lambda_E[(j, z_{uj}), y]\text{ summed over } j
      + \lambda_m[y])`. :math:`I - \partial_x\Phi` (of the size of the parameters,
      :math:`J(K+1)K + K`) is solved directly up to ``DENSE_SOLVE`` parameters and by GMRES
      beyond; it is singular where the model is not identified (fewer than three labelling
      functions), and the derivatives are then huge.
    * majority vote: only the pattern without votes depends on the counts (its class prior
      :math:`\sum_{u} c_u s_u / \sum_u c_u` over the voting patterns' vote shares :math:`s_u`).

    Parameters
    ----------
    name : {"dawid_skene", "majority_vote"}
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
    beta : float array (n_patterns, n_classes)
        The fit on ``counts`` (:func:`fit_label_model`).
    grad : float array (n_functions, n_patterns, n_classes)

    Returns
    -------
    float array (n_functions, n_patterns)

    Examples
    --------
    >>> patterns = np.array([[0, 0, 0], [1, 1, 1], [0, 1, 1], [1, 0, -1], [0, 0, 1]])
    >>> counts = np.array([40, 30, 10, 10, 10])
    >>> beta = dawid_skene(patterns, counts, 2, tol=1e-12, max_iter=5000)
    >>> grad = np.zeros((1, 5, 2)); grad[0, 2, 1] = 1.0  # T = beta_2(1)
    >>> step = np.zeros(5); step[0] = 1e-4
    >>> moved = dawid_skene(patterns, counts + step, 2, tol=1e-12, max_iter=5000)
    >>> fd = (moved[2, 1] - beta[2, 1]) / 1e-4
    >>> bool(abs(label_model_pullback("dawid_skene", patterns, counts, beta, grad)[0, 0] - fd)
    ...      < 1e-4 * abs(fd))
    True
    """
    return label_model_delta(name, patterns, counts, beta).pullback(grad)


def label_model_diagnostics(patterns: np.ndarray, counts: np.ndarray, beta: np.ndarray
                            ) -> dict[str, np.ndarray | float]:
    r"""How the label model agrees with the weak labels it was fitted on.

    For labelling function :math:`j`, over the items on which it votes:

    * ``lf_accuracy``: its accuracy implied by the label model,
      :math:`\hat a_j = \sum_z n_z [z_j \ne -1]\,\beta_z(z_j) / \sum_z n_z [z_j \ne -1]`;
    * ``lf_agreement``: how often it votes for the label model's most probable class.

    ``excess_agreement`` is the largest, over pairs :math:`(j, l)`, of the observed rate of equal
    votes on the items both vote on minus the rate that conditionally independent one-coin
    functions with accuracies :math:`\hat a_j, \hat a_l` would give,
    :math:`\hat a_j\hat a_l + (1 - \hat a_j)(1 - \hat a_l)/(K - 1)`: a large excess means
    correlated functions (they err together), which a majority vote counts twice.

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
    beta : float array (n_patterns, n_classes)

    Returns
    -------
    dict with ``lf_accuracy``, ``lf_agreement``, ``lf_votes`` (arrays over the functions),
    ``agreement`` (the vote-weighted mean of ``lf_agreement``) and ``excess_agreement``.

    Examples
    --------
    >>> patterns = np.array([[0, 0], [1, 1], [0, 1]])
    >>> out = label_model_diagnostics(patterns, np.array([10, 10, 2]),
    ...                               np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]]))
    >>> out["lf_accuracy"].round(3).tolist(), round(out["excess_agreement"], 3)
    ([0.864, 0.864], 0.145)
    """
    k = beta.shape[1]
    votes = patterns != -1
    weight = counts[:, None] * votes  # items per (pattern, lf) with a vote
    n_votes = weight.sum(axis=0)
    safe = np.where(votes, patterns, 0)
    right = np.take_along_axis(beta, safe, axis=1)  # beta_z(z_j)
    agree = safe == beta.argmax(axis=1)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = (weight * right).sum(axis=0) / n_votes
        agreement = (weight * agree).sum(axis=0) / n_votes
    excess = -np.inf
    n_lfs = patterns.shape[1]
    for j in range(n_lfs):
        for m in range(j + 1, n_lfs):
            both = counts * (votes[:, j] & votes[:, m])
            if both.sum() == 0:
                continue
            same = both @ (patterns[:, j] == patterns[:, m]) / both.sum()
            implied = acc[j] * acc[m] + (1 - acc[j]) * (1 - acc[m]) / (k - 1)
            excess = max(excess, float(same - implied))
    total = n_votes.sum()
    return {"lf_accuracy": acc, "lf_agreement": agreement, "lf_votes": n_votes,
            "agreement": float((n_votes * np.nan_to_num(agreement)).sum() / total) if total
            else np.nan,
            "excess_agreement": excess if np.isfinite(excess) else np.nan}


def dawid_skene_fit(patterns: np.ndarray, counts: np.ndarray, beta: np.ndarray, *,
                    smoothing: float = 1.0, level: float = FIT_LEVEL) -> dict:
    r"""Does the Dawid–Skene fit ``beta`` agree with the weak labels it was fitted on?

    Two tests of the fitted model's own predictions, at family-wise level ``level``:

    * **pairs of labelling functions** (local dependence, as the bivariate residuals of
      latent class analysis): among the :math:`N_{jl}` items on which functions :math:`j` and
      :math:`l` both vote, the model predicts equal votes with probability
      :math:`q_{jl} = \sum_y \pi_y\sum_{v \ge 0}\theta_j[y, v]\theta_l[y, v] / \sum_y
      \pi_y(1 - \theta_j[y, -1])(1 - \theta_l[y, -1])`; with :math:`O_{jl}` equal votes,
      :math:`z_{jl} = (O_{jl} - N_{jl}q_{jl}) / \sqrt{N_{jl}q_{jl}(1 - q_{jl})}` is flagged
      above the one-sided Bonferroni quantile :math:`\Phi^{-1}(1 - \text{level}/\#\text{pairs})`.
      Copies or functions that share their errors agree far more often than conditional
      independence allows, and Dawid–Skene then counts their votes twice. The pair flagged
      need not be the culprit: a fit that takes a copied pair's votes for the truth leaves
      the other functions looking correlated (see the example).
    * **the pattern frequencies** (global fit): Pearson's
      :math:`X^2 = \sum_z (c_z - e_z)^2/e_z` compares the pattern counts with
      :math:`e_z = nP(z)`, :math:`P(z) = \sum_y\pi_y\prod_j\theta_j[y, z_j]`, over the
      patterns with :math:`e_z \ge 5`, the rest (and every pattern never seen) pooled into
      one cell. Where no item is without a vote (such items are often left out, which changes
      who votes, not how the votes fall given who votes) the law is that given the functions
      that vote, :math:`S(z)`: :math:`e_z = n_{S(z)}P(z)/P(S(z))`, the rest pooled within
      each :math:`S`. The reference law is :math:`\chi^2` with cells - #S degrees of
      freedom, the upper of Chernoff & Lehmann's (1954) two laws for estimated parameters
      (the smoothed fit and the pooling make the statistic larger than :math:`\chi^2` with the
      parameters subtracted); flagged when :math:`p <` ``level``, tested where the cells
      outnumber the parameters.

    The parameters are those of the fit (its expected counts, smoothing included).

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
    beta : float array (n_patterns, n_classes)
        :func:`dawid_skene` on these counts.
    smoothing : float
        The fit's pseudo-count.
    level : float

    Returns
    -------
    dict with ``pair_z`` (n_lfs, n_lfs; NaN where a pair never votes together),
    ``flagged_pairs`` (list of (j, l)), ``pattern_chi2``, ``pattern_df`` and
    ``pattern_p`` (NaN without degrees of freedom), ``misfit`` (bool).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 3000)
    >>> votes = np.where(rng.random((3000, 4)) < 0.8, y[:, None], 1 - y[:, None])
    >>> votes[:, 3] = np.where(rng.random(3000) < 0.95, votes[:, 0], votes[:, 3])  # a copy
    >>> _, patterns, counts = weak_label_patterns(votes, 2)
    >>> fit = dawid_skene_fit(patterns, counts, dawid_skene(patterns, counts, 2))
    >>> fit["misfit"], fit["flagged_pairs"]  # the fit takes the copied votes for the truth
    (True, [(1, 2)])
    """
    k = beta.shape[1]
    _, c, expected, sums, mass, _ = _ds_state(patterns, counts, beta, k, smoothing)
    n_lfs = patterns.shape[1]
    theta = (expected.reshape(n_lfs, k + 1, k) / sums[:, None, :]).transpose(0, 2, 1)
    pi = mass / mass.sum()  # theta[j, y, v + 1] = P(lambda_j = v | Y = y)
    votes = patterns != -1
    both = (votes * c[:, None]).T @ votes  # (J, J) items on which j and l both vote
    equal = sum(((patterns == v) * c[:, None]).T @ (patterns == v) for v in range(k))
    p_both = np.einsum("y,jy,ly->jl", pi, 1 - theta[:, :, 0], 1 - theta[:, :, 0])
    q = np.minimum(np.einsum("y,jyv,lyv->jl", pi, theta[:, :, 1:], theta[:, :, 1:]) / p_both,
                   1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pair_z = (equal - both * q) / np.sqrt(np.maximum(both * q * (1 - q), 1e-12))
    pair_z[(both == 0) | np.eye(n_lfs, dtype=bool)] = np.nan
    n_pairs = n_lfs * (n_lfs - 1) // 2
    cut = scipy.stats.norm.isf(level / max(n_pairs, 1))
    flagged = [(j, m) for j in range(n_lfs) for m in range(j + 1, n_lfs) if pair_z[j, m] > cut]
    log_theta = np.log(theta.transpose(0, 2, 1).reshape(-1, k))
    log_p = scipy.special.logsumexp(np.log(pi) + _one_hot(patterns, k) @ log_theta, axis=1)
    who = np.zeros(len(c), dtype=np.int64)  # one set: the whole pattern law
    if not (c[~votes.any(axis=1)] > 0).any():  # no item without a vote: given who votes
        who = np.unique(votes, axis=0, return_inverse=True)[1].ravel()
        first = np.unique(who, return_index=True)[1]
        log_voters = np.where(votes[first][:, :, None], np.log1p(-theta[:, :, 0])[None],
                              np.log(theta[:, :, 0])[None]).sum(axis=1)  # (sets, K)
        log_p -= scipy.special.logsumexp(np.log(pi) + log_voters, axis=1)[who]
    first = np.unique(who, return_index=True)[1]
    e = np.bincount(who, c)[who] * np.exp(log_p)
    big = e >= 5
    rest_e = np.bincount(who, c) - np.bincount(who, np.where(big, e, 0.0))
    rest_c = np.bincount(who, np.where(big, 0.0, c))
    pooled = rest_e > 1e-9
    chi2 = float(((c[big] - e[big]) ** 2 / e[big]).sum()
                 + ((rest_c[pooled] - rest_e[pooled]) ** 2 / rest_e[pooled]).sum())
    # (cells - 1) per set: parameters not subtracted, the conservative law
    df = int(big.sum() + pooled.sum() - len(first))
    p_value = float(scipy.stats.chi2.sf(chi2, df)) if df > n_lfs * k * k + k - 1 else np.nan
    return {"pair_z": pair_z, "flagged_pairs": flagged, "pattern_chi2": chi2,
            "pattern_df": df, "pattern_p": p_value,
            "misfit": bool(flagged) or (df > 0 and p_value < level)}


def dawid_skene_concerns(patterns: np.ndarray) -> str:
    r"""Why Dawid–Skene is not identified from these weak labels ('' if it is).

    The votes of two conditionally independent labelling functions cannot tell their
    accuracies from the class balance: with :math:`K = 2` the pattern frequencies give 3
    equations (given who votes) for 5 unknowns (two functions' two class-conditional
    accuracies and :math:`\pi_1`), and any :math:`K` needs at least three functions with votes
    (Kruskal, 1977; Allman, Matias & Rhodes, 2009). EM then stops somewhere on a ridge of
    equally good fits, and its :math:`P(Y \mid z)` and its standard errors mean nothing.

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)

    Returns
    -------
    str

    Examples
    --------
    >>> dawid_skene_concerns(np.array([[0, 1], [1, -1], [-1, -1]]))[:53]
    'Dawid-Skene is not identified with 2 labelling functi'
    >>> dawid_skene_concerns(np.array([[0, 1, 1], [1, -1, 0]]))
    ''
    """
    voting = int((patterns != -1).any(axis=0).sum())
    if voting >= 3:
        return ""
    return (f"Dawid-Skene is not identified with {voting} labelling function"
            f"{'' if voting == 1 else 's'} that vote (the votes of fewer than three "
            "conditionally independent functions cannot tell their accuracies from the class "
            "balance): its P(Y | weak labels) is one of many that fit the votes equally well, "
            "so the bounds can be off by more than their intervals show. Add labelling "
            "functions, or give label_model as P(Y | weak labels) from a label model fitted "
            "elsewhere (with a known class balance or gold labels).")


def majority_vote_concerns(patterns: np.ndarray, counts: np.ndarray, ds_beta: np.ndarray
                           ) -> list[str]:
    r"""Why a majority vote would be a crude label model for these weak labels (empty if not).

    Majority vote counts every vote as right and every function as independent. Under the
    Dawid–Skene fit ``ds_beta`` (:func:`dawid_skene`), it is flagged when a labelling function's
    implied accuracy is below ``LOW_ACCURACY`` or when the largest ``excess_agreement`` of
    :func:`label_model_diagnostics` exceeds ``EXCESS_MAX`` (correlated functions).

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
    counts : int array (n_patterns,)
    ds_beta : float array (n_patterns, n_classes)

    Returns
    -------
    list of str

    Examples
    --------
    >>> patterns = np.array([[0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]])
    >>> counts = np.array([40, 40, 20, 20])
    >>> majority_vote_concerns(patterns, counts, dawid_skene(patterns, counts, 2))
    ['labelling functions [2] are right only 0.67 of the time under Dawid-Skene']
    """
    diag = label_model_diagnostics(patterns, counts, ds_beta)
    out = []
    weak = np.flatnonzero(diag["lf_accuracy"] < LOW_ACCURACY)
    if weak.size:
        rates = ", ".join(f"{v:.2f}" for v in diag["lf_accuracy"][weak])
        out.append(f"labelling functions {weak.tolist()} are right only {rates} of the time "
                   "under Dawid-Skene")
    if diag["excess_agreement"] > EXCESS_MAX:
        out.append(f"two functions agree {diag['excess_agreement']:.2f} more often than "
                   "conditionally independent ones would (correlated errors)")
    return out
