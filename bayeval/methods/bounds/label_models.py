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

__all__ = ["LABEL_MODELS", "dawid_skene", "dawid_skene_concerns", "fit_label_model",
           "label_model_diagnostics", "label_model_pullback", "majority_vote",
           "majority_vote_concerns", "weak_label_patterns"]

LABEL_MODELS = ("majority_vote", "dawid_skene")
#: majority vote is flagged when a labelling function's accuracy under Dawid-Skene is below
#: LOW_ACCURACY, or two functions agree more than conditionally independent ones would by more
#: than EXCESS_MAX
LOW_ACCURACY, EXCESS_MAX = 0.7, 0.05
#: Dawid-Skene's derivative solves its (parameters x parameters) system directly up to this size
DENSE_SOLVE = 1500


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
    iteration costs two sparse products with :math:`n_{\text{patterns}} \times n_{\text{LFs}}`
    non-zeros.

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
        EM stops when no posterior :math:`r_{uy}` moves by more than ``tol``.
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
    one_hot = _one_hot(patterns, n_classes)
    one_hot_t = one_hot.T.tocsr()
    n_lfs, n_out = patterns.shape[1], n_classes + 1
    post = (majority_vote(patterns, n_classes, counts) if start is None
            else np.asarray(start, dtype=float))
    fixed_pi = None if class_balance is None else np.log(np.asarray(class_balance, float))
    weighted = counts[:, None].astype(float)
    for _ in range(max_iter):
        expected = (one_hot_t @ (weighted * post)).reshape(n_lfs, n_out, n_classes) + smoothing
        log_theta = np.log(expected / expected.sum(axis=1, keepdims=True))
        if fixed_pi is None:
            class_mass = (weighted * post).sum(axis=0) + smoothing
            log_pi = np.log(class_mass / class_mass.sum())
        else:
            log_pi = fixed_pi
        log_joint = log_pi + one_hot @ log_theta.reshape(n_lfs * n_out, n_classes)
        log_joint -= log_joint.max(axis=1, keepdims=True)
        new = np.exp(log_joint)
        new /= new.sum(axis=1, keepdims=True)
        done = np.abs(new - post).max() <= tol
        post = new
        if done:
            break
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


def _ds_pullback(patterns, counts, beta, grad, smoothing=1.0):
    """dT/dc_u through the Dawid-Skene fit (see :func:`label_model_pullback`)."""
    k = beta.shape[1]
    state = _ds_state(patterns, counts, beta, k, smoothing)
    one_hot, c, post = state[0], state[1], state[5]
    n_e = one_hot.shape[1] * k

    def spread(v):  # A v_E + v_m for a batch of v (n, D), shape (n, patterns, K)
        n = len(v)
        v_e = v[:, :n_e].reshape(n, -1, k).transpose(1, 0, 2).reshape(-1, n * k)
        return ((one_hot @ v_e).reshape(-1, n, k).transpose(1, 0, 2)
                + v[:, None, n_e:])

    def jac_t(v):  # J_x^T v for a batch of v (n, D): (dr/dx)^T (c (A v_E + v_m))
        return _ds_adjoint(state, c[None, :, None] * spread(v))

    dim = n_e + k
    g = _ds_adjoint(state, grad)  # (n, D)
    if dim <= DENSE_SOLVE:  # row d of the stacked J_x^T e_d is row d of J_x
        jac = np.concatenate([jac_t(block)
                              for block in np.array_split(np.eye(dim), max(1, dim // 32))])
        lam = np.linalg.solve((np.eye(dim) - jac).T, g.T).T
    else:  # many parameters: GMRES on (I - J_x)^T lambda = g, one product per iteration
        op = scipy.sparse.linalg.LinearOperator(
            (dim, dim), matvec=lambda v: v - jac_t(v.reshape(1, -1))[0], dtype=float)
        lam = np.stack([scipy.sparse.linalg.gmres(op, row, rtol=1e-12, atol=0.0,
                                                  restart=200, maxiter=50)[0] for row in g])
    return (post[None] * spread(lam)).sum(axis=2)


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
    grad = np.asarray(grad, dtype=float)
    if name == "majority_vote":
        return _mv_pullback(patterns, np.asarray(counts, float), beta, grad)
    return _ds_pullback(patterns, counts, beta, grad)


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
