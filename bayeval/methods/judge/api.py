r"""Judge: a rate from a noisy judge that labels everything plus human labels on a few items.

A judge (an LLM, a crowd, a heuristic) gives :math:`\hat Y` for all :math:`N = m + n` items;
humans give :math:`Y \in \{0, 1\}` for a random subset of :math:`m` of them. The estimand is
:math:`\theta = P(Y = 1)`: an accuracy, a pass rate, a win rate.

:func:`judge` checks its input and runs, by ``method``:

* a fast path (:mod:`bayeval.methods.judge.fast`): naive, classical, Rogan–Gladen (textbook and
  adjusted), PPI, PPI++ (clipped and unclipped), the efficient-influence-function (EIF)
  estimator and the joint misclassification MLE, with Wald or logit-Wald intervals. For a binary
  judge the EIF estimator, the MLE and PPI++ with :math:`\lambda = (n/N)(\hat\mu_1 -
  \hat\mu_0)` are one number;
* a generative model (:func:`bayeval.methods.judge.models.model`: Model A, prevalence,
  sensitivity and specificity, or Model B, judge rate and calibration cells), sampled with NUTS;
  with priors from one Dirichlet on the 2×2 table (the default) both have the exact posterior
  :func:`~bayeval.methods.judge.conjugate.conjugate_posterior`, which ``method="both"`` attaches
  as the check of the sampler.

:func:`eif_agreement` compares a posterior with the EIF estimate (Bernstein–von Mises).
``sample_weight`` runs the weighted estimators of :mod:`bayeval.methods.judge.weighted`, and
``null`` adds the p-values (or the posterior probability :math:`P(\theta > \theta_0)`) of
:class:`~bayeval.methods.judge.result.JudgeEvaluation`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import special

from bayeval.deprecation import renamed_arguments
from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.methods.judge.categories import CLASS_ESTIMATORS
from bayeval.methods.judge.categories_api import categorical_input, judge_categories
from bayeval.methods.judge.compare import ALTERNATIVES, p_value
from bayeval.methods.judge.conjugate import conjugate_posterior
from bayeval.methods.judge.curves import CURVES, as_folds, cross_fitted, eif_from_curve, fold_ids
from bayeval.methods.judge.fast import (
    ESTIMATORS,
    Counts,
    Estimate,
    Moments,
    by_name,
    eif_cells,
    mle_parameters,
    moments,
    ppi_pp_lambda,
    reported,
    youden,
    z_value,
)
from bayeval.methods.judge.graded import (
    MU_MODELS,
    as_null,
    default_mu_model,
    graded_input,
    judge_cells,
    judge_graded,
)
from bayeval.methods.judge.models import (
    TARGET_ACCEPT,
    VARIANTS,
    beta_priors,
    conjugate_prior,
    model,
)
from bayeval.methods.judge.result import JudgeEvaluation
from bayeval.methods.judge.weighted import UNWEIGHTED_ONLY, Sample
from bayeval.methods.judge.weighted import by_name as weighted_by_name
from bayeval.methods.judge.weighted import ppi_pp_lambda as weighted_ppi_lambda
from bayeval.sampling import sample
from bayeval.table import Table, table
from bayeval.validation import (
    aligned,
    as_array,
    as_binary,
    as_choice,
    as_ci_prob,
    as_sample_kwargs,
    as_seed,
    named_columns,
)

__all__ = [
    "eif_agreement",
    "judge",
]

BAYES = ("pymc", "both")
METHODS = (*ESTIMATORS, "all", *BAYES)
CI_KINDS = ("logit", "wald")
ROGAN_GLADEN = ("rogan_gladen", "rogan_gladen_adjusted")
BINARY_ONLY = (*ROGAN_GLADEN, "mle")
#: Youden's kappa below this: a weak judge
WEAK_KAPPA = 0.2
#: posterior mean within 0.25 SE of the EIF estimate, sd ratio within 0.9-1.1, at m >= 100
AGREEMENT_MEAN, AGREEMENT_SD, AGREEMENT_MIN_M = 0.25, 0.10, 100
COUNT_NAMES = Counts._fields
ASSUMPTIONS = (
    "The human-labelled items are a random subset of all items (missing completely at random), "
    "the human labels are the truth, the judge is run the same way on every item, and items are "
    "independent (no clusters of prompts or users). Estimators other than naive then estimate "
    "the population rate; the generative models also assume the judge's error rates are the same "
    "for labelled and unlabelled items.")


# ============================================================================ input handling
def _by_group(x) -> Any:
    """A dict {group: column} for a Mapping, DataFrame or 2-D array; ``x`` itself otherwise."""
    if isinstance(x, Mapping):
        return dict(x)
    if isinstance(x, pd.DataFrame):
        return {col: x[col] for col in x.columns}
    if isinstance(x, np.ndarray) and x.ndim == 2 and x.shape[1] > 1:
        return {j: x[:, j] for j in range(x.shape[1])}
    return x


def _split_groups(y, yhat, yhat_unlabeled) -> tuple[list | None, list[tuple]]:
    """(group names or None, one (y, yhat, yhat_unlabeled, label) per group)."""
    parts = {"y": _by_group(y), "yhat": _by_group(yhat),
             "yhat_unlabeled": _by_group(yhat_unlabeled)}
    keyed = {k: v for k, v in parts.items() if isinstance(v, dict)}
    if not keyed:
        return None, [(y, yhat, yhat_unlabeled, None)]
    first, keys = next(iter(keyed.items()))[0], list(next(iter(keyed.values())))
    if not keys:
        raise ValueError(f"{first} is given per group (a dict, DataFrame or 2-D array) but has "
                         "no group; give at least one, or a 1-D array for one group.")
    for name, cols in keyed.items():
        if list(cols) != keys:
            raise ValueError(f"{name} has groups {list(cols)} but {first} has {keys}; every "
                             "argument given per group (dict, DataFrame or 2-D array) must "
                             "have the same groups in the same order.")
    rows = [(*(parts[n][k] if n in keyed else parts[n] for n in parts), k) for k in keys]
    return keys, rows


def _validate(y, yhat, yhat_u, label, *, bayes: bool):
    """Checked arrays (y as int8, judge labels as int8 if binary else float) and binary flag;
    ``y`` and ``yhat`` pair by index if they are pandas Series
    (:func:`~bayeval.validation.aligned`)."""
    tag = "" if label is None else f"[{label!r}]"
    y, yhat = aligned(**{f"y{tag}": y, f"yhat{tag}": yhat})
    y = as_binary(y, f"y{tag}")
    yhat, yhat_u = as_array(yhat, f"yhat{tag}"), as_array(yhat_u, f"yhat_unlabeled{tag}")
    lo, hi = min(yhat.min(), yhat_u.min()), max(yhat.max(), yhat_u.max())
    if lo == hi:
        _refuse_constant(lo, None, 0, 0, tag)
    binary = bool(((yhat == 0) | (yhat == 1)).all() and ((yhat_u == 0) | (yhat_u == 1)).all())
    if bayes and not binary:
        both = np.concatenate([yhat, yhat_u])
        raise ValueError(f"method='pymc' or 'both' needs binary judge labels (0/1); yhat{tag} "
                         f"or yhat_unlabeled{tag} has values such as "
                         f"{both[(both != 0) & (both != 1)][:3].tolist()}. Use method='eif' "
                         "for scores.")
    if not bayes:
        m1 = int(y.sum())
        _refuse_constant(None, yhat[0] if yhat.min() == yhat.max() else None, m1, y.size - m1,
                         tag)
    if binary:
        yhat, yhat_u = yhat.astype(np.int8), yhat_u.astype(np.int8)
    return y, yhat, yhat_u, binary


def _refuse_constant(judge_value, labelled_value, m1: int, m0: int, tag: str = "") -> None:
    """The checks of the data the estimators need, in :func:`judge` and on counts: a judge with
    one value on every item (``judge_value``, else None), or on every labelled item
    (``labelled_value``; the frequentist estimators), fewer than 2 labelled items of a class.

    Raises
    ------
    ValueError
        Naming the argument and what the estimators need.

    Examples
    --------
    >>> _refuse_constant(None, None, 1, 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: y has 1 positive and 5 negative label(s); the frequentist estimators need at...
    """
    if judge_value is not None:
        raise ValueError(f"yhat{tag} and yhat_unlabeled{tag} hold a single value "
                         f"({judge_value:g}) for every item: the judge carries no information; "
                         "give a judge that varies.")
    if labelled_value is not None:
        raise ValueError(f"yhat{tag} is {labelled_value:g} on every labelled item, so the "
                         "judge's errors cannot be estimated; label items the judge scores "
                         "differently, or use method='pymc'.")
    if min(m1, m0) < 2:
        raise ValueError(f"y{tag} has {m1} positive and {m0} negative label(s); the "
                         "frequentist estimators need at least 2 of each class. Label more items, "
                         "or use method='pymc', whose posterior is defined for any counts.")


def refuse_counts(c: Counts) -> None:
    """:func:`judge`'s checks of a binary judge's data, from its :class:`Counts`.

    Raises
    ------
    ValueError
        As :func:`judge`: a judge with one value on every item or on every labelled item, fewer
        than 2 labelled items of a class.

    Examples
    --------
    >>> refuse_counts(Counts(n11=0, n10=0, n01=0, n00=1, t1=0, t0=2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: yhat and yhat_unlabeled hold a single value (0) for every item: the judge...
    """
    c1, c0 = c.n11 + c.n01, c.n10 + c.n00
    judged = [v for v, k in ((0, c0 + c.t0), (1, c1 + c.t1)) if k > 0]
    labelled = [v for v, k in ((0, c0), (1, c1)) if k > 0]
    _refuse_constant(judged[0] if len(judged) == 1 else None,
                     labelled[0] if len(labelled) == 1 else None, c.n11 + c.n10, c.n01 + c.n00)


# ============================================================================= fast paths
def _cells(y, yhat, yhat_u, mu_model: str):
    """(labelled count, labelled sum of y, unlabelled count) per judge value or score bin."""
    k_l, k_u, size = judge_cells(yhat, yhat_u, mu_model)
    return (np.bincount(k_l, minlength=size), np.bincount(k_l, weights=y, minlength=size),
            np.bincount(k_u, minlength=size))


def estimates(mo: Moments, counts: Counts | None, cells, names, z: float, fns: dict | None = None
              ) -> tuple[dict[str, Estimate], list[str]]:
    r"""The estimators ``names`` of one group (as floats), and the note of those left out.

    For a binary judge (``counts`` given), Rogan–Gladen is left out where it divides by
    :math:`\hat\kappa \le 0` (:func:`~bayeval.methods.judge.fast.youden`); for a scored judge
    (``counts`` None), the binary-only estimators are. Arguments as
    :func:`~bayeval.methods.judge.fast.by_name`, whose estimators ``fns`` replaces (the
    weighted ones of :func:`bayeval.methods.judge.weighted.by_name`, with ``counts`` the
    weighted counts).

    Raises
    ------
    ValueError
        When the one estimator asked for is a Rogan–Gladen left out.

    Examples
    --------
    >>> c = Counts(n11=20, n10=30, n01=35, n00=25, t1=600, t0=400)  # kappa < 0
    >>> out, notes = estimates(Moments.from_counts(c), c, c.cells(), ESTIMATORS, z_value(0.95))
    >>> len(out), notes
    (7, ['rogan_gladen, rogan_gladen_adjusted left out: they divide by kappa <= 0.'])
    """
    notes = []
    if counts is not None:
        unusable = [n for n in names if n in ROGAN_GLADEN
                    and not youden(counts, adjust=n.endswith("adjusted"), z=z) > 0]
        if unusable and len(names) == 1:
            raise ValueError(f"method={names[0]!r} divides by the judge's kappa = q0 + q1 - 1, "
                             f"which is {float(youden(counts, z=z)):.3f} <= 0 on the labelled "
                             "items (a judge no better than chance, or yhat oriented unlike y). "
                             "Use method='eif', which falls back to the human labels.")
        if unusable:
            notes.append(f"{', '.join(unusable)} left out: they divide by kappa <= 0.")
        names = [n for n in names if n not in unusable]
    else:
        names = [n for n in names if n not in BINARY_ONLY]
    fns = fns or by_name(mo, counts, cells, z)
    return {name: Estimate(*(float(v) for v in fns[name]())) for name in names}, notes


def _weighted_counts(s: Sample) -> Counts:
    """:class:`Counts` of a binary judge with each item counted by its weight (floats)."""
    y, yh = s.y.astype(bool), s.yhat.astype(bool)
    t1 = float(s.v @ s.yhat_u)
    return Counts(*(float(s.w[a & b].sum()) for a, b in ((y, yh), (y, ~yh), (~y, yh), (~y, ~yh))),
                  t1=t1, t0=float(s.v.sum()) - t1)


def _fast_paths(y, yhat, yhat_u, binary: bool, names, z: float, mu_model,
                weights: tuple | None = None, folds: int | None = None, rng=None
                ) -> tuple[dict, dict, list[str]]:
    """Estimates by name, the data summary and the warnings of one group; ``weights`` (the
    labelled and unlabelled items' sampling weights) runs the weighted estimators; a curve
    ``mu_model`` is cross-fitted on ``folds`` folds drawn from ``rng``."""
    notes: list[str] = []
    counts = Counts.from_labels(y, yhat, yhat_u) if binary else None
    mo = Moments.from_counts(counts) if binary else moments(y, yhat, yhat_u)
    s = None if weights is None else Sample.of(y, yhat, yhat_u, *weights)
    lam = ppi_pp_lambda(mo, clip=False) if s is None else weighted_ppi_lambda(s, clip=False)
    info = {"m": y.size, "n": yhat_u.size, "m1": int(y.sum()), "m0": int(y.size - y.sum()),
            "lam": float(np.clip(lam, 0, 1)), "lam_unclipped": float(lam)}
    if s is not None:  # Kish's effective sizes of the weighted samples
        info.update(m_kish=float(y.size**2 / np.sum(s.w**2)),
                    n_kish=float(yhat_u.size**2 / np.sum(s.v**2)))
    rates = counts if s is None or not binary else _weighted_counts(s)
    if binary:
        cells = counts.cells()
        notes += _judge_notes(counts, info, mle_parameters(rates))
        cell_index = (yhat, yhat_u, 2)
    else:
        mu_model = mu_model or default_mu_model(yhat, yhat_u, notes)
        info["mu_model"] = mu_model
        celled = mu_model not in ("linear", *CURVES)
        cells = _cells(y, yhat, yhat_u, mu_model) if celled else None
        cell_index = judge_cells(yhat, yhat_u, mu_model) if celled else None
        if cells is not None and (cells[0] == 0).any():
            share = cells[2][cells[0] == 0].sum() / yhat_u.size
            notes.append(f"{share:.1%} of the unlabelled items have a judge value that no "
                         "labelled item has; their cell mean falls back to the labelled mean "
                         "(bin the scores or use mu_model='linear').")
    fns = None if s is None else weighted_by_name(s, cell_index)
    if not binary and mu_model in CURVES:
        fold = fold_ids(y.size, as_folds(folds, y.size), rng)
        curve = eif_from_curve(y, *cross_fitted(y, yhat, yhat_u, fold, mu_model),
                               *((None, None) if s is None else (s.w, s.v)))
        fns = {**(fns or by_name(mo, None, None, z)), "eif": lambda: curve}
        info["folds"] = int(fold.max()) + 1
    out, left_out = estimates(mo, rates, cells, names, z, fns)
    notes += left_out
    eif = out.get("eif") or estimates(mo, rates, cells, ("eif",), z, fns)[0]["eif"]
    info.update(_efficiency(eif, info["m"], info["n"]))
    notes += _estimate_notes(out)
    return out, info, notes


def _judge_notes(counts: Counts, info: dict, parameters) -> list[str]:
    """Judge quality for a binary judge: records counts, the MLE ``parameters`` (theta, q0, q1)
    and kappa; returns warnings."""
    _, q0, q1 = (float(v) for v in parameters)
    kappa = q0 + q1 - 1
    info.update({k: int(v) for k, v in counts._asdict().items()}, q0=q0, q1=q1, kappa=kappa)
    notes = []
    if kappa <= 0:
        notes.append(f"the judge is no better than chance (kappa = q0 + q1 - 1 = {kappa:.3f} "
                     "<= 0): it adds no information and EIF and PPI++ fall back to the human "
                     "labels; check that yhat is oriented like y.")
    elif kappa < WEAK_KAPPA:
        notes.append(f"weak judge: kappa = q0 + q1 - 1 = {kappa:.3f} < {WEAK_KAPPA}; "
                     "Rogan-Gladen is unstable and the judge adds little.")
    empty = [f"(Y={k[1]}, judge={k[2]})" for k in COUNT_NAMES[:4] if info[k] == 0]
    if empty:
        notes.append(f"empty labelled cell(s) {', '.join(empty)}: frequentist standard errors "
                     "miss that cell's uncertainty and undercover; prefer method='pymc'.")
    if min(info["m0"], info["m1"]) < 5:
        notes.append(f"few labelled items of a class (m0 = {info['m0']}, m1 = {info['m1']}): "
                     "large-sample intervals are unreliable; prefer method='pymc'.")
    return notes


def _efficiency(eif: Estimate, m: int, n: int) -> dict[str, float]:
    r"""``n_effective`` :math:`= \hat\theta(1-\hat\theta)/\mathrm{se}^2` (human labels the
    judge-aided estimate is worth) and the implied ``rho2`` in
    :math:`\mathrm{se}^2 = \theta(1-\theta)[\rho^2/N + (1-\rho^2)/m]`."""
    v = eif.estimate * (1 - eif.estimate)
    if eif.se == 0 or v == 0:
        return {"n_effective": float("inf"), "rho2": 1.0}
    rho2 = (1 / m - eif.se**2 / v) / (1 / m - 1 / (m + n))
    return {"n_effective": v / eif.se**2, "rho2": float(np.clip(rho2, 0.0, 1.0))}


def _estimate_notes(out: dict[str, Estimate]) -> list[str]:
    notes = [f"{name} = {e.estimate:.4f} lies outside [0, 1]: reported as "
             f"{min(max(e.estimate, 0.0), 1.0):g}, its interval clipped to [0, 1]"
             for name, e in out.items() if not 0.0 <= e.estimate <= 1.0]
    notes += [f"{name} has a zero standard error (a degenerate cell): its interval is a point"
              for name, e in out.items() if e.se == 0]
    if "ppi" in out and "classical" in out and out["ppi"].se > out["classical"].se:
        notes.append(f"the judge does not help PPI: its se {out['ppi'].se:.4f} exceeds the "
                     f"human-labels-only se {out['classical'].se:.4f}; use eif or ppi_pp.")
    return notes


def _stack(rows: list[dict], groups) -> xr.Dataset:
    """Dicts of scalars, one per group, as a Dataset over ``group`` (no dim for one group); keys
    missing from a group (counts of a non-binary judge) are left out."""
    if groups is None:
        return xr.Dataset(rows[0])
    keys = [k for k in rows[0] if all(k in r for r in rows)]
    return xr.Dataset({k: ("group", [r[k] for r in rows]) for k in keys},
                      coords={"group": groups})


def estimates_dataset(per_group: list[dict[str, Estimate]], groups, z: float, ci_kind: str,
                      alternative: str = "two-sided", null: float | None = None) -> xr.Dataset:
    """The estimates of every group with their intervals, over ``estimator`` (and ``group``).

    Parameters
    ----------
    per_group : list of dict
        One ``{name: Estimate}`` per group (:func:`estimates`).
    groups : list or None
        The group names; None for one group (no ``group`` dimension).
    z : float
        Normal quantile of the intervals (:func:`~bayeval.methods.judge.fast.z_value`).
    ci_kind : {"logit", "wald"}
        Interval kind (:func:`~bayeval.methods.judge.fast.interval`).
    alternative : {"two-sided", "larger", "smaller"}
        A one-sided alternative opens the interval to 1 (``"larger"``) or 0 (``"smaller"``);
        ``z`` is then the one-sided quantile.
    null : float, optional
        :math:`\theta_0` of the p-values (:func:`~bayeval.methods.judge.compare.p_value`).

    Returns
    -------
    xr.Dataset
        ``mean`` (the estimate), ``sd`` (its standard error), ``lower``, ``upper`` and, with
        ``null``, ``p_value`` (of the raw estimate; NaN where the se is 0); NaN for a group
        where an estimator was left out (its warning says why).

    Notes
    -----
    An estimate outside [0, 1] is reported as the nearest of 0 and 1, its interval clipped to
    [0, 1], and every interval contains its estimate
    (:func:`~bayeval.methods.judge.fast.reported`).

    Examples
    --------
    >>> ds = estimates_dataset([{"eif": Estimate(0.2595, 0.0278)}], None, 1.96, "wald")
    >>> [round(float(ds[k].item()), 4) for k in ("lower", "upper")]
    [0.205, 0.314]
    >>> ds = estimates_dataset([{"ppi": Estimate(1.25, 0.2165)}], None, 1.96, "wald")
    >>> [round(float(ds[k].item()), 4) for k in ("mean", "lower", "upper")]
    [1.0, 0.8257, 1.0]
    >>> ds = estimates_dataset([{"eif": Estimate(0.56, 0.03)}], None, 1.6449, "wald", "larger",
    ...                        null=0.5)
    >>> [round(float(ds[k].item()), 4) for k in ("lower", "upper", "p_value")]
    [0.5107, 1.0, 0.0228]
    """
    names = [n for n in ESTIMATORS if any(n in e for e in per_group)]
    left_out = Estimate(np.nan, np.nan)
    raw = np.array([[e.get(n, left_out).estimate for e in per_group] for n in names])
    sd = np.array([[e.get(n, left_out).se for e in per_group] for n in names])
    mean, lower, upper = reported(Estimate(raw, sd), z, ci_kind)
    if alternative == "larger":
        upper = np.where(np.isnan(raw), np.nan, 1.0)
    elif alternative == "smaller":
        lower = np.where(np.isnan(raw), np.nan, 0.0)
    columns = {"mean": mean, "sd": sd, "lower": lower, "upper": upper}
    if null is not None:
        columns["p_value"] = np.array([[p_value(Estimate(r, s), null, alternative) if s > 0
                                        else np.nan for r, s in zip(*row, strict=True)]
                                       for row in zip(raw, sd, strict=True)])
    dims = ("estimator", "group") if groups is not None else ("estimator",)
    pick = (lambda a: a) if groups is not None else (lambda a: a[:, 0])
    coords = {"estimator": names, **({"group": groups} if groups is not None else {})}
    return xr.Dataset({k: (dims, pick(v)) for k, v in columns.items()}, coords=coords)


def _warn(notes: list[str], stacklevel: int = 4) -> None:
    """Emit each note as a UserWarning pointing at the user's call of :func:`judge` (through
    its decorator)."""
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=stacklevel)


# ============================================================================ entry point
@renamed_arguments(estimator="method", ci="ci_kind")
def judge(y, yhat, yhat_unlabeled=None, *, data=None, method: str = "eif",
          ci_prob: float = 0.95,
          ci_kind: str = "logit", prior=None, model: str = "a", mu_model: str | None = None,
          folds: int | None = None, weights: Mapping | None = None, y_range=None,
          sample_weight=None, sample_weight_unlabeled=None, alternative: str = "two-sided",
          null: float | None = None, random_seed: int | None = None,
          sample_kwargs: dict[str, Any] | None = None) -> Evaluation:
    r"""Rate of :math:`Y = 1` from a noisy judge on all items and human labels on a few.

    With labels in K categories (strings such as ``"A"``, ``"B"``, ``"tie"``, a pandas
    Categorical, integers other than 0 and 1) it estimates the class prevalences instead, and
    with ``weights`` a weighted score such as a win rate counting a tie as half
    (:func:`~bayeval.methods.judge.categories_api.judge_categories`). With ratings on a
    declared scale (``y_range``, or numbers in [0, 1] other than only 0 and 1) it estimates the
    mean rating (:func:`~bayeval.methods.judge.graded.judge_graded`).

    Parameters
    ----------
    y : array-like of 0/1, or of categories
        Human labels of the labelled items; or a column name of ``data``, missing (NaN or
        None) on the items without a human label.
    yhat : array-like
        The judge on the same items: 0/1, or ordinal/continuous scores (``naive``,
        ``classical``, ``ppi*`` and ``eif`` only). ``y`` and ``yhat`` pair by index where both
        are pandas Series (or DataFrame columns), else by position
        (:func:`bayeval.validation.aligned`). Or a column name of ``data`` (a list of names,
        or a dict ``{group: column}``, for one judge per group).
    yhat_unlabeled : array-like
        The judge on the items without a human label. Left out with ``y`` a column of
        ``data``: the judge on the rows where ``y`` is missing.
        Any of the three may instead be a dict, DataFrame or 2-D array with one column per group
        (several judges or systems); 1-D arguments are then shared by all groups, and the results
        gain a ``group`` dimension.
    data : table, optional
        A pandas DataFrame or pyarrow Table whose columns ``y`` and ``yhat`` name, one row per
        item (:mod:`bayeval.validation.tables`).
    method : str
        An estimator: ``"eif"`` (default: efficient, always in [0, 1]), ``"mle"``,
        ``"ppi_pp"``, ``"ppi_pp_unclipped"``, ``"ppi"``, ``"rogan_gladen"``,
        ``"rogan_gladen_adjusted"``, ``"classical"``, ``"naive"``; ``"all"`` for all of them side
        by side; ``"pymc"`` to sample the generative ``model``; ``"both"`` to sample it and
        attach its exact closed form, so that :meth:`Evaluation.check` tests the sampler.
        (Formerly ``estimator=``, still accepted with a ``FutureWarning``.)
    ci_prob : float
        Interval level (default 0.95; the paper and ppi_py use 0.90).
    ci_kind : {"logit", "wald"}
        Interval of the fast paths: logit-Wald (inside [0, 1]; the paper's) or Wald (ppi_py's).
        (Formerly ``ci=``, still accepted with a ``FutureWarning``.)
    prior : dict, optional
        Beta ``(a, b)`` per parameter of the generative model
        (:func:`~bayeval.methods.judge.models.model`); the default is Jeffreys' Dirichlet(1/2,
        1/2, 1/2, 1/2) on the 2×2 table, chosen for its coverage with few labels.
    model : {"a", "b"}
        Generative model for ``"pymc"``/``"both"``: A (prevalence, sensitivity, specificity) or B
        (judge rate and calibration cell means).
    mu_model : {"cell", "linear", "bins", "isotonic", "spline"}, optional
        Calibration curve :math:`E[Y \mid \hat Y]` of the EIF estimator for a non-binary judge:
        cell means per judge value, a least-squares line, cell means over 10 quantile bins of
        the labelled scores, a monotone (isotonic) curve or a penalised logistic spline, the
        last two cross-fitted (:mod:`bayeval.methods.judge.curves`). Default: cells up to 20
        distinct judge values over all items, else bins, with 20 labelled items per cell or
        more; else the line. With categories, ``"isotonic"`` or ``"spline"`` for a judge's
        scores (one curve per class, :mod:`bayeval.methods.judge.categories_weighted`).
    folds : int, optional
        ``mu_model="isotonic"`` or ``"spline"``: the number K of cross-fitting folds (default
        5), drawn at random from ``random_seed``.
    weights : mapping, optional
        Categories only: a weight per category (e.g. ``{"A": 1, "tie": 0.5, "B": 0}``), adding
        the estimand :math:`\sum_k w_k\pi_k`.
    y_range : (low, high), optional
        The scale of graded human ratings, e.g. ``(1, 5)``: the estimand is their mean
        (:func:`~bayeval.methods.judge.graded.judge_graded`).
    sample_weight : array-like, optional
        Frequentist estimators (any labels): a sampling weight per labelled item,
        :math:`w_i \propto 1/\pi_i` when item :math:`i` was chosen for a human label with
        probability :math:`\pi_i` (a stratified or score-dependent design). Relative
        (rescaled to mean 1); the estimators become their weighted forms
        (:mod:`bayeval.methods.judge.weighted`, :mod:`~bayeval.methods.judge.categories_weighted`;
        ``rogan_gladen_adjusted`` has none). One array shared by every group.
    sample_weight_unlabeled : array-like, optional
        The same for the unlabelled items, :math:`\propto 1/(1 - \pi_i)` (default uniform;
        with weights on one sample only, the other is uniform).
    alternative : {"two-sided", "larger", "smaller"}
        Fast paths: as ppi_py, the p-value's alternative :math:`\theta \ne, >, < \theta_0`;
        a one-sided alternative makes the intervals one-sided (open to the end of the range).
    null : float, optional
        0/1 labels: :math:`\theta_0` in [0, 1] (graded ratings: on ``y_range``; categories:
        of every prevalence and of the weighted score, or a mapping ``{"prevalence": ...,
        "weighted": ...}``). Adds ``p_value`` (the z-test of every estimator) to the fast
        paths' summary, and (0/1 labels, graded ratings) ``prob_greater`` :math:`= P(\theta >
        \theta_0 \mid \text{data})` to the summary of posterior draws.
    random_seed : int, optional
        Seed of the sampler, of the draws of the finite-sample mean and of the cross-fitting
        folds.
    sample_kwargs : dict, optional
        Passed to ``pm.sample`` (draws, tune, chains, target_accept...); ``target_accept``
        defaults to :data:`~bayeval.methods.judge.models.TARGET_ACCEPT`.

    Returns
    -------
    Evaluation
        A :class:`~bayeval.methods.judge.result.JudgeEvaluation` for 0/1 labels. Fast paths:
        ``closed_form`` over ``estimator`` (and ``group``) with ``mean`` (the estimate), ``sd``
        (its standard error), ``lower``, ``upper`` (and ``p_value`` with ``null``). Models:
        posterior ``theta``, ``theta_finite`` (the mean of all :math:`N` true labels) and the
        model's parameters; ``"both"`` adds the exact ``closed_form`` (with ``finite_mean``,
        ``finite_sd``). The ``data`` group holds the counts, the MLE ``q0``, ``q1``, ``kappa``,
        ppi_py's ``lam``, ``n_effective`` and ``rho2`` (binary judge); with sampling weights
        also Kish's effective sizes ``m_kish`` and ``n_kish`` of the two samples.

    Warns
    -----
    UserWarning
        Weak judge (:math:`\hat\kappa < 0.2`) or no better than chance (:math:`\hat\kappa \le 0`:
        Rogan–Gladen is left out, NaN for that group with several groups, and asking for it
        alone is an error; the MLE, EIF and PPI++ lean on the human labels),
        empty labelled cells, fewer than 5 labelled items of a class, an estimate outside
        [0, 1], PPI less precise than the human labels alone; for the models, posterior
        :math:`P(\kappa \le 0) > 0.05`. The warnings are also kept in ``Evaluation.warnings``.

    Raises
    ------
    ValueError
        Non-binary ``y``; ``y`` and ``yhat`` of different lengths or pandas indexes; a judge
        with one value for every item; for the fast paths, fewer than 2 labelled items of a class
        or a judge with one value on every labelled item; sampling weights of the wrong length,
        negative or not finite, or given to the generative models; ``null`` outside [0, 1];
        ``alternative`` or ``null`` with the K-category generative models.

    See Also
    --------
    eif_agreement : the Bernstein–von Mises comparison of a posterior with the EIF estimate.
    bayeval.methods.judge.planning.labels_needed : how many human labels a half-width needs.
    bayeval.methods.judge.planning.plan_budget : human and judge labels under a budget.
    bayeval.methods.judge.ppi_py_api.ppi_mean_ci : ppi_py's interface.
    bayeval.methods.judge.models.model : the PyMC models of ``method="pymc"``.

    Examples
    --------
    >>> from bayeval.datasets import noisy_judge
    >>> d = noisy_judge(200, 5000, prevalence=0.3, random_seed=1)
    >>> ev = judge(d.y, d.yhat, d.yhat_unlabeled, method="all", ci_prob=0.9)
    >>> s = ev.summary()  # the judge says 1 too often: naive is biased, the others correct it
    >>> s["mean"].round(3).loc[["naive", "classical", "ppi", "eif", "mle"]].to_dict()
    {'naive': 0.409, 'classical': 0.285, 'ppi': 0.349, 'eif': 0.326, 'mle': 0.326}
    >>> s["sd"].round(4).loc[["classical", "ppi", "eif"]].to_dict()  # the judge adds precision
    {'classical': 0.0319, 'ppi': 0.0261, 'eif': 0.0252}

    One table of every item, the human label missing where there is none:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"human": np.r_[d.y, np.full(d.yhat_unlabeled.size, np.nan)],
    ...                    "llm": np.r_[d.yhat, d.yhat_unlabeled]})
    >>> round(float(judge("human", "llm", data=df).summary().loc["eif", "mean"]), 3)
    0.326

    Is the rate above 0.3? The p-values of the z-tests of :math:`H_0: \theta = 0.3` against
    :math:`\theta > 0.3`, beside one-sided intervals:

    >>> ev = judge(d.y, d.yhat, d.yhat_unlabeled, method="all", alternative="larger", null=0.3)
    >>> ev.summary().loc[["classical", "ppi_pp", "eif"], ["lower", "upper", "p_value"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    judge (all), closed form: 95% one-sided (larger) logit confidence intervals
               lower  upper  p_value
    estimator
    classical  0.236    1.0    0.681
    ppi_pp     0.287    1.0    0.155
    eif        0.286    1.0    0.150

    The p-value is the z-test of each estimate (ppi_py's); with ``ci_kind="wald"`` an interval
    excludes :math:`\theta_0` exactly when it is below :math:`1 - ` ``ci_prob``.
    """
    y, yhat, yhat_unlabeled = named_columns(data, y=y, yhat=yhat,
                                            yhat_unlabeled=yhat_unlabeled)
    graded = y_range is not None or graded_input(y)
    # weights given as pandas pair with their items by index (arrays by position, checked later)
    if isinstance(sample_weight, pd.Series):
        y, sample_weight = aligned(y=y, sample_weight=sample_weight)
    if isinstance(sample_weight_unlabeled, pd.Series) and not isinstance(yhat_unlabeled, Mapping):
        yhat_unlabeled, sample_weight_unlabeled = aligned(
            yhat_unlabeled=yhat_unlabeled, sample_weight_unlabeled=sample_weight_unlabeled)
    if folds is not None and mu_model not in CURVES:
        raise ValueError(f"folds applies to the cross-fitted curves, mu_model='isotonic' or "
                         f"'spline'; mu_model is {mu_model!r}: leave folds None.")
    if graded:
        if weights is not None:
            raise ValueError("weights apply to labels in K categories; graded ratings have a "
                             "mean: leave weights None.")
        return judge_graded(y, yhat, yhat_unlabeled, y_range=y_range, method=method,
                            ci_prob=ci_prob, ci_kind=ci_kind, mu_model=mu_model, folds=folds,
                            sample_weight=sample_weight,
                            sample_weight_unlabeled=sample_weight_unlabeled,
                            alternative=alternative, null=null, prior=prior,
                            random_seed=random_seed, sample_kwargs=sample_kwargs)
    if categorical_input(y, yhat, yhat_unlabeled):
        method = as_choice(method, "method", (*CLASS_ESTIMATORS, "all", *BAYES))
        if mu_model is not None and mu_model not in CURVES:
            raise ValueError("with categories, mu_model is 'isotonic' or 'spline' for a judge's "
                             "scores; with its labels the EIF uses the human shares per judge "
                             "label: leave it None.")
        y, yhat = aligned(y=y, yhat=yhat)
        return judge_categories(
            y, yhat, yhat_unlabeled, method=method, ci_prob=as_ci_prob(ci_prob),
            ci_kind=as_choice(ci_kind, "ci_kind", CI_KINDS), prior=prior,
            model=as_choice(model, "model", VARIANTS), weights=weights, mu_model=mu_model,
            folds=folds, sample_weight=sample_weight,
            sample_weight_unlabeled=sample_weight_unlabeled, alternative=alternative, null=null,
            random_seed=random_seed,
            sample_kwargs=as_sample_kwargs(sample_kwargs) if method in BAYES else None)
    if weights is not None:
        raise ValueError("weights apply to labels in K categories (e.g. 'A', 'tie', 'B'); with "
                         "0/1 labels the estimand is P(y = 1): leave weights None.")
    method = as_choice(method, "method", METHODS)
    ci_prob = as_ci_prob(ci_prob)
    ci_kind = as_choice(ci_kind, "ci_kind", CI_KINDS)
    model = as_choice(model, "model", VARIANTS)
    alternative = as_choice(alternative, "alternative", ALTERNATIVES)
    null = as_null(null, 0.0, 1.0, "a rate in [0, 1]")
    if mu_model is not None:
        mu_model = as_choice(mu_model, "mu_model", (*MU_MODELS, *CURVES))
    bayes = method in BAYES
    weighted = sample_weight is not None or sample_weight_unlabeled is not None
    if bayes:
        sample_kwargs = as_sample_kwargs(sample_kwargs)
        if weighted:
            raise ValueError("sample_weight and sample_weight_unlabeled apply to the "
                             "frequentist estimators; the generative models assume the labelled "
                             "items are a random subset. Use method='eif' (or another fast "
                             "path) with weights.")
    groups, rows = _split_groups(y, yhat, yhat_unlabeled)
    checked = [_validate(*row, bayes=bayes) for row in rows]
    tags = [None] * len(rows) if groups is None else [f"[{g}] " for g in groups]
    common = dict(method="judge", variant=method, ci_prob=ci_prob, ci_kind="eti",
                  random_seed=random_seed, assumptions=ASSUMPTIONS, null=null)
    if bayes:
        return _bayes(checked, groups, tags, method, model, prior, ci_prob, random_seed,
                      sample_kwargs, common)
    z = z_value(ci_prob) if alternative == "two-sided" else float(special.ndtri(ci_prob))
    names = ESTIMATORS if method == "all" else (method,)
    if weighted:
        if method in UNWEIGHTED_ONLY:
            raise ValueError(f"method={method!r} smooths counts and has no weighted form; with "
                             "sample_weight use 'rogan_gladen' or another estimator.")
        names = tuple(n for n in names if n not in UNWEIGHTED_ONLY)
    results, infos, notes = [], [], []
    rng = as_seed(random_seed) if mu_model in CURVES else None
    for (yy, yh, yu, binary), tag in zip(checked, tags, strict=True):
        if method in BINARY_ONLY and not binary:
            raise ValueError(f"method={method!r} needs binary judge labels (0/1); yhat "
                             f"{tag or ''}has other values. Use method='eif' for scores.")
        weights = (sample_weight, sample_weight_unlabeled) if weighted else None
        out, info, group_notes = _fast_paths(yy, yh, yu, binary, names, z, mu_model, weights,
                                             folds, rng)
        results.append(out)
        infos.append(info)
        notes += [(tag or "") + note for note in group_notes]
    _warn(notes)
    left_out = [n for n in names if not all(n in r for r in results)]
    where = "" if groups is None else " in every group (NaN where not)"
    description = (f"P(Y = 1) from {infos[0]['m']} human labels and {infos[0]['n']} judge-only "
                   f"items ({ci_kind} intervals"
                   + ("" if alternative == "two-sided" else f", one-sided: {alternative}")
                   + ("" if null is None else f", null {null:g}")
                   + (", sampling weights" if weighted else "") + ")"
                   + (f"; not computed{where}: {', '.join(left_out)}" if left_out else "")
                   + ("; rogan_gladen_adjusted has no weighted form" if weighted
                      and method == "all" else ""))
    return JudgeEvaluation.create(
        closed_form=estimates_dataset(results, groups, z, ci_kind, alternative, null),
        data=_stack(infos, groups), warnings=notes, description=description,
        interval_kind=ci_kind if alternative == "two-sided" else
        f"one-sided ({alternative}) {'Wald' if ci_kind == 'wald' else ci_kind}", **common)


def _bayes(checked, groups, tags, method, variant, prior, ci_prob, random_seed, sample_kwargs,
           common) -> Evaluation:
    """Sample Model A or B; with ``"both"`` attach the exact posterior as the closed form."""
    per_group = [Counts.from_labels(yy, yh, yu) for yy, yh, yu, _ in checked]
    arrays = [np.array(v) for v in zip(*per_group, strict=True)]
    counts = Counts(*(a if groups is not None else a[0] for a in arrays))
    prior = beta_priors(prior, variant)
    exact = conjugate_prior(prior, variant)
    if method == "both" and exact is None:
        raise ValueError("prior has no exact closed form for model A: theta's (a, b) must be "
                         "(a_q1 + b_q1, a_q0 + b_q0), i.e. all three from one Dirichlet on the "
                         "2x2 table; use method='pymc' (no check) or such a prior.")
    pm_model = model(*counts, variant=variant, prior=prior, groups=groups)
    draws = _with_finite_mean(sample(pm_model, random_seed, sample_kwargs,
                                     defaults={"target_accept": TARGET_ACCEPT}),
                              counts, random_seed)
    notes = []
    post = draws["posterior"].to_dataset()
    p_chance = (post["mu1"] <= post["mu0"]).mean(SAMPLE_DIMS)
    for tag, p, c in zip(tags, np.atleast_1d(p_chance.values), per_group, strict=True):
        if p > 0.05:
            notes.append(f"{tag or ''}posterior P(kappa <= 0) = {p:.2f} > 0.05: the judge may be "
                         "no better than chance.")
        if min(c[:4]) == 0:
            notes.append(f"{tag or ''}an empty labelled cell: the posterior is defined but the "
                         "prior matters; see sensitivity().")
    _warn(notes, stacklevel=5)
    data = _stack([{k: int(v) for k, v in c._asdict().items()} for c in per_group], groups)
    closed = None
    if method == "both":
        exact_post = conjugate_posterior(counts, exact, ci_prob)
        dims = () if groups is None else ("group",)
        closed = xr.Dataset({k: (dims, v) for k, v in exact_post._asdict().items()},
                            coords=None if groups is None else {"group": groups})
    m, n = int(np.sum(counts.m)), int(np.sum(counts.n))
    return JudgeEvaluation.create(
        closed_form=closed, draws=draws, estimand="posterior/theta", model=pm_model, data=data,
        warnings=notes, description=f"model {variant.upper()} posterior of P(Y = 1) from {m} human "
                                    f"labels and {n} judge-only items, priors {prior}", **common)


def _with_finite_mean(draws: xr.DataTree, counts: Counts, random_seed) -> xr.DataTree:
    """Add ``theta_finite``, the posterior of the mean of all N true labels, to the posterior."""
    post = draws["posterior"].to_dataset()
    rng = as_seed(random_seed)
    mu1, mu0 = post["mu1"], post["mu0"]  # dims (chain, draw[, group])
    hidden = rng.binomial(counts.t1, mu1.values) + rng.binomial(counts.t0, mu0.values)
    theta_finite = (np.add(counts.n11, counts.n10) + hidden) / np.add(counts.m, counts.n)
    draws["posterior"] = xr.DataTree(post.assign(theta_finite=mu1.copy(data=theta_finite)))
    return draws


# ========================================================================== BvM agreement
def eif_agreement(ev: Evaluation) -> Table:
    r"""Posterior of ``theta`` vs the EIF estimate (Bernstein–von Mises).

    For each group: ``mean`` tests :math:`|\bar\theta - \hat\theta_{EIF}| \le 0.25\,
    \mathrm{SE}_{EIF} + 4\,\mathrm{MCSE}` and ``sd_ratio`` tests :math:`|\mathrm{sd}/
    \mathrm{SE}_{EIF} - 1| \le 0.10`. The two agree to :math:`O(1/m)` only, so ``expected`` is
    True only for :math:`m \ge 100` and no empty labelled cell; elsewhere a failure is
    information (the prior matters), not an error.

    Parameters
    ----------
    ev : Evaluation
        From ``judge(..., method="pymc" or "both")``.

    Returns
    -------
    Table
        Indexed by (``group``,) ``test`` with columns ``eif``, ``posterior``, ``statistic``,
        ``tolerance``, ``expected``, ``passed``; ``attrs["passed"]`` is True when every expected
        test passed.

    Raises
    ------
    ValueError
        If ``ev`` is not a judge evaluation with posterior draws.

    Examples
    --------
    Exact draws of Model B's posterior (independent Beta laws of the judge rate :math:`p` and the
    cell means :math:`\mu_1, \mu_0`, uniform priors), standing in for ``method="pymc"``:

    >>> import xarray as xr
    >>> from bayeval.methods.judge.fast import Counts
    >>> c = Counts(n11=36, n10=14, n01=29, n00=121, t1=627, t0=1173)
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(1 + 627 + 65, 1 + 1173 + 135, size=(2, 1000))
    >>> mu1 = rng.beta(1 + 36, 1 + 29, size=(2, 1000))
    >>> mu0 = rng.beta(1 + 14, 1 + 121, size=(2, 1000))
    >>> theta = xr.Dataset({"theta": (("chain", "draw"), p * mu1 + (1 - p) * mu0)})
    >>> ev = Evaluation.create(method="judge", variant="pymc", estimand="posterior/theta",
    ...                        draws=xr.DataTree.from_dict({"posterior": theta}),
    ...                        data=xr.Dataset(c._asdict()))
    >>> eif_agreement(ev).round(4)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    posterior vs EIF (Bernstein–von Mises: mean within 0.25 SE, ...): agree
                 eif  posterior  statistic  tolerance  expected  passed
    test
    mean      0.2595     0.2619     0.0881     0.3413      True    True
    sd_ratio  1.0000     0.9750     0.0250     0.1000      True    True
    """
    if ev.meta["method"] == "judge_categories":
        raise ValueError("eif_agreement() compares a 0/1 judge's posterior with its EIF "
                         "estimate; for K categories, ev.check() of method='both' compares the "
                         "posterior with exact draws of the conjugate one.")
    if ev.meta["method"] != "judge" or ev.draws is None:
        raise ValueError("eif_agreement() needs an evaluation from judge(..., method='pymc' "
                         "or 'both').")
    import arviz as az

    data = ev.tree["data"].to_dataset()
    draws = ev.draws
    grouped = "group" in draws.dims
    frames = []
    for g in (data["group"].values if grouped else [None]):
        sel = {} if g is None else {"group": g}
        c = Counts(*(int(data[k].sel(sel)) for k in COUNT_NAMES))
        eif = eif_cells(*c.cells())
        x = draws.sel(sel).transpose(*SAMPLE_DIMS)
        mcse = float(az.mcse(x.values, method="mean"))
        mean, sd = float(x.mean()), float(x.std(ddof=1))
        expected = c.m >= AGREEMENT_MIN_M and min(c[:4]) > 0
        rows = pd.DataFrame(
            {"eif": [float(eif.estimate), 1.0], "posterior": [mean, sd / float(eif.se)],
             "statistic": [abs(mean - float(eif.estimate)) / float(eif.se),
                           abs(sd / float(eif.se) - 1)],
             "tolerance": [AGREEMENT_MEAN + 4 * mcse / float(eif.se), AGREEMENT_SD],
             "expected": expected}, index=pd.Index(["mean", "sd_ratio"], name="test"))
        rows["passed"] = rows["statistic"] <= rows["tolerance"]
        frames.append(rows if g is None else rows.assign(group=g).set_index("group", append=True)
                      .reorder_levels(["group", "test"]))
    frame = pd.concat(frames)
    passed = bool(frame.loc[frame["expected"], "passed"].all())
    caption = (f"posterior vs EIF (Bernstein–von Mises: mean within {AGREEMENT_MEAN} SE, sd "
               f"ratio within 1 ± {AGREEMENT_SD}; expected at m >= {AGREEMENT_MIN_M} without "
               "empty cells): "
               + ("agree" if passed else "DISAGREE"))
    return table(frame, caption, passed=passed)
