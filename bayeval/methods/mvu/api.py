r"""Missing value uncertainty (MVU): would collecting the missing features change the prediction?

A test row has observed features :math:`x_O` and missing :math:`x_M`. Its **MVU distribution** is
the law of the classifier's probabilities :math:`\Phi = \pi(x_O, X_M)`,
:math:`X_M \sim p(x_M \mid x_O)`. The **hard confidence** :math:`c_\mathrm{hard} = \max_j
P(\arg\max_j \Phi_j = j)` is the probability that the decision does not change once the missing
features are collected; the **soft confidence** :math:`c_\mathrm{soft} = \max_j \mathrm{E}\Phi_j`
is the usual Bayes-rule confidence (see :mod:`bayeval.methods.mvu.fast`).

Estimators of the MVU (``imputer`` of :func:`mvu`):

* ``"gaussian"`` (the default for floating-point features): the push-forward of the conditional
  Gaussian :math:`N(\mu_{M|O}, \Sigma_{M|O})` fitted to complete training rows. For a linear
  classifier the logits :math:`z = W x + b` are Gaussian, so :math:`c_\mathrm{hard}` is exact: a
  normal CDF (binary) or a Gaussian orthant probability (multiclass). Otherwise ``draws``
  imputations per row are pushed through the classifier;
* ``"copula"`` (the default when the training DataFrame has integer, boolean or categorical
  columns): a Gaussian copula (:mod:`bayeval.methods.mvu.copula`) draws the missing features,
  continuous or not, from their conditional law given the observed ones; ``draws`` imputations
  per row are pushed through the classifier, which gets DataFrames with the training columns'
  dtypes and levels;
* ``"mean"``, ``"zero"``, ``"conditional_mean"``: single imputation plus a variance heuristic
  (point mass, s-max-variance or scale-probability Dirichlet; the paper's baselines);
* ``"dmv"``: Direct Missing Value, a network trained to output the Dirichlet MVU directly;
* any object with ``sample(X, mask, draws, random_seed) -> (n, S, d)`` (e.g. an inpainting
  model): its imputations are pushed through the classifier.

Generative models (``method="pymc"``, :func:`bayeval.methods.mvu.models.model`): Model A
(Gaussian imputation with its parameters' posterior), Model B (a Bayesian Dirichlet fitted to the
MVU draws of a sampler object) and Model C (Bayesian DMV). With a posterior,
:math:`P(V = j) = \frac1S\sum_s P_j(\theta^{(s)})` (average, then maximise) and
``c_hard_lower``/``c_hard_upper`` are the interval of :math:`P_{y_\mathrm{hard}}(\theta^{(s)})`.

``summary()`` is indexed by ``instance``. ``mean``, ``sd``, ``lower``, ``upper`` describe
:math:`\Phi_{\hat y}`, the probability the classifier will give the decided class
:math:`\hat y = y_\mathrm{hard}` once the missing features are collected (a point mass at
:math:`\pi_{\hat y}(x)` for a complete row). After ``method="both"``, ``check()`` compares the
posterior's draws of :math:`\Phi_{\hat y}` and of :math:`P(V = \hat y \mid \theta)` (whose mean
is ``c_hard``) with the same laws under independent posterior draws, and runs the sampler's
tests (:meth:`~bayeval.methods.mvu.result.MVUEvaluation.check`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.deprecation import renamed_arguments
from bayeval.evaluation import CI_KINDS
from bayeval.methods.mvu.copula import CopulaImputer, FeatureCodec
from bayeval.methods.mvu.estimators import (
    DMV,
    SHIFTS,
    GaussianImputer,
    alpha_max_variance,
    alpha_scale_probability,
    as_classifier,
    classifier_of,
    dirichlet_mle,
    dirichlet_moments,
    linear_parts,
    pushforward,
)
from bayeval.methods.mvu.mnar import MNARGaussianImputer, as_feature_mnar
from bayeval.methods.mvu.models import posterior
from bayeval.methods.mvu.plan import STATE, CopulaPlanner, FeaturePlanner, plan_units
from bayeval.methods.mvu.result import (
    DECISION,
    QUANTITIES,
    MVUEvaluation,
    dirichlet,
    empirical,
    gaussian_logits,
    merge,
    point_mass,
)
from bayeval.sampling import stage
from bayeval.validation import (
    as_array,
    as_choice,
    as_ci_prob,
    as_positive_int,
    as_sample_kwargs,
    as_seed,
    named_columns,
)
from bayeval.validation.memory import FLOAT_BYTES, check_memory

__all__ = ["mvu"]

METHODS = ("exact", "mc", "pymc", "both")
IMPUTERS = ("gaussian", "copula", "mean", "zero", "conditional_mean", "dmv")
HEURISTICS = ("zero_var", "max_var", "scale_prob")
DIRICHLET_FITS = ("mle", "moments")
INFERENCE = ("laplace", "nuts")
ASSUMPTIONS = ("Missingness is completely at random (MCAR) and the training rows are complete and "
               "from the same population. The classifier is fixed: c_hard is the probability that "
               "its decision stays the same once the missing features are collected, under the "
               "chosen model of the missing features (it is only as good as that model).")
MNAR_ASSUMPTIONS = ("Missingness may depend on the missing values: given the observed features, "
                    "every missing feature is shifted by delta of its conditional standard "
                    "deviation, delta from the prior given as mnar= (the data cannot tell delta; "
                    "c_hard_mar is the answer at delta = 0). The training rows are complete and "
                    "from the same population. The classifier is fixed: c_hard is the "
                    "probability that its decision stays the same once the missing features are "
                    "collected, under this model of the missing features.")
MNAR_FEATURE_ASSUMPTIONS = (
    "Missingness may depend on the missing values: given the observed features, each missing "
    "feature named in mnar= is shifted by delta_i = mean_i + sd_i eps of its conditional standard "
    "deviation, one eps ~ N(0, 1) shared by the features, the others not at all (the data cannot "
    "tell the deltas; c_hard_mar is the answer at delta = 0). The training rows are complete and "
    "from the same population. The classifier is fixed: c_hard is the probability that its "
    "decision stays the same once the missing features are collected, under this model of the "
    "missing features.")


def _shifted(shift, features) -> str:
    """What the MNAR shift moves, in words."""
    mean, sd, named = shift
    if named is None:
        return f"every missing feature shifted by delta ~ N({mean[0]:g}, {sd[0]:g}^2)"
    return "missing features shifted by " + ", ".join(
        f"{features[i]}: N({mean[i]:g}, {sd[i]:g}^2)" for i in np.flatnonzero(named))


# ------------------------------------------------------------------------------------ entry
def _columns(given, names, what: str) -> list[int]:
    """Positions of ``names`` among the ``given`` column labels of ``what``."""
    given = list(given)
    lacking, unknown = [c for c in names if c not in given], [c for c in given if c not in names]
    if lacking or unknown:
        raise ValueError(f"{what} must have the columns {list(names)} (the classifier's features "
                         f"or X's); missing {lacking}, unknown {unknown}.")
    return [given.index(c) for c in names]


def _labels(owner, X, mask, train, groups):
    """X, mask, train and groups in the classifier's feature order, X's row labels (its index),
    the feature names (the classifier's ``feature_names_in_``, else X's columns) and the
    classifier's columns."""
    fitted = getattr(owner, "feature_names_in_", None)
    columns = None if fitted is None else list(fitted)
    names = columns
    index = None
    if isinstance(X, pd.DataFrame):
        index = X.index
        if isinstance(index, pd.MultiIndex) or not index.is_unique:
            raise ValueError("X's index labels the rows of the result, so it must be flat and "
                             "unique; got a " + ("MultiIndex" if isinstance(index, pd.MultiIndex)
                                                 else "repeated label") + " (reset_index() "
                             "numbers the rows).")
        names = list(X.columns) if names is None else names
        order = _columns(X.columns, names, "X")
        X = X.iloc[:, order]
        if isinstance(mask, pd.DataFrame):
            mask = mask.iloc[:, _columns(mask.columns, names, "mask")]
        elif mask is not None and np.ndim(mask) == 2 and np.shape(mask)[1] == len(order):
            mask = np.asarray(mask)[:, order]
        if groups is not None and np.shape(groups) == (len(order),):
            groups = np.asarray(groups)[order]
    if isinstance(train, pd.DataFrame) and names is not None:
        train = train.iloc[:, _columns(train.columns, names, "train")]
    return X, mask, train, groups, index, names, columns


