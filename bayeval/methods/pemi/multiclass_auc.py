r"""PEMI with K classes: each class's one-vs-rest ROC-AUC and the macro average.

Class :math:`k` against the rest is binary PEMI's ROC-AUC on the class's scores
:math:`s_{\cdot k}`, with the known labels :math:`\mathbb 1\{y_i=k\}` and the missing ones
Bernoulli(:math:`p_{ik}`): its normal law from the exact moments of the Mann-Whitney count on
the completed rows, per component of the map's posterior
(:func:`bayeval.methods.pemi.mixture.component_moments`), mixed over the components. The macro
average :math:`\frac1K\sum_k\mathrm{AUC}_k` (scikit-learn's ``roc_auc_score(y, s,
multi_class="ovr", average="macro")``) has, per component, the mean of the classes' means and
the variance :math:`\frac1{K^2}\sum_{k,l}\operatorname{Cov}(\mathrm{AUC}_k,\mathrm{AUC}_l)`,
the covariances by the delta method on the counts' exact second moments, a known row counting
as a label of probability one (:func:`bayeval.multiclass_laws.ovr_auc_moments`); the normal
laws are mixed over the components as PEMI's other averages are.
"""

from __future__ import annotations

import numpy as np

from bayeval.methods.pemi.fast import Options
from bayeval.methods.pemi.mixture import choose, component_moments, normal_of
from bayeval.multiclass import ovr_auc_value
from bayeval.multiclass_laws import ovr_auc_terms

__all__ = ["AUC_METRICS", "auc_rows", "auc_values"]

AUC_METRICS = ("roc_auc", "macro_roc_auc")
"""Each class's one-vs-rest ROC-AUC and their macro average."""


def auc_values(codes: np.ndarray, scores: np.ndarray, metric: str,
               zero_division: float) -> np.ndarray:
    """ROC-AUC of completed labels ``codes`` (..., n): per class (..., K), or the macro
    average (...,) (with ``zero_division=nan`` of the defined classes).

    Examples
    --------
    >>> s = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1]])
    >>> auc_values(np.array([[0, 1, 2, 1], [0, 0, 2, 1]]), s, "macro_roc_auc", 0.0).round(4)
    array([1.    , 0.8056])

    (scikit-learn's ``roc_auc_score(y, s, multi_class="ovr", average="macro")`` of each row.)
    """
    per = ovr_auc_value(codes, scores, zero_division)
    if metric == "roc_auc":
        return per
    with np.errstate(invalid="ignore"):
        return np.nanmean(per, axis=-1) if np.isnan(zero_division) else per.mean(axis=-1)


def auc_rows(rows, comps, metrics, ci_prob: float, ci_kind: str,
             opts: Options) -> tuple[dict, list[str]]:
    r"""The rows (mean, sd, lower, upper, interval_mass, p_undefined) of the ROC-AUCs among
    ``metrics``, keyed by (metric, class code), and notes (module docstring).

    Parameters
    ----------
    rows : ClassRows
    comps : ClassComponents
        The class probabilities of the missing rows per component, with weights.
    metrics : sequence of str
    ci_prob, ci_kind : float, str
    opts : Options

    Returns
    -------
    dict, list of str

    Examples
    --------
    >>> from bayeval.methods.pemi.multiclass import ClassComponents, ClassRows
    >>> s = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1]] * 5)
    >>> rows = ClassRows(s, s.argmax(axis=1), np.array([0, 1, 2, -1] * 5))
    >>> comps = ClassComponents(np.ones(1), lambda i: np.tile(s[3], (i.size, 5, 1)))
    >>> out, _ = auc_rows(rows, comps, ["roc_auc", "macro_roc_auc"], 0.95, "eti", Options())
    >>> sorted(out), round(out["macro_roc_auc", 0][0], 3)
    ([('macro_roc_auc', 0), ('roc_auc', 0), ('roc_auc', 1), ('roc_auc', 2)], 0.964)
    """
    wanted = [m for m in AUC_METRICS if m in metrics]
    if not wanted:
        return {}, []
    k = rows.k
    moments = []
    for c in range(k):
        rows_b, pos, col = rows.binary(c)
        moments.append(component_moments(rows_b, comps.of(pos, col), ("roc_auc",),
                                         opts)["roc_auc"])
    out, notes = {}, []
    candidates = []
    if "roc_auc" in wanted:
        candidates += [(("roc_auc", c), moments[c]) for c in range(k)]
    if "macro_roc_auc" in wanted:
        means = np.stack([m[0] for m in moments], axis=1)  # (S, K)
        variances = np.stack([m[1] for m in moments], axis=1)
        between = np.empty(comps.size)
        known = np.zeros((rows.n, k))
        known[~rows.missing, rows.labels[~rows.missing]] = 1.0
        for index, p in comps.chunks(rows.n * k):
            for j, s in enumerate(index):
                full = known.copy()
                full[rows.mis] = p[j]
                cov = ovr_auc_terms(rows.scores, full).cov
                between[s] = cov.sum() - np.trace(cov)
        with np.errstate(invalid="ignore"):
            mean = (np.nanmean(means, axis=1) if np.isnan(opts.zero_division)
                    else means.mean(axis=1))
        var = (variances.sum(axis=1) + between) / k**2
        candidates.append((("macro_roc_auc", 0), (mean, var, np.full(comps.size, np.nan))))
    for key, triple in candidates:
        normal = normal_of(triple, comps.weights, ci_prob)
        row, note, _ = choose(key[0], normal, None, ci_prob=ci_prob, ci_kind=ci_kind,
                              fallback=False)
        if note:
            notes.append(note if key[0] == "macro_roc_auc" else f"class {key[1]}: {note}")
        out[key] = row
    return out, notes
