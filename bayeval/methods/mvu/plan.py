r"""What to measure first: the value of revealing each missing feature, and a greedy plan.

For a row with missing features :math:`M`, revealing a subset :math:`S \subseteq M` replaces
the MVU by the law of :math:`\pi(x_O, x_S, X_{M \setminus S})` given the revealed
:math:`x_S \sim p(x_S \mid x_O)`. With :math:`y = y_\mathrm{hard}` now and
:math:`y_S, c_S` the hard decision and confidence once :math:`x_S` is known,

.. math::

    p_\mathrm{flip}(S) = P(y_S \ne y), \qquad
    \mathrm{gain}(S) = \mathrm{E}[c_S] - c_\mathrm{hard}

(the expected reduction of :math:`1 - c_\mathrm{hard}`). The greedy plan adds, one at a time,
the feature most likely to change the decision per cost, the largest
:math:`(p_\mathrm{flip}(S \cup \{i\}) - p_\mathrm{flip}(S)) / \mathrm{cost}_i` (ties: the
largest gain per cost), until :math:`c_\mathrm{hard} + \mathrm{gain}(S)` reaches the level (or
everything is planned). For a binary linear classifier both criteria rank the features alike
(both grow with :math:`\tau_S`); for others they can differ: a feature may flip the decision
often yet leave it uncertain.

Features measured together at one cost (a blood panel, a sensor) form a **group** :math:`G`
(:func:`plan_units`): the plan's steps are then groups and the features of no group, revealing
at once the group's missing features :math:`G \cap M`, so :math:`p_\mathrm{flip}(G) = P(y_{G
\cap M} \ne y)` and a step adds :math:`S \to S \cup (G \cap M)` at the group's cost. A group
costs its cost in a row where at least one of its features is missing; one with none missing
is not a candidate there.

* **Binary linear classifier, Gaussian imputation** (exact): the logit is
  :math:`z \sim N(m, s^2)` (:math:`m` shifted by :math:`\log(w_0/w_1)` with class weights);
  revealing :math:`S` splits its variance into the part explained by :math:`x_S`,
  :math:`\tau_S^2 = c_S^\top \Sigma_{SS}^{-1} c_S` (:math:`c = \Sigma_{M|O} w`), and the rest
  :math:`s_S^2 = s^2 - \tau_S^2`. The new logit mean is :math:`N(m, \tau_S^2)`, so

  .. math::

      p_\mathrm{flip}(S) = \Phi(-|m| / \tau_S), \qquad
      \mathrm{E}[c_S] = \mathrm{E}\,\Phi(|m'|/s_S) = 1 - 2\,T(m/s, s_S/\tau_S)

  with Owen's :math:`T` function (the bivariate normal probabilities of
  :math:`\mathrm{E}[\Phi(m'/s_S) 1(m' > 0)]` and its mirror, whose Owen's-T terms cancel but
  one).
* **Any other classifier**: the same imputations. ``outer`` draws :math:`x_S^{(u)}` and ``inner``
  draws :math:`x^{(t)}` of the row's conditional Gaussian; conditioning by kriging,
  :math:`x^{(u,t)} = x^{(t)} + \Sigma_{\cdot S}\Sigma_{SS}^{-1}(x_S^{(u)} - x_S^{(t)})` has the
  law of :math:`X \mid x_O, x_S^{(u)}`, so the inner votes give :math:`y_S` and :math:`c_S` at
  every outer value (quasi-Monte-Carlo points for both).
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import special

from bayeval.methods.mvu.estimators import (
    GaussianImputer,
    LinearClassifier,
    as_classifier,
    classifier_of,
)

__all__ = ["STATE", "CopulaPlanner", "FeaturePlanner", "plan_units"]

#: the group of a saved result that rebuilds its planner (:meth:`FeaturePlanner.to_dataset`)
STATE = "imputation"

#: outer (revealed values) and inner (the rest) imputations per candidate set, non-linear case
OUTER, INNER = 64, 256


class FeaturePlanner:
    r"""Flip probabilities, expected gains and greedy plans of the rows of one MVU.

    Built by :func:`~bayeval.methods.mvu.api.mvu` under Gaussian imputation and kept by its
    result for :meth:`~bayeval.methods.mvu.result.MVUEvaluation.decide`,
    :meth:`~bayeval.methods.mvu.result.MVUEvaluation.bayes_actions` and
    :func:`~bayeval.methods.mvu.mnar.delta_sensitivity`; saved as the group ``imputation``
    (:meth:`to_dataset`: the rows, the imputer's parameters and a linear classifier's
    coefficients) and rebuilt from it (:meth:`from_dataset`; another classifier is not saved).

    Parameters
    ----------
    predict : callable
        ``X -> (n, K)`` probabilities.
    imputer : GaussianImputer
    x, mask : array (n, d)
        The rows and their missing entries.
    y_hard, c_hard : array (n,)
        The current decisions (class positions) and hard confidences.
    linear : (W, b) or None
        A linear classifier's coefficients (the exact binary path; kept as ``logit_parts``).
    weights : array (K,) or None
        Class weights of the decision.
    classes : array (K,), optional
        The classifier's class labels (``classes``; default the positions).
    random_seed : int or Generator, optional

    Examples
    --------
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> imp = GaussianImputer([0.0, 0.0, 0.0], [[1, 0.5, 0], [0.5, 1, 0], [0, 0, 1]])
    >>> clf = LinearClassifier([[1.0, 1.0, 0.2]], [0.0])
    >>> planner = FeaturePlanner(clf.predict_proba, imp, [[np.nan, 0.3, np.nan]],
    ...                          [[True, False, True]], [1], [0.7], linear=(clf.coef_, None))
    >>> flip, gain = planner.reveal(0, [[0], [2]])
    >>> flip.round(3).tolist(), bool(gain[0] > gain[1])  # x1 matters far more than x3
    ([0.302, 0.012], True)
    """

    def __init__(self, predict, imputer: GaussianImputer, x, mask, y_hard, c_hard, *,
                 linear=None, weights=None, classes=None, random_seed=None):
        self.predict, self.imputer, self.logit_parts = predict, imputer, linear
        self.x, self.mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=bool)
        self.y, self.c = np.asarray(y_hard), np.asarray(c_hard, dtype=float)
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        self.linear = linear if linear is not None and np.atleast_2d(linear[0]).shape[0] == 1 \
            else None
        self.rng = np.random.default_rng(random_seed)
        self.classes = None if classes is None else np.asarray(classes)

    def to_dataset(self, instances, features) -> xr.Dataset:
        r"""The planner's state without its classifier: the rows ``x`` (NaN where missing,
        unless a mask hid the value), the decisions ``y_position`` (class positions), the
        imputer's ``mean`` and ``cov`` (with ``mnar_mean``, ``mnar_sd`` and, for a mapping,
        ``mnar_named`` of an MNAR shift), a linear classifier's ``coef`` and ``intercept``, and
        the class labels ``class_label``.

        Examples
        --------
        >>> imp = GaussianImputer([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
        >>> clf = LinearClassifier([[1.0, 1.0]], [0.0])
        >>> planner = FeaturePlanner(clf.predict_proba, imp, [[np.nan, 0.3]], [[True, False]],
        ...                          [1], [0.7], linear=(clf.coef_, clf.intercept_))
        >>> sorted(planner.to_dataset(["r1"], ["a", "b"]).data_vars)
        ['coef', 'cov', 'intercept', 'mean', 'x', 'y_position']
        """
        imp = self.imputer
        ds = xr.Dataset({"x": (("instance", "feature"), self.x),
                         "y_position": ("instance", np.asarray(self.y, dtype=np.int64)),
                         "mean": ("feature", imp.mean),
                         "cov": (("feature", "feature_other"), imp.cov)},
                        coords={"instance": instances, "feature": features})
        if hasattr(imp, "delta"):  # an MNAR shift
            ds["mnar_mean"], ds["mnar_sd"] = ("feature", imp.delta), ("feature", imp.tau)
            if imp.named is not None:
                ds["mnar_named"] = ("feature", imp.named)
        if self.logit_parts is not None:
            w, b = self.logit_parts
            ds["coef"] = (("logit", "feature"), np.atleast_2d(w).astype(float))
            ds["intercept"] = ("logit", np.atleast_1d(b).astype(float))
        if self.classes is not None:
            ds["class_label"] = ("class", self.classes)
        return ds

    @classmethod
    def from_dataset(cls, ds: xr.Dataset, missing, c_hard, n_classes: int, *, weights=None,
                     classifier=None, random_seed=None, what: str = "this") -> FeaturePlanner:
        """The planner of a saved result (:meth:`to_dataset`), its rows' ``missing`` mask,
        ``c_hard`` and number of classes; a non-linear classifier must be given.

        Raises
        ------
        ValueError
            A non-linear run without ``classifier``, or a classifier with another number of
            classes.

        Examples
        --------
        >>> imp = GaussianImputer([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]])
        >>> clf = LinearClassifier([[1.0, 1.0]], [0.0])
        >>> planner = FeaturePlanner(clf.predict_proba, imp, [[np.nan, 0.3]], [[True, False]],
        ...                          [1], [0.7], linear=(clf.coef_, clf.intercept_))
        >>> back = FeaturePlanner.from_dataset(planner.to_dataset([0], [0, 1]), [[True, False]],
        ...                                    [0.7], 2)
        >>> bool(np.array_equal(back.reveal(0, [[0]]), planner.reveal(0, [[0]])))
        True
        """
        from bayeval.methods.mvu.mnar import MNARGaussianImputer

        imputer = GaussianImputer(ds["mean"].values, ds["cov"].values)
        if "mnar_mean" in ds:
            mean, sd = ds["mnar_mean"].values, ds["mnar_sd"].values
            shift = ((float(mean[0]), float(sd[0])) if "mnar_named" not in ds else
                     {int(i): (float(mean[i]), float(sd[i]))
                      for i in np.flatnonzero(ds["mnar_named"].values)})
            imputer = MNARGaussianImputer.shifting(imputer, shift)
        classes = ds["class_label"].values if "class_label" in ds else None
        linear = (ds["coef"].values, ds["intercept"].values) if "coef" in ds else None
        if classifier is not None:
            fitted = getattr(classifier_of(classifier), "feature_names_in_", None)
            predict = as_classifier(classifier, None if fitted is None else list(fitted))
            got = predict(np.nan_to_num(ds["x"].values[:1])).shape[1]
            if got != n_classes:
                raise ValueError(f"classifier gives {got} class probabilities; the run's "
                                 f"classifier gave {n_classes}.")
        elif linear is not None:
            predict = LinearClassifier(*linear).predict_proba
        else:
            raise ValueError(f"{what} needs the run's classifier, which is not saved (only a "
                             "linear classifier's coefficients are): pass classifier=<the "
                             "fitted classifier, or its predict_proba> of the run.")
        return cls(predict, imputer, ds["x"].values, missing, ds["y_position"].values, c_hard,
                   linear=linear, weights=weights, classes=classes, random_seed=random_seed)

    def _moments(self, row: int):
        """Conditional mean (d,) and covariance (d, d) of the row's features."""
        mean, cov = self.imputer.conditional(self.x[row:row + 1], self.mask[row:row + 1])
        return mean[0], cov[0]

    def reveal(self, row: int, sets) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`p_\mathrm{flip}(S)` and :math:`\mathrm{gain}(S)` of each set of feature
        positions in ``sets`` (lists of missing features) for one row.

        Returns
        -------
        p_flip, gain : numpy.ndarray, shape (len(sets),)
        """
        mean, cov = self._moments(row)
        if self.linear is not None:
            return self._exact(mean, cov, sets)
        return self._draws(row, mean, cov, sets)

    def _exact(self, mean, cov, sets):
        w = np.atleast_2d(self.linear[0])[0]
        m = mean @ w + (0.0 if self.linear[1] is None else np.atleast_1d(self.linear[1])[0])
        if self.weights is not None:
            m -= np.log(self.weights[0] / self.weights[1])
        c = cov @ w
        s = np.sqrt(max(float(w @ c), 0.0))
        flip, gain = np.zeros(len(sets)), np.zeros(len(sets))
        missing = np.flatnonzero(np.diag(cov) > 0)
        for i, subset in enumerate(sets):
            idx = np.asarray(subset)
            tau2 = float(c[idx] @ np.linalg.lstsq(cov[np.ix_(idx, idx)], c[idx], rcond=None)[0])
            tau = np.sqrt(min(max(tau2, 0.0), s**2))
            if s == 0 or tau <= 1e-12 * s:
                continue
            # everything revealed leaves no variance (not the square root of a rounding error)
            rest = 0.0 if np.isin(missing, idx).all() else np.sqrt(max(s**2 - tau**2, 0.0))
            tau = s if rest == 0.0 else tau
            flip[i] = special.ndtr(-abs(m) / tau)
            gain[i] = 1 - 2 * special.owens_t(m / s, rest / tau) - special.ndtr(abs(m) / s)
        return flip, gain

    def _draws(self, row, mean, cov, sets):
        x, m = self.x[row:row + 1], self.mask[row:row + 1]
        inner = self.imputer.sample(x, m, INNER, self.rng, qmc=True)[0]  # (T, d)
        outer = self.imputer.sample(x, m, OUTER, self.rng, qmc=True)[0]  # (U, d)
        flip, after = np.zeros(len(sets)), np.zeros(len(sets))
        for i, subset in enumerate(sets):
            idx = np.asarray(subset)
            gain_matrix = np.linalg.lstsq(cov[np.ix_(idx, idx)], cov[idx], rcond=None)[0]
            shift = outer[:, None, idx] - inner[None, :, idx]  # (U, T, |S|)
            flip[i], after[i] = self._revealed(row, inner[None] + shift @ gain_matrix)
        return flip, after - self.c[row]

    def _revealed(self, row: int, z: np.ndarray) -> tuple[float, float]:
        """p_flip and E[c_S] from inner imputations z (U, T, d) at every outer value."""
        phi = self.predict(z.reshape(-1, z.shape[-1])).reshape(*z.shape[:2], -1)
        votes = np.argmax(phi * (1.0 if self.weights is None else self.weights), axis=-1)
        share = (votes[..., None] == np.arange(phi.shape[-1])).mean(axis=1)  # (U, K)
        return np.mean(np.argmax(share, -1) != self.y[row]), share.max(-1).mean()

    def sample(self, x, mask, draws: int, rng) -> np.ndarray:
        """MVU imputations (n, S, d) of rows (quasi-Monte-Carlo points)."""
        return self.imputer.sample(x, mask, draws, rng, qmc=True)

    def plan(self, row: int, costs: np.ndarray, level: float, units=None):
        r"""Greedy plan of one row: the missing features (or groups) in the order to measure them.

        Parameters
        ----------
        row : int
        costs : array
            The cost of each unit.
        level : float
            Plan until :math:`c_\mathrm{hard} + \mathrm{gain}(S)` reaches it.
        units : list of lists of int, optional
            The features measured together (:func:`plan_units`); default each feature alone.

        Returns
        -------
        order : list of int
            Units, until the expected hard confidence reaches ``level``.
        first : (p_flip, gain) of every unit with a missing feature revealed alone, dict by
            unit.
        expected : float
            The expected hard confidence once the plan is carried out.
        """
        units = [[i] for i in range(self.mask.shape[1])] if units is None else units
        missing = [[i for i in unit if self.mask[row, i]] for unit in units]
        left = [k for k, unit in enumerate(missing) if unit]
        flip, gain = self.reveal(row, [missing[k] for k in left])
        first = {k: (flip[j], gain[j]) for j, k in enumerate(left)}
        order, known, now = [], [], np.zeros(2)  # p_flip and gain of the planned set
        values = np.stack([flip, gain])
        while left and self.c[row] + now[1] < level:
            step = (values - now[:, None]) / costs[left]
            best = int(np.lexsort((step[1], step[0]))[-1])  # flips first, then gains
            order.append(left.pop(best))
            known += missing[order[-1]]
            now = values[:, best]
            if left:
                values = np.stack(self.reveal(row, [[*known, *missing[k]] for k in left]))
        return order, first, self.c[row] + now[1]


def plan_units(groups, names) -> tuple[list, list[list[int]]]:
    """The units of a plan: each group of features measured together, and every feature of no
    group alone, in the order of their first feature.

    Parameters
    ----------
    groups : dict or None
        ``{group name: [feature names]}``; every feature in at most one group.
    names : sequence
        The features' names.

    Returns
    -------
    labels : list
        Each unit's name: the group's, or the feature's.
    members : list of list of int
        Each unit's feature positions.

    Raises
    ------
    ValueError
        ``groups`` not a dict of non-empty lists of known features, a feature in two groups,
        or a group named like a feature outside it.

    Examples
    --------
    >>> plan_units({"panel": ["b", "d"]}, ["a", "b", "c", "d"])
    (['a', 'panel', 'c'], [[0], [1, 3], [2]])
    """
    names = list(names)
    position = {name: i for i, name in enumerate(names)}
    if groups is None:
        return names, [[i] for i in range(len(names))]
    if not isinstance(groups, dict):
        raise ValueError("groups must be a dict {group name: [feature names]}, got "
                         f"{type(groups).__name__}.")
    owner, shown = {}, [n.item() if isinstance(n, np.generic) else n for n in names]
    for label, members in groups.items():
        if isinstance(members, str) or not np.iterable(members) or not len(members):
            raise ValueError(f"groups must map each group to a non-empty list of feature names; "
                             f"group {label!r} has {members!r}.")
        for name in members:
            if name not in position:
                raise ValueError(f"groups: group {label!r} names {name!r}, which is not a "
                                 f"feature; the features are {shown}.")
            if name in owner:
                raise ValueError(f"groups: feature {name!r} is in groups {owner[name]!r} and "
                                 f"{label!r}; a feature belongs to at most one group.")
            owner[name] = label
    for label in groups:
        if label in position and label not in owner:
            raise ValueError(f"groups: group {label!r} has the name of a feature outside it.")
    firsts = {min(position[n] for n in members): label for label, members in groups.items()}
    labels, units = [], []
    for i, name in enumerate(names):
        if i in firsts:
            labels.append(firsts[i])
            units.append(sorted(position[n] for n in groups[firsts[i]]))
        elif name not in owner:
            labels.append(name)
            units.append([i])
    return labels, units


class CopulaPlanner(FeaturePlanner):
    r""":class:`FeaturePlanner` of a :class:`~bayeval.methods.mvu.copula.CopulaImputer` run:
    the values of the revealed features :math:`x_S^{(u)}` are ``outer`` draws of the row's
    conditional law, and the rest is imputed again given :math:`x_O` and :math:`x_S^{(u)}`
    (``inner`` draws each), so that :math:`y_S` and :math:`c_S` are the votes of the copula's
    law of :math:`X_{M \setminus S} \mid x_O, x_S^{(u)}` (independent draws; kept in memory,
    not saved).

    Examples
    --------
    >>> from bayeval.methods.mvu.copula import CopulaImputer
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> corr = [[1.0, 0.8, 0.0], [0.8, 1.0, 0.0], [0.0, 0.0, 1.0]]
    >>> imp = CopulaImputer(corr, [([0, 1], [0.5, 0.5])] * 3, ["ordinal"] * 3)
    >>> clf = LinearClassifier([[2.0, 2.0, 0.2]], [-2.0])
    >>> planner = CopulaPlanner(clf.predict_proba, imp, [[np.nan, 1.0, np.nan]],
    ...                         [[True, False, True]], [1], [0.6], random_seed=0)
    >>> flip, gain = planner.reveal(0, [[0], [2]])
    >>> bool(flip[0] > flip[1])  # the first feature decides, the third hardly matters
    True
    """

    def reveal(self, row: int, sets) -> tuple[np.ndarray, np.ndarray]:
        x, m = self.x[row:row + 1], self.mask[row:row + 1]
        outer = self.imputer.sample(x, m, OUTER, self.rng)[0]  # (U, d)
        flip, after = np.zeros(len(sets)), np.zeros(len(sets))
        for i, subset in enumerate(sets):
            rest = np.repeat(m, OUTER, axis=0)
            rest[:, np.asarray(subset)] = False
            z = self.imputer.sample(np.where(rest, np.nan, outer), rest, INNER, self.rng)
            flip[i], after[i] = self._revealed(row, z)
        return flip, after - self.c[row]

    def sample(self, x, mask, draws: int, rng) -> np.ndarray:
        """MVU imputations (n, S, d) of rows (independent draws)."""
        return self.imputer.sample(x, mask, draws, rng)