def _sensors(groups, features) -> tuple[np.ndarray | None, dict | None]:
    """Each feature's sensor as an integer code (for DMV), and the sensors of several features,
    ``{name: [feature positions]}`` (the units of :meth:`MVUEvaluation.decide`'s plans), from
    ``groups``: a dict ``{name: [features]}`` or each feature's sensor.

    Examples
    --------
    >>> _sensors({"panel": ["b", "c"]}, np.array(["a", "b", "c"]))
    (array([0, 1, 1]), {'panel': [1, 2]})
    >>> _sensors(np.array(["ecg", "bp", "ecg"]), np.array(["a", "b", "c"]))
    (array([1, 0, 1]), {'ecg': [0, 2]})
    """
    if groups is None:
        return None, None
    if isinstance(groups, dict):
        labels, members = plan_units(groups, features)
    else:
        values, codes = np.unique(np.asarray(groups), return_inverse=True)
        labels = [v.item() if isinstance(v, np.generic) else v for v in values]
        members = [np.flatnonzero(codes == u).tolist() for u in range(values.size)]
    codes = np.empty(len(features), dtype=np.int64)
    for u, positions in enumerate(members):
        codes[positions] = u
    return codes, {str(label): [int(i) for i in positions]
                   for label, positions in zip(labels, members, strict=True) if len(positions) > 1}


