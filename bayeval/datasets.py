r"""Embedded demo data and simulators; seeded, no network.

Every function returns a :class:`sklearn.utils.Bunch` whose fields are named as the arguments of
the methods that use them (``scores``, ``labels``, ``y_pred``, ``y``, ``yhat``...), and the true
values of what the methods estimate where a simulator knows them.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from bayeval.validation import as_binary, as_choice, as_positive_int, as_seed

__all__ = ["breast_cancer", "calibrated_scores", "mask_labels", "noisy_judge", "weak_labels"]


def _rate(x, name: str) -> float:
    x = float(x)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {x}.")
    return x


def _size(n, name: str) -> int:
    return as_positive_int(n, name)


def calibrated_scores(n: int = 1000, *, a: float = 2.0, b: float = 2.0, threshold: float = 0.5,
                      random_seed=None) -> Bunch:
    r"""Perfectly calibrated scores: :math:`s_i \sim \mathrm{Beta}(a, b)`,
    :math:`y_i \sim \mathrm{Bernoulli}(s_i)`, :math:`\hat y_i = [s_i \ge t]`.

    Parameters
    ----------
    n : int
        Number of rows.
    a, b : float
        Positive Beta parameters of the scores.
    threshold : float
        Decision threshold :math:`t` of ``y_pred``.
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    sklearn.utils.Bunch
        ``scores`` (float, shape (n,)), ``labels`` and ``y_pred`` (int8 0/1).

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer or ``a``, ``b`` are not positive.

    Examples
    --------
    >>> d = calibrated_scores(1000, random_seed=0)
    >>> d.scores[:3].round(3), d.labels[:3], d.y_pred[:3]
    (array([0.41 , 0.211, 0.481]), array([1, 1, 0], dtype=int8), array([0, 0, 0], dtype=int8))
    >>> float(d.labels.mean())  # E[y] = E[s] = a / (a + b) = 0.5
    0.517
    """
    n = _size(n, "n")
    if a <= 0 or b <= 0:
        raise ValueError(f"a and b must be positive Beta parameters, got a={a}, b={b}.")
    rng = as_seed(random_seed)
    scores = rng.beta(a, b, size=n)
    labels = (rng.random(n) < scores).astype(np.int8)
    return Bunch(scores=scores, labels=labels, y_pred=(scores >= threshold).astype(np.int8))


def noisy_judge(n_labelled: int = 200, n_unlabelled: int = 5000, *, prevalence: float = 0.6,
                sensitivity: float = 0.9, specificity: float = 0.8, random_seed=None) -> Bunch:
    r"""A judge with known misclassification rates labels everything; humans label a few.

    :math:`Y \sim \mathrm{Bernoulli}(\theta)`; the judge says 1 with probability :math:`q_1`
    (sensitivity) when :math:`Y = 1` and :math:`1 - q_0` (one minus specificity) when
    :math:`Y = 0`, so :math:`P(\hat Y=1)=\theta q_1+(1-\theta)(1-q_0)`.

    Parameters
    ----------
    n_labelled, n_unlabelled : int
        Rows labelled by humans and by the judge, and rows labelled by the judge only.
    prevalence : float
        :math:`\theta=P(Y=1)`.
    sensitivity, specificity : float
        :math:`q_1=P(\hat Y=1\mid Y=1)` and :math:`q_0=P(\hat Y=0\mid Y=0)`.
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    sklearn.utils.Bunch
        ``y`` and ``yhat`` (the labelled rows), ``yhat_unlabeled``, the truth ``theta`` (the
        prevalence) and ``theta_sample`` (the mean of all simulated labels), ``sensitivity``
        and ``specificity``.

    Examples
    --------
    >>> d = noisy_judge(200, 5000, random_seed=0)
    >>> d.y.size, d.yhat.size, d.yhat_unlabeled.size
    (200, 200, 5000)
    >>> float(d.yhat_unlabeled.mean())  # 0.6 * 0.9 + 0.4 * 0.2 = 0.62
    0.6248
    >>> round(d.theta_sample, 4)
    0.6044
    """
    n_l, n_u = _size(n_labelled, "n_labelled"), _size(n_unlabelled, "n_unlabelled")
    theta, q1, q0 = (_rate(prevalence, "prevalence"), _rate(sensitivity, "sensitivity"),
                     _rate(specificity, "specificity"))
    rng = as_seed(random_seed)
    y = (rng.random(n_l + n_u) < theta).astype(np.int8)
    says_one = np.where(y == 1, q1, 1 - q0)
    yhat = (rng.random(n_l + n_u) < says_one).astype(np.int8)
    return Bunch(y=y[:n_l], yhat=yhat[:n_l], yhat_unlabeled=yhat[n_l:], theta=theta,
                 theta_sample=float(y.mean()), sensitivity=q1, specificity=q0)


def weak_labels(n: int = 2000, *, prior=(0.5, 0.5), accuracy=(0.85, 0.75, 0.65),
                propensity=(0.7, 0.5, 0.4), separation: float = 1.0, min_votes: int = 0,
                random_seed=None) -> Bunch:
    r"""Labelling functions from a Dawid–Skene model, with features and a linear classifier.

    :math:`Y \sim \mathrm{Cat}(\pi)`; labelling function :math:`j` votes with probability
    ``propensity[j]`` (else abstains, -1) and, when it votes, is right with probability
    ``accuracy[j]`` and otherwise picks another class uniformly. The oracle label model
    :math:`P(Y \mid Z)` follows by Bayes' rule. Features :math:`X \mid Y \sim N(s\,e_Y, I)` give
    a dependence of :math:`X` and :math:`Y` beyond :math:`Z`; ``y_pred`` is the Bayes rule on
    :math:`X` alone. With ``min_votes`` the votes of items with fewer votes are drawn again;
    voting does not depend on :math:`Y`, so :math:`P(Y \mid Z)` is unchanged.

    Parameters
    ----------
    n : int
        Number of items.
    prior : sequence of float
        Class probabilities :math:`\pi` (two or more, summing to 1).
    accuracy, propensity : sequence of float
        Per labelling function: probability of a right vote, and of voting at all.
    separation : float
        Distance :math:`s` of the class means of the features.
    min_votes : int
        Least number of votes per item (0 to k).
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    sklearn.utils.Bunch
        ``labels``, ``weak_labels`` (n x k, -1 = abstain), ``X`` (n x classes), ``y_pred`` and
        ``p_y_given_z`` (n x classes, the oracle label model).

    Raises
    ------
    ValueError
        For a prior that is not a probability vector, rates outside [0, 1], mismatched
        ``accuracy`` and ``propensity``, or ``min_votes`` out of range.

    Examples
    --------
    >>> d = weak_labels(2000, random_seed=0)
    >>> d.weak_labels[:3]
    array([[-1,  1, -1],
           [ 0,  1, -1],
           [-1,  0,  1]])
    >>> (d.weak_labels >= 0).mean(axis=0)  # propensities 0.7, 0.5, 0.4
    array([0.7085, 0.492 , 0.4185])
    >>> d.p_y_given_z[:2].round(3)  # P(Y | Z) of the first two items
    array([[0.25 , 0.75 ],
           [0.654, 0.346]])
    """
    n = _size(n, "n")
    pi = np.asarray(prior, dtype=float)
    if pi.ndim != 1 or pi.size < 2 or (pi < 0).any() or not np.isclose(pi.sum(), 1.0):
        raise ValueError(f"prior must be class probabilities summing to 1, got {prior!r}.")
    acc, prop = np.asarray(accuracy, float), np.asarray(propensity, float)
    if acc.shape != prop.shape or acc.ndim != 1:
        raise ValueError("accuracy and propensity must be 1-D with one value per labelling "
                         f"function; got shapes {acc.shape} and {prop.shape}.")
    for name, v in (("accuracy", acc), ("propensity", prop)):
        if ((v < 0) | (v > 1)).any():
            raise ValueError(f"{name} must lie in [0, 1], got {v.tolist()}.")
    rng = as_seed(random_seed)
    c, k = pi.size, acc.size
    y = rng.choice(c, size=n, p=pi)
    if not 0 <= min_votes <= k:
        raise ValueError(f"min_votes must be between 0 and the {k} labelling functions, "
                         f"got {min_votes}.")
    votes = rng.random((n, k)) < prop
    while (few := votes.sum(axis=1) < min_votes).any():
        votes[few] = rng.random((int(few.sum()), k)) < prop
    right = rng.random((n, k)) < acc
    other = (y[:, None] + rng.integers(1, c, size=(n, k))) % c
    z = np.where(votes, np.where(right, y[:, None], other), -1)
    # Bayes: P(Z | Y = c) = prod_j of 1 - l_j (abstain), l_j acc_j (right), l_j (1 - acc_j)/(c - 1);
    # a rate of 0 or 1 gives log 0 = -inf only for events that cannot happen
    with np.errstate(divide="ignore"):
        log_lik = np.tile(np.log(pi), (n, 1))
        for j in range(k):
            voted = z[:, j] >= 0
            hit = z[:, j][:, None] == np.arange(c)[None, :]
            lj = np.where(hit, np.log(prop[j] * acc[j]),
                          np.log(prop[j] * (1 - acc[j]) / (c - 1)))
            log_lik += np.where(voted[:, None], lj, np.log1p(-prop[j]))
    post = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    X = rng.normal(size=(n, c)) + separation * np.eye(c)[y]
    y_pred = np.argmax(X + np.log(pi) / max(separation, 1e-12), axis=1)
    return Bunch(labels=y, weak_labels=z, X=X, y_pred=y_pred, p_y_given_z=post)


def mask_labels(labels, *, p_m: float, mechanism: str = "mcar", eta: float | None = None,
                random_seed=None) -> Bunch:
    r"""Hide a fraction ``p_m`` of the labels (NaN), at random or depending on the label.

    ``mechanism="mcar"``: a uniformly random subset of :math:`\mathrm{round}(p_m n)` rows.
    ``mechanism="mnar"`` (label-dependent, the missing-labels paper's class-imbalanced masking): a
    subset of the same size of which a fraction ``eta`` are positives, drawn without
    replacement; when a class has too few rows its count is capped and the rest is filled from
    the other class.

    Parameters
    ----------
    labels : array-like, shape (n,)
        Binary labels.
    p_m : float
        Fraction of labels to hide, in [0, 1].
    mechanism : {"mcar", "mnar"}
        Missing completely at random, or label-dependent.
    eta : float, optional
        With ``"mnar"`` only: the fraction of positives among the hidden labels.
    random_seed : None, int or numpy.random.Generator

    Returns
    -------
    sklearn.utils.Bunch
        ``labels`` (float, NaN = missing), ``mask`` (True = missing) and ``eta`` (the achieved
        fraction of positives among the masked rows).

    Raises
    ------
    ValueError
        For non-binary labels, rates outside [0, 1], or ``eta`` given with ``"mcar"`` or
        missing with ``"mnar"``.

    Examples
    --------
    Hide 4 of 10 labels, 3 of them positives:

    >>> d = mask_labels([1, 0, 1, 1, 0, 0, 1, 0, 1, 1], p_m=0.4, mechanism="mnar", eta=0.75,
    ...                 random_seed=0)
    >>> d.labels
    array([ 1., nan,  1.,  1.,  0.,  0., nan,  0., nan, nan])
    >>> d.eta
    0.75
    """
    y = as_binary(labels, "labels")
    p_m = _rate(p_m, "p_m")
    mechanism = as_choice(mechanism, "mechanism", ("mcar", "mnar"))
    rng = as_seed(random_seed)
    n_mask = round(p_m * y.size)
    if mechanism == "mcar":
        if eta is not None:
            raise ValueError("eta is for mechanism='mnar'; leave it None with 'mcar'.")
        idx = rng.choice(y.size, size=n_mask, replace=False)
    else:
        if eta is None:
            raise ValueError("mechanism='mnar' needs eta, the fraction of positives among the "
                             "masked labels.")
        eta = _rate(eta, "eta")
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        n_pos = min(round(eta * n_mask), pos.size)
        n_neg = min(n_mask - n_pos, neg.size)
        n_pos = min(n_mask - n_neg, pos.size)
        idx = np.concatenate([rng.choice(pos, n_pos, replace=False),
                              rng.choice(neg, n_neg, replace=False)])
    mask = np.zeros(y.size, dtype=bool)
    mask[idx] = True
    out = y.astype(float)
    out[mask] = np.nan
    achieved = float(y[mask].mean()) if mask.any() else float("nan")
    return Bunch(labels=out, mask=mask, eta=achieved)


def breast_cancer(*, test_size: float = 0.5, random_seed: int = 0) -> Bunch:
    """Logistic regression trained on scikit-learn's bundled breast-cancer data (no download).

    A standardised, L2-penalised (C = 0.1) logistic regression is fitted on a stratified half
    of the 569 cases; the other half is returned.

    Parameters
    ----------
    test_size : float
        Fraction of the cases held out.
    random_seed : int
        Seed of the split.

    Returns
    -------
    sklearn.utils.Bunch
        For the held-out split: ``scores`` (P(malignant)), ``y_pred`` (scores >= 0.5),
        ``labels`` (1 = malignant), ``X`` and ``feature_names``; and the fitted ``classifier``
        (a scikit-learn pipeline).

    Examples
    --------
    >>> d = breast_cancer()
    >>> d.X.shape, round(float(d.labels.mean()), 3)
    ((285, 30), 0.372)
    >>> round(float((d.y_pred == d.labels).mean()), 3)  # accuracy
    0.965
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    data = load_breast_cancer()
    y = 1 - data.target  # scikit-learn codes malignant as 0
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, y, test_size=test_size, random_state=random_seed, stratify=y)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=1000))
    clf.fit(X_train, y_train)
    scores = clf.predict_proba(X_test)[:, 1]
    return Bunch(scores=scores, y_pred=(scores >= 0.5).astype(np.int8),
                 labels=y_test.astype(np.int8), X=X_test, feature_names=list(data.feature_names),
                 classifier=clf)
