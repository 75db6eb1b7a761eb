r"""Bounds that do not collapse when the weak labels contradict Dawid–Skene.

Dawid–Skene assumes labelling functions independent given the true class. Copies of a function,
or functions that share their errors, break it: the fit counts their votes twice, its
:math:`P(Y \mid Z)` is overconfident, and the bounds, sharp for that label model, collapse
around a wrong value with intervals that look precise. :func:`misfit_check` tests the fit
against the weak labels (:func:`~bayeval.methods.bounds.label_models.dawid_skene_fit`) and,
where it fails, reports the bounds under the set of label models that fit them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy

from bayeval.methods.bounds.fast import exact_bounds
from bayeval.methods.bounds.label_models import (
    FIT_LEVEL,
    dawid_skene,
    dawid_skene_concerns,
    dawid_skene_fit,
    label_model_delta,
)

__all__ = ["misfit_check"]


def _without_each_lf(patterns, cell_counts, metrics, correction, uncertainty):
    """Dawid-Skene refitted without each labelling function in turn, where it is identified
    and fits: {function dropped: exact bounds on the coarser patterns}."""
    out = {}
    for m in range(patterns.shape[1]):
        sub, inverse = np.unique(np.delete(patterns, m, axis=1), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        if dawid_skene_concerns(sub):
            continue
        table = np.zeros((len(sub), cell_counts.shape[1]), dtype=cell_counts.dtype)
        np.add.at(table, inverse, cell_counts)
        counts = table.sum(axis=1)
        beta = dawid_skene(sub, counts, cell_counts.shape[1])
        if dawid_skene_fit(sub, counts, beta)["misfit"]:
            continue
        error = {}
        if uncertainty:
            error = label_model_delta("dawid_skene", sub, counts, beta).error_terms()
        out[m] = exact_bounds(table, beta, metrics, small_pattern_correction=correction, **error)
    return out


def misfit_check(patterns, cell_counts, beta, results, *, ci_prob: float = 0.95,
                 small_pattern_correction: bool = True, label_model_uncertainty: bool = True
                 ) -> tuple[dict[str, Any], str]:
    """Where the weak labels contradict the Dawid-Skene fit, widen the bounds to the label
    models that fit them.

    The fit is tested (:func:`~bayeval.methods.bounds.label_models.dawid_skene_fit`); where it
    fails, Dawid-Skene is refitted without each labelling function in turn, and the refits
    that are identified and fit the weak labels, each on its coarser patterns, join the full
    fit: each bound's estimate and sd become those of the label model whose interval reaches
    farthest out (lowest lower end of the lower bound, highest upper end of the upper one).
    The bounds are valid under any label model that is right, so their union over a set of
    label models is valid when one of them is (Manski's union of identified sets over a set of
    models; Maia Polo et al., 2024, Thm 5.1, bound the error of a wrong one): a duplicated or
    correlated function is dropped by one of the refits.

    Parameters
    ----------
    patterns : int array (n_patterns, n_lfs)
    cell_counts : int array (n_patterns, n_classes)
    beta : float array (n_patterns, n_classes)
        The Dawid-Skene fit on the pattern counts.
    results : dict metric -> dict
        :func:`~bayeval.methods.bounds.fast.exact_bounds` with ``beta``; widened in place.
    ci_prob : float
    small_pattern_correction, label_model_uncertainty : bool
        As for :func:`~bayeval.methods.bounds.api.bounds`.

    Returns
    -------
    data : dict
        ``lf_pair_z`` (each pair's agreement z), ``pattern_fit_p`` and, where widened,
        ``lower_bound_all_lfs`` and ``upper_bound_all_lfs`` (the full fit's bounds).
    warning : str
        Empty where the fit holds.

    Examples
    --------
    >>> from bayeval.methods.bounds.label_models import weak_label_patterns
    >>> rng = np.random.default_rng(1)
    >>> y = rng.integers(0, 2, 2000)
    >>> votes = np.where(rng.random((2000, 4)) < 0.75, y[:, None], 1 - y[:, None])
    >>> votes = np.where(rng.random((2000, 4)) < 0.7, votes, -1)
    >>> weak = np.column_stack([votes, votes[:, 0]])  # function 4 copies function 0
    >>> y_pred = np.where(rng.random(2000) < 0.8, y, 1 - y)
    >>> cell, patterns, counts = weak_label_patterns(weak, 2)
    >>> table = np.zeros((len(counts), 2), dtype=int)
    >>> np.add.at(table, (cell, y_pred), 1)
    >>> beta = dawid_skene(patterns, counts, 2)
    >>> results = exact_bounds(table, beta, ["accuracy"])
    >>> narrow = results["accuracy"]["upper_bound"] - results["accuracy"]["lower_bound"]
    >>> data, warning = misfit_check(patterns, table, beta, results)
    >>> warning[:41], bool(results["accuracy"]["upper_bound"]
    ...                    - results["accuracy"]["lower_bound"] > narrow)
    ('Dawid-Skene does not fit the weak labels:', True)
    """
    fit = dawid_skene_fit(patterns, cell_counts.sum(axis=1), beta)
    data = {"lf_pair_z": (("lf", "lf_pair"), fit["pair_z"]), "pattern_fit_p": fit["pattern_p"]}
    if not fit["misfit"]:
        return data, ""
    why = [f"functions {j} and {m} agree more often than conditionally independent ones "
           f"would (z = {fit['pair_z'][j, m]:.1f})" for j, m in fit["flagged_pairs"]]
    if fit["pattern_p"] < FIT_LEVEL:
        why.append(f"the pattern frequencies depart from the fitted model (chi2 = "
                   f"{fit['pattern_chi2']:.0f}, {fit['pattern_df']} df, p = "
                   f"{fit['pattern_p']:.2g})")
    others = _without_each_lf(patterns, cell_counts, list(results), small_pattern_correction,
                              label_model_uncertainty)
    text = ("Dawid-Skene does not fit the weak labels: " + "; ".join(why) + ". Its conditional "
            "independence counts correlated votes twice, so its P(Y | weak labels) is "
            "overconfident and the bounds can collapse around a wrong value. ")
    if not others:
        return data, text + ("No labelling function left out restores the fit: drop "
                             "correlated functions or give a label model fitted with gold "
                             "labels.")
    z = scipy.stats.norm.ppf((1 + ci_prob) / 2)
    for side, sign in (("lower", -1.0), ("upper", 1.0)):
        keys = [f"{side}_bound", f"{side}_bound_sd"]
        data[f"{side}_bound_all_lfs"] = ("metric", [r[keys[0]] for r in results.values()])
        for metric, res in results.items():
            options = [res] + [other[metric] for other in others.values()]
            ends = [sign * o[keys[0]] + z * o[keys[1]] for o in options]
            res.update({key: options[int(np.nanargmax(ends))][key] for key in keys})
    return data, text + (
        f"Refitted without labelling function {' or '.join(map(str, others))} it fits: those "
        "functions look like copies or share their errors. The bounds reported are the widest "
        "over these label models and the full one (see lower_bound_all_lfs and "
        "upper_bound_all_lfs in the data summary).")