def _inputs(predict_proba, X, mask, train, groups):
    """Validated (predict, x, m, train, groups, probe rows, row labels, feature names, the
    classifier's columns)."""
    owner = classifier_of(predict_proba)
    X, mask, train, groups, index, names, columns = _labels(owner, X, mask, train, groups)
    if FeatureCodec.mixed(train):  # the codes of integer and categorical columns
        columns = FeatureCodec(train)
        X, train, names = columns.encode(X, "X"), columns.encode(train, "train"), columns.names
    elif isinstance(X, pd.DataFrame) and not all(_numeric(X[c]) for c in X.columns):
        odd = [c for c in X.columns if not _numeric(X[c])]
        raise ValueError(f"X has the non-numeric column(s) {odd}; imputing them needs train as "
                         "a DataFrame of complete rows with the same columns and dtypes (its "
                         "levels define theirs).")
    predict = as_classifier(predict_proba, columns)
    x = as_array(X, "X", ndim=2, allow_nan=True)
    m = np.isnan(x)
    if mask is not None:
        given = as_array(mask, "mask", ndim=2)
        if given.shape != x.shape or ((given != 0) & (given != 1)).any():
            raise ValueError(f"mask must be 0/1 (1 = missing) with the shape of X {x.shape}; got "
                             f"shape {given.shape}.")
        if (m & (given == 0)).any():
            raise ValueError("X has NaN where mask says the value is observed; mark every NaN "
                             "as missing in mask.")
        m = given.astype(bool)
    d = x.shape[1]
    if train is not None:
        train = as_array(train, "train", ndim=2)
        if train.shape[1] != d:
            raise ValueError(f"X has {d} features but train has {train.shape[1]}; they must "
                             "describe the same features.")
        if len(train) < 2:
            raise ValueError(f"train has {len(train)} row; the imputers learn the features' "
                             "mean and covariance from it and need at least 2 complete rows.")
    expected = getattr(owner, "n_features_in_", None)
    if expected is not None and expected != d:
        raise ValueError(f"X has {d} features but the classifier (predict_proba) was fitted on "
                         f"{expected}.")
    if groups is not None and not isinstance(groups, dict) and np.shape(groups) != (d,):
        raise ValueError(f"groups must be a dict {{name: [features]}} or give the sensor of each "
                         f"of the {d} features; got shape {np.shape(groups)}.")
    probe = train[:20] if train is not None else np.where(m, 0.0, np.nan_to_num(x))[:20]
    rows = np.arange(len(x)) if index is None else index.to_numpy()
    features = np.arange(d) if names is None else np.asarray(names)
    return predict, x, m, train, _sensors(groups, features), probe, rows, features, columns


def _numeric(column: pd.Series) -> bool:
    """Numbers (or None/NaN), not booleans or categories."""
    if column.dtype == object:
        return all(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))
                   for v in column.dropna())
    return (pd.api.types.is_numeric_dtype(column.dtype)
            and not pd.api.types.is_bool_dtype(column.dtype))


def _weights(weights, threshold, k: int):
    if threshold is not None:
        if weights is not None:
            raise ValueError("give threshold (binary) or weights, not both.")
        if k != 2 or not 0 < threshold < 1:
            raise ValueError(f"threshold must lie in (0, 1) and needs a binary classifier; got "
                             f"{threshold} with {k} classes.")
        return np.array([threshold, 1 - threshold])
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (k,) or not np.isfinite(w).all() or (w <= 0).any():
        raise ValueError(f"weights must be {k} positive class weights, got {weights!r}.")
    return w


# -------------------------------------------------------------------------------- fast path
def _heuristic_alpha(phi, heuristic: str, param):
    if heuristic == "max_var":
        s = 0.5 if param is None else param
        if not 0 < s < 1:
            raise ValueError(f"heuristic_param (s of 'max_var') must lie in (0, 1), got {s}.")
        return alpha_max_variance(phi, s)
    c = 10.0 if param is None else param
    if not c > 0:
        raise ValueError(f"heuristic_param (c of 'scale_prob') must be positive, got {c}.")
    return alpha_scale_probability(phi, c)


def _dirichlet_opts(opts) -> dict:
    return {"random_seed": opts["rng"], **{k: opts[k] for k in ("weights", "how", "draws",
                                                                  "ci_prob", "ci_kind")}}


def _fit_draws(phi, fit: str, opts) -> tuple[dict, list[str]]:
    """Dirichlet fit (moments or maximum likelihood) of MVU draws, and notes. Rows without
    spread are point masses; rows whose draws have no maximum-likelihood Dirichlet (their spread
    is below the likelihood's 1e-6 floor) get the moments fit, floored at 1e-35 (a class with
    probability 0 in every draw)."""
    mu, kappa = dirichlet_moments(phi)
    spread = np.isfinite(kappa)
    dirac = point_mass(mu[~spread], opts["weights"])
    if not spread.any():
        return dirac, []
    alpha = np.maximum(mu[spread] * kappa[spread, None], 1e-35)
    notes = []
    if fit == "mle":
        mle = dirichlet_mle(phi[spread])
        none = np.isnan(mle).any(-1)
        alpha = np.where(none[:, None], alpha, mle)
        if none.any():
            notes.append(f"{int(none.sum())} row(s) have MVU draws within 1e-6 of a vertex, "
                         "where the maximum-likelihood Dirichlet does not exist: they got the "
                         "moments fit")
    fitted = dirichlet(opts["scale"] * alpha, **_dirichlet_opts(opts))
    return merge(len(phi), np.flatnonzero(spread), fitted, np.flatnonzero(~spread), dirac), notes


def _fast_path(predict, x, m, train, imputer, method, opts) -> tuple[dict, list[str]]:
    """Fast-path results for the rows with something missing, and warnings."""
    rng, weights = opts["rng"], opts["weights"]
    notes = []
    if imputer in ("mean", "zero", "conditional_mean"):
        fill = (np.zeros(x.shape[1]) if imputer == "zero" else train.mean(0))
        filled = (GaussianImputer.fit(train).conditional(x, m)[0] if imputer == "conditional_mean"
                  else np.where(m, fill, x))
        phi = predict(filled)
        if opts["heuristic"] == "zero_var":
            return point_mass(phi, weights), notes
        alpha = opts["scale"] * _heuristic_alpha(phi, opts["heuristic"], opts["heuristic_param"])
        return dirichlet(alpha, **_dirichlet_opts(opts)), notes
    if imputer == "dmv":
        dmv = opts["dmv"]
        if dmv is None:
            with stage(f"MVU: training DMV on {len(train):,} rows"):
                dmv = DMV(groups=opts["groups"], random_seed=rng).fit(train, predict)
        return dirichlet(opts["scale"] * dmv.alpha(x, m), **_dirichlet_opts(opts)), notes
    gaussian = isinstance(imputer, GaussianImputer)
    linear = (linear_parts(opts["classifier"], opts["probe"], opts["columns"]) if gaussian
              else None)
    if gaussian and linear is not None and method == "exact" and opts["dirichlet"] is None:
        a, b = imputer.logits(x, m, *linear)
        return gaussian_logits(a, b, weights=weights, draws=opts["draws"], random_seed=rng,
                               ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"]), notes
    if opts["dirichlet"] is None and method == "exact" and opts["scale"] != 1:
        raise ValueError("scale calibrates a Dirichlet MVU, and this classifier's MVU is the "
                         "vote of its imputations; pass dirichlet='mle' or 'moments' to "
                         "summarise them by a Dirichlet and scale it.")
    n, d = x.shape  # the imputations, their temporaries and their predicted probabilities
    check_memory(float(n) * opts["draws"] * (2 * d + opts["n_classes"]) * FLOAT_BYTES, "draws",
                 f"{opts['draws']:,} imputations of {n:,} rows of {d} features",
                 "use fewer draws, or evaluate the rows in batches")
    qmc = gaussian and method == "exact"
    draws = (imputer.sample(x, m, opts["draws"], rng, qmc=True) if qmc
             else imputer.sample(x, m, opts["draws"], rng))
    phi = pushforward(predict, draws)
    if opts["dirichlet"] is not None:
        return _fit_draws(phi, opts["dirichlet"], opts)
    if qmc:
        notes.append("the classifier is not linear (no coef_ reproducing its predict_proba), so "
                     "c_hard has no closed form: it is the vote frequency of "
                     f"{opts['draws']} quasi-Monte-Carlo imputations per row pushed through the "
                     f"classifier ({min(SHIFTS, opts['draws'])} random shifts; c_hard_se from "
                     "their spread)")
    return empirical(phi, weights=weights, ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"],
                     shifts=min(SHIFTS, opts["draws"]) if qmc else None), notes


def _check_options(imputer, method, train, opts) -> None:
    """Combinations that cannot run, with what to do instead."""
    if isinstance(imputer, str):
        as_choice(imputer, "imputer", IMPUTERS)
    elif not callable(getattr(imputer, "sample", None)):
        raise ValueError("imputer must be one of " + ", ".join(map(repr, IMPUTERS)) + " or an "
                         "object with sample(X, mask, draws, random_seed); got "
                         f"{type(imputer).__name__}.")
    needs_train = (imputer in ("gaussian", "copula", "mean", "conditional_mean")
                   or (imputer == "dmv" and (opts["dmv"] is None or method in ("pymc", "both"))))
    if needs_train and train is None:
        raise ValueError(f"imputer={imputer!r} with method={method!r} needs train: complete "
                         "training rows (no NaN) of the same features.")
    codec = opts["columns"]
    if isinstance(codec, FeatureCodec) and imputer in ("mean", "zero", "conditional_mean", "dmv"):
        kinds = [f"{n} ({k})" for n, k in zip(codec.names, codec.kinds, strict=True)
                 if k != "continuous"]
        raise ValueError(f"imputer={imputer!r} treats every feature as a number, and train has "
                         f"the integer, boolean or categorical columns {kinds}; use "
                         "imputer='copula' (the default for such columns) or cast them to "
                         "float.")
    if method in ("pymc", "both"):
        if imputer == "copula" or isinstance(imputer, CopulaImputer):
            raise ValueError("the copula imputer has no generative model here, and its MVU has "
                             "atoms (discrete features) that a Dirichlet does not describe; use "
                             "method='exact' or 'mc' (the vote of its imputations).")
        if imputer in ("mean", "zero", "conditional_mean"):
            raise ValueError(f"imputer={imputer!r} has no generative model (its Dirichlet is "
                             "fixed by a heuristic); use method='exact' or 'mc'.")
        if opts["ci_kind"] != "eti":
            raise ValueError("ci_kind='hdi' needs method='exact' or 'mc'; the posterior-"
                             "predictive intervals are equal-tailed (ev.summary(ci_kind='hdi') "
                             "gives the HDI of the draws).")
    if opts["mnar"] is not None:
        if not (imputer == "gaussian" or isinstance(imputer, GaussianImputer)):
            raise ValueError(f"mnar= shifts the conditional Gaussian of the missing features, so "
                             f"it needs imputer='gaussian' (or a GaussianImputer); imputer="
                             f"{imputer if isinstance(imputer, str) else type(imputer).__name__!r}"
                             " has no conditional law to shift (single imputations, DMV's "
                             "Dirichlet and sampler objects are refused).")
        if method in ("pymc", "both"):
            raise ValueError("mnar= is not part of the generative models; use method='exact' or "
                             "'mc' (exact for a linear classifier).")
    as_choice(opts["heuristic"], "heuristic", HEURISTICS)
    if opts["dirichlet"] is not None:
        as_choice(opts["dirichlet"], "dirichlet", DIRICHLET_FITS)
    as_choice(opts["inference"], "inference", INFERENCE)
    as_positive_int(opts["draws"], "draws", least=2)
    if method in ("pymc", "both"):
        opts["sample_kwargs"] = as_sample_kwargs(opts["sample_kwargs"])
    scale = opts["scale"]
    if isinstance(scale, bool) or not (isinstance(scale, (int, float, np.number))
                                       and np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale (the calibration factor of alpha) must be positive, got "
                         f"{opts['scale']!r}.")


def _tree(tree: xr.DataTree, post: xr.Dataset, part: dict, dirac: dict, rows: np.ndarray,
          complete: np.ndarray, labels: np.ndarray) -> xr.DataTree:
    """The sampler's groups, ``posterior_predictive`` (``phi_hat``, ``vote_hat``) on the thinned
    draws for all rows and, after ``method="both"``, the ``check_reference``; a complete row is a
    point mass (its reference mean summed in the order check() sums its draws, so that they are
    equal)."""
    groups = {k: v.to_dataset() for k, v in tree.children.items()}
    shape = (post.sizes["chain"], post.sizes["draw"])
    dims, n = ("chain", "draw", "instance"), len(rows) + len(complete)
    predictive = {}
    for key, value in (("phi_hat", dirac["mean"]), ("vote_hat", 1.0)):
        full = np.empty((*shape, n))
        full[..., rows], full[..., complete] = part.pop(key), value
        predictive[key] = (dims, full)
    groups["posterior_predictive"] = xr.Dataset(
        predictive, coords={"chain": post["chain"].values, "draw": post["draw"].values,
                            "instance": labels})
    reference = part.pop("reference", None)
    if reference is not None:
        size = shape[0] * shape[1]
        point = np.array([[np.full(size, v).mean() for v in values]
                          for values in (dirac["mean"], np.ones(complete.size))])
        full = {key: np.empty((2, n)) for key in ("mean", "sd", "lower", "upper",
                                                   "interval_mass")}
        for key, value in full.items():
            value[:, rows] = reference[key]
            exact = np.stack([dirac["mean"], np.ones(complete.size)])
            value[:, complete] = {"mean": point, "sd": 0.0, "lower": exact, "upper": exact,
                                  "interval_mass": 1.0}[key]
        n_ref = np.full(n, np.inf)
        n_ref[rows] = reference["n_reference"]
        groups["check_reference"] = xr.Dataset(
            {**{key: (("quantity", "instance"), value) for key, value in full.items()},
             "n_reference": ("instance", n_ref)},
            coords={"quantity": list(QUANTITIES), "instance": labels})
    return xr.DataTree.from_dict(groups)


@renamed_arguments(n_draws="draws")
def mvu(predict_proba, X, *, data=None, mask=None, groups=None, imputer="gaussian",
        method: str = "exact",
        train=None, heuristic: str = "max_var", heuristic_param: float | None = None,
        dirichlet: str | None = None, draws: int = 1000, weights=None,
        threshold: float | None = None, scale: float = 1.0, dmv: DMV | None = None, mnar=None,
        inference: str = "laplace", ci_prob: float = 0.95, ci_kind: str = "eti",
        random_seed=None, sample_kwargs: dict[str, Any] | None = None) -> MVUEvaluation:
    r"""Would collecting the missing features change the prediction? Hard confidence per row.

    Parameters
    ----------
    predict_proba : classifier or callable
        A fitted classifier with ``predict_proba`` (scikit-learn style) or a function
        ``X -> (n, K)`` probabilities (or the positive-class probability, shape (n,)).
    X : array or DataFrame (n, d)
        The rows to decide on, NaN where a feature is missing. A DataFrame's index labels the
        rows of the result (``instance``) and its column names the features; its columns (and
        those of a DataFrame ``train`` or ``mask``) are put in the order of the classifier's
        ``feature_names_in_``, and the classifier is called with a DataFrame of those columns
        (with the dtypes and levels of ``train``'s columns: integers, booleans, categoricals,
        strings; None or NaN marks a missing value).
        Or a list of column names of ``data`` (a dict ``{feature: column}`` renames them).
    data : table, optional
        A pandas DataFrame or pyarrow Table whose columns ``X`` names; its index labels the
        rows of the result and of :meth:`~MVUEvaluation.decide`
        (:mod:`bayeval.validation.tables`).
    mask : array (n, d) of 0/1, optional
        1 marks a missing feature (overrides NaN; every NaN must be marked).
    groups : dict or array (d,), optional
        Features measured together (a sensor, a panel of tests): ``{name: [features]}``, or
        each feature's sensor. DMV masks and flags sensors as a whole, and
        :meth:`~MVUEvaluation.decide` plans each as one measurement.
    imputer : {"gaussian", "copula", "mean", "zero", "conditional_mean", "dmv"} or object
        The model of the missing features (module docstring); a :class:`GaussianImputer` or
        :class:`~bayeval.methods.mvu.copula.CopulaImputer` with fixed parameters, or any object
        with ``sample(X, mask, draws, random_seed)`` (on mixed data it gets and returns the
        codes of :class:`~bayeval.methods.mvu.copula.FeatureCodec`). ``"gaussian"`` becomes
        ``"copula"`` when ``train`` is a DataFrame with integer, boolean or categorical columns
        (said in the warnings).
    method : {"exact", "mc", "pymc", "both"}
        ``"exact"``: exact hard confidence of the estimator's MVU (normal CDF / orthant
        probability for a linear classifier under Gaussian imputation, Beta/Dirichlet for the
        heuristics and DMV; any other classifier's MVU is the vote frequency of ``draws``
        imputations, quasi-Monte-Carlo under Gaussian imputation). ``"mc"``: vote frequencies
        of ``draws`` independent MVU (or Dirichlet) draws. ``"pymc"``: Model A
        (Gaussian), B (sampler objects) or C (``"dmv"``). ``"both"``: the same, plus the
        reference of :meth:`~bayeval.methods.mvu.result.MVUEvaluation.check`, computed from
        independent posterior draws (any classifier: exact laws per draw where they exist,
        otherwise one imputation per draw pushed through the classifier).
    train : array (N, d) or table, optional
        Complete training rows (fits the imputer, the training means, DMV and Models A and C);
        a table with ``X`` given as column names has them under the same names.
    heuristic : {"zero_var", "max_var", "scale_prob"}
        Variance heuristic of the single imputers; ``heuristic_param`` is s (default 0.5) or c
        (default 10).
    dirichlet : {"mle", "moments"}, optional
        Summarise MVU draws by this Dirichlet fit even when an exact path exists (rows whose
        draws have no maximum-likelihood Dirichlet get the moments fit, said in the warnings).
    draws : int
        MVU draws (imputations pushed through the classifier) per row where the MVU is sampled,
        vote draws per row of ``method="mc"`` under a Dirichlet MVU, softmax draws of multiclass
        Gaussian logits; at least 2.
    weights, threshold : optional
        Cost-sensitive decisions: class weights, or the binary threshold t (class 1 when
        :math:`\phi_1 > t`, i.e. weights (t, 1 - t)).
    scale : float
        Post-hoc calibration :math:`\alpha \to \lambda\alpha` of Dirichlet MVUs (see
        :func:`bayeval.methods.mvu.calibration.fit_scale`).
    dmv : DMV, optional
        A fitted :class:`DMV` to reuse (else one is trained on ``train``).
    mnar : float, (mean, sd) or mapping, optional
        Missing not at random (Gaussian imputation only): every missing feature is shifted by
        :math:`\delta` of its conditional standard deviation,
        :math:`x_M \mid x_O \sim N(\hat x_M + \delta\sigma_M, \Sigma_{M|O})`. A number fixes
        :math:`\delta`; ``(mean, sd)`` is a normal prior on it, integrated exactly
        (:mod:`bayeval.methods.mvu.mnar`). A mapping ``{feature: delta or (mean, sd)}`` (by
        name or position) shifts feature :math:`i` by :math:`\delta_i = \mu_i +
        \tau_i\varepsilon` of its own conditional standard deviation, one
        :math:`\varepsilon \sim N(0, 1)` for all (features not named are not shifted). The
        summary then also carries ``y_hard_mar`` and ``c_hard_mar``, the answer at
        :math:`\delta = 0`.
    inference : {"laplace", "nuts"}
        Model C's posterior: Laplace approximation at the MAP, or NUTS.
    ci_prob, ci_kind : optional
        Level and kind (``"eti"`` or ``"hdi"``) of the intervals of :math:`\Phi_{\hat y}`.
    random_seed : int or numpy.random.Generator, optional
        Seeds the imputations, vote draws, DMV training and the sampler.
    sample_kwargs : dict, optional
        Passed to ``pm.sample``.

    Returns
    -------
    MVUEvaluation
        ``summary()`` per ``instance``: ``mean``, ``sd``, ``lower``, ``upper`` of
        :math:`\Phi_{\hat y}` (the classifier's probability of the decided class once everything
        is collected), ``y_hard``, ``c_hard`` (with ``c_hard_lower``/``c_hard_upper`` under a
        posterior, ``c_hard_se`` for Monte Carlo), ``y_soft``, ``c_soft``, ``n_missing``. A row
        with nothing missing has ``c_hard = 1``; a row with everything missing gets the prior MVU
        (the same for all such rows). ``decide()`` says where to collect.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> rng = np.random.default_rng(0)
    >>> train = rng.multivariate_normal([0, 0], [[0.3, 0.383406], [0.383406, 1]], size=20000)
    >>> clf = LinearClassifier([[1.0, 1.0]], [-1.0])  # pi(x) = sigmoid(x1 + x2 - 1)
    >>> ev = mvu(clf, [[np.nan, 0.9], [2.0, np.nan], [0.2, 0.3]], train=train)
    >>> ev.summary()[["y_hard", "c_hard", "y_soft", "c_soft"]].round(2)
    ... # doctest: +NORMALIZE_WHITESPACE
    mvu (exact), closed form: 95% equal-tailed intervals (eti)
              y_hard  c_hard  y_soft  c_soft
    instance
    0              1    0.73       1    0.56
    1              1    1.00       1    0.97
    2              0    1.00       0    0.62
    >>> ev.decide(0.9)["collect"].tolist()  # only the first row is worth completing
    [True, False, False]

    Rows of a DataFrame keep its index:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"x1": [np.nan, 2.0, 0.2], "x2": [0.9, np.nan, 0.3],
    ...                    "note": ["a", "b", "c"]}, index=["u7", "u8", "u9"])
    >>> ev = mvu(clf, ["x1", "x2"], data=df, train=pd.DataFrame(train, columns=["x1", "x2"]))
    >>> ev.decide(0.9)["collect"].to_dict()
    {'u7': True, 'u8': False, 'u9': False}
    """
    X, mask, train = named_columns(data, X=X, mask=mask, train=train)
    method = as_choice(method, "method", METHODS)
    opts = {"mnar": mnar, "heuristic": heuristic, "heuristic_param": heuristic_param,
            "dirichlet": dirichlet, "draws": draws, "scale": scale, "dmv": dmv,
            "inference": inference,
            "ci_prob": as_ci_prob(ci_prob), "ci_kind": as_choice(ci_kind, "ci_kind", CI_KINDS),
            "sample_kwargs": sample_kwargs, "classifier": predict_proba}
    predict, x, m, train, (groups, sensors), probe, labels, features, columns = _inputs(
        predict_proba, X, mask, train, groups)
    shift = None if mnar is None else as_feature_mnar(mnar, features)
    chosen = []
    if isinstance(columns, FeatureCodec) and isinstance(imputer, str) and imputer == "gaussian":
        imputer = "copula"
        chosen.append("train has integer, boolean or categorical columns (" + ", ".join(
            f"{n}: {k}" for n, k in zip(columns.names, columns.kinds, strict=True)
            if k != "continuous") + "), which a Gaussian would give values they cannot take: "
            "imputer='copula' draws every missing feature from its conditional law given the "
            "observed ones")
    opts.update(groups=groups, columns=columns)
    _check_options(imputer, method, train, opts)
    k = predict(probe).shape[1]
    rng = as_seed(random_seed)
    opts.update(weights=_weights(weights, threshold, k), probe=probe, rng=rng, method=method,
                n_classes=k,
                how="mc" if method == "mc" else "exact",
                seed=random_seed if isinstance(random_seed, (int, np.integer)) else None)
    name = imputer if isinstance(imputer, str) else type(imputer).__name__
    opts["model_a"] = name == "gaussian"
    if opts["model_a"]:
        imputer = GaussianImputer.fit(train)
    if name == "copula":
        kinds = columns.kinds if isinstance(columns, FeatureCodec) else None
        imputer = CopulaImputer.fit(train, kinds, random_seed=rng)
        if dirichlet is None:
            chosen.append(f"c_hard is the vote frequency of {draws} independent copula "
                          "imputations per row pushed through the classifier (c_hard_se = "
                          "sqrt(c(1 - c)/draws))")
    mar = imputer
    if shift is not None:
        imputer = MNARGaussianImputer.shifting(mar, mnar, features)
    classes = getattr(classifier_of(predict_proba), "classes_", None)
    classes = np.asarray(classes) if classes is not None and len(classes) == k else None
    missing = m.any(axis=1)
    rows, complete = np.flatnonzero(missing), np.flatnonzero(~missing)
    dirac = point_mass(predict(x[complete]) if complete.size else np.zeros((0, k)),
                         opts["weights"])
    notes, tree, model, iid = [], None, None, False
    same = {**opts, "rng": copy.deepcopy(rng)}  # the answer at random: the same random numbers
    if not rows.size:
        part = point_mass(np.zeros((0, k)))
        notes.append("no feature is missing: every decision is final (c_hard = 1); no model "
                     "was needed")
    elif method in ("pymc", "both"):
        part, model, sampled, post, notes, iid = posterior(predict, x[rows], m[rows], train,
                                                           imputer, opts)
        tree = _tree(sampled, post, part, dirac, rows, complete, labels)
    else:
        part, notes = _fast_path(predict, x[rows], m[rows], train, imputer, method, opts)
    res = merge(len(x), rows, part, complete, dirac)
    if shift is not None:
        at_random = res if not rows.size else merge(
            len(x), rows, _fast_path(predict, x[rows], m[rows], train, mar, method, same)[0],
            complete, dirac)
        res["y_hard_mar"], res["c_hard_mar"] = at_random["y_hard"], at_random["c_hard"]
        changed = int((res["y_hard"] != res["y_hard_mar"]).sum())
        notes.append(f"missing not at random: {_shifted(shift, features)} conditional "
                     f"standard deviations; mean c_hard {res['c_hard'].mean():.4g} against "
                     f"{res['c_hard_mar'].mean():.4g} at random (c_hard_mar), {changed} "
                     "decision(s) differ")
    res["n_missing"] = m.sum(axis=1)
    planner = None
    gaussian = isinstance(imputer, GaussianImputer)
    if (gaussian or isinstance(imputer, CopulaImputer)) and method in ("exact", "mc") and (
            dirichlet is None):  # the laws that bayes_actions and decide(costs=) draw from
        planner = (FeaturePlanner if gaussian else CopulaPlanner)(
            predict, imputer, x, m, res["y_hard"], res["c_hard"],
            linear=linear_parts(predict_proba, probe, columns) if gaussian else None,
            weights=opts["weights"], classes=classes, random_seed=rng)
    if classes is not None:
        for key in ("y_hard", "y_soft", "y_hard_mar"):
            if key in res:
                res[key] = classes[res[key]]
    order = ["mean", "sd", "lower", "upper", *DECISION, "interval_mass"]
    closed = xr.Dataset({v: ("instance", res[v]) for v in order if v in res},
                        coords={"instance": labels, "feature": features,
                                "class": np.arange(k) if classes is None else classes})
    closed["missing"] = (("instance", "feature"), m)
    closed["proba"] = (("instance", "class"), res["proba"])
    if "alpha" in res and not (imputer in ("mean", "zero", "conditional_mean")
                               and heuristic == "zero_var"):
        closed["alpha"] = (("instance", "class"), res["alpha"])
    data = xr.Dataset({"n_instances": len(x), "n_features": x.shape[1], "n_classes": k,
                       "n_train": 0 if train is None else len(train),
                       "fraction_missing": float(m.mean())})
    ev = MVUEvaluation.create(
        method="mvu", variant=method, closed_form=closed, draws=tree,
        estimand=None if tree is None else "posterior_predictive/phi_hat",
        ci_prob=opts["ci_prob"], ci_kind=opts["ci_kind"], iid_draws=iid, random_seed=opts["seed"],
        description=f"hard confidence of {len(x)} rows ({rows.size} with missing features), "
                    f"imputer {name}, scale {scale:g}"
                    + ("" if shift is None else f", MNAR: {_shifted(shift, features)}"),
        assumptions=(ASSUMPTIONS if shift is None else MNAR_ASSUMPTIONS if shift[2] is None
                     else MNAR_FEATURE_ASSUMPTIONS),
        warnings=[*chosen, *notes],
        data=data, model=model, imputer=name,
        hard_confidence=opts["how"], scale=float(scale), n_draws=int(draws), groups=sensors,
        weights=None if opts["weights"] is None else opts["weights"].tolist(),
        mnar=None if shift is None else [float(shift[0][0]), float(shift[1][0])]
        if shift[2] is None else {str(features[i]): [float(shift[0][i]), float(shift[1][i])]
                                  for i in np.flatnonzero(shift[2])})
    ev.planner = planner
    if gaussian and planner is not None:  # what bayes_actions, decide(costs=), ... need
        ev.tree[STATE] = xr.DataTree(planner.to_dataset(labels, features))
    return ev
