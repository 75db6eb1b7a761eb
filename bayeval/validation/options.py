"""Coercion and checking of options: levels, thresholds, names, seeds, counts, priors and
sampler settings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from bayeval.validation.arrays import describe

__all__ = [
    "as_alert_thresholds",
    "as_beta",
    "as_calibration",
    "as_choice",
    "as_ci_prob",
    "as_metrics",
    "as_mnar",
    "as_positive_int",
    "as_prior",
    "as_sample_kwargs",
    "as_seed",
    "as_threshold",
    "as_zero_division",
]


def _number(value: Any) -> bool:
    """A real number, not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def as_ci_prob(ci_prob: Any, name: str = "ci_prob") -> float:
    """An interval probability strictly between 0 and 1.

    Parameters
    ----------
    ci_prob : float
        The probability.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``ci_prob`` is not a number in (0, 1).

    Examples
    --------
    >>> as_ci_prob(0.9)
    0.9
    >>> as_ci_prob(95)
    Traceback (most recent call last):
        ...
    ValueError: ci_prob must lie strictly between 0 and 1 (e.g. 0.95), got 95.0.
    """
    if not _number(ci_prob):  # a string or a bool is not a level
        raise ValueError(f"{name} must be a number in (0, 1), got {describe(ci_prob)}.")
    value = float(ci_prob)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1 (e.g. 0.95), got {value}.")
    return value


def as_zero_division(value: Any, name: str = "zero_division") -> float:
    """The value of a metric where it is undefined: 0.0, 1.0 or NaN (scikit-learn's choices).

    Parameters
    ----------
    value : float
        The value.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For any other value, or a string such as ``"warn"``.

    Examples
    --------
    >>> as_zero_division(1), as_zero_division(np.nan)
    (1.0, nan)
    >>> as_zero_division("warn")
    Traceback (most recent call last):
        ...
    ValueError: zero_division must be 0.0, 1.0 or np.nan, got 'warn'.
    """
    if _number(value) and (value in (0, 1) or np.isnan(value)):  # a bool is not a value
        return float(value)
    raise ValueError(f"{name} must be 0.0, 1.0 or np.nan, got {value!r}.")


def as_beta(beta: Any, name: str = "beta") -> float:
    """The weight of recall in an F-beta score: a number >= 0, ``np.inf`` included.

    Parameters
    ----------
    beta : float
        The weight.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``beta`` is not a number >= 0.

    Examples
    --------
    >>> as_beta(2), as_beta(np.inf)
    (2.0, inf)
    >>> as_beta(-1)
    Traceback (most recent call last):
        ...
    ValueError: beta must be a number >= 0 (np.inf allowed), got -1.
    """
    if _number(beta) and beta >= 0:
        return float(beta)
    raise ValueError(f"{name} must be a number >= 0 (np.inf allowed), got {beta!r}.")


def as_choice(value: Any, name: str, choices: Iterable[str]) -> str:
    """One of a fixed set of string options.

    Parameters
    ----------
    value : str
        The option given.
    name : str
        The argument's public name, used in error messages.
    choices : iterable of str
        The accepted options.

    Returns
    -------
    str
        ``value`` unchanged.

    Raises
    ------
    ValueError
        If ``value`` is not among ``choices``; the message lists them.

    Examples
    --------
    >>> as_choice("eti", "ci_kind", ("eti", "hdi"))
    'eti'
    >>> as_choice("HDI", "ci_kind", ("eti", "hdi"))
    Traceback (most recent call last):
        ...
    ValueError: ci_kind must be one of 'eti', 'hdi'; got 'HDI'.
    """
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; "
                         f"got {describe(value)}.")
    return value


def as_seed(random_seed: Any, name: str = "random_seed") -> np.random.Generator:
    """A numpy Generator from None, an int, a SeedSequence or a Generator.

    Parameters
    ----------
    random_seed : None, int, numpy.random.SeedSequence or numpy.random.Generator
        The seed; a Generator is returned as it is (its state is shared).
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        For a negative int or any other type.

    Examples
    --------
    >>> float(as_seed(0).random()) == float(np.random.default_rng(0).random())
    True
    >>> as_seed(1.5)
    Traceback (most recent call last):
        ...
    ValueError: random_seed must be None, a non-negative int or a numpy Generator, got float.
    """
    if isinstance(random_seed, np.random.Generator):
        return random_seed
    if random_seed is None or isinstance(random_seed, (int, np.integer, np.random.SeedSequence)):
        if isinstance(random_seed, (int, np.integer)) and random_seed < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {random_seed}.")
        return np.random.default_rng(random_seed)
    raise ValueError(f"{name} must be None, a non-negative int or a numpy Generator, "
                     f"got {type(random_seed).__name__}.")


def as_threshold(threshold: Any, name: str = "threshold") -> float:
    """A decision threshold on scores: a number in [0, 1] (rows with ``scores >= threshold``
    are predicted positive).

    Parameters
    ----------
    threshold : float
        The threshold.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``threshold`` is not a real number in [0, 1] (a string or a bool included).

    Examples
    --------
    >>> as_threshold(0.5), as_threshold(1)
    (0.5, 1.0)
    >>> as_threshold("0.5")
    Traceback (most recent call last):
        ...
    ValueError: threshold must be a number in [0, 1], got '0.5'.
    """
    if (isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number))
            or not 0.0 <= threshold <= 1.0):
        raise ValueError(f"{name} must be a number in [0, 1], got {describe(threshold)}.")
    return float(threshold)


def as_positive_int(value: Any, name: str, *, most: int | None = None, least: int = 1) -> int:
    """A positive integer (a count, a size, a number of bins or draws), at most ``most``.

    Python and numpy integers are accepted; floats (even ``10.0``) and bools are not.

    Parameters
    ----------
    value : int
        The value.
    name : str
        The argument's public name, used in error messages.
    most : int, optional
        The largest value accepted: the number of rows, for a chunk size or count.
    least : int
        The smallest value accepted (2 for draws whose sd is reported).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``value`` is not a positive integer, or exceeds ``most``.

    Examples
    --------
    >>> as_positive_int(10, "n_bins"), as_positive_int(np.int64(4), "draws")
    (10, 4)
    >>> as_positive_int(0, "chunk_size")
    Traceback (most recent call last):
        ...
    ValueError: chunk_size must be a positive integer, got 0.
    >>> as_positive_int(3, "n_chunks", most=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: n_chunks=3 exceeds the number of rows (2): some chunks would be empty.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        what = "a positive integer" if least == 1 else f"an integer >= {least}"
        raise ValueError(f"{name} must be {what}, got {describe(value)}.")
    if most is not None and value > most:
        raise ValueError(f"{name}={int(value)} exceeds the number of rows ({most}): some chunks "
                         "would be empty.")
    return int(value)


def as_metrics(metrics: Any, accepted: Iterable[str], default: Iterable[str],
               name: str = "metrics") -> tuple[str, ...]:
    """Metric names: one name or a sequence of distinct names among ``accepted``.

    Parameters
    ----------
    metrics : str, sequence of str or None
        The names given; None gives ``default``.
    accepted : iterable of str
        The names the method accepts (from :data:`bayeval.metrics.REGISTRY`).
    default : iterable of str
        The names for ``metrics=None``.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    tuple of str

    Raises
    ------
    ValueError
        For a name not among ``accepted`` (the message lists them), a name given twice, or no
        name.

    Examples
    --------
    >>> as_metrics("f1", ("f1", "recall"), ("recall",)), as_metrics(None, ("f1",), ("f1",))
    (('f1',), ('f1',))
    >>> as_metrics(["f1", "f1"], ("f1", "recall"), ())
    Traceback (most recent call last):
        ...
    ValueError: metrics lists a metric twice: ['f1', 'f1'].
    """
    if metrics is None:
        return tuple(default)
    accepted = tuple(accepted)
    names = tuple(str(as_choice(m, name, accepted)) for m in np.atleast_1d(metrics).tolist())
    if not names:
        raise ValueError(f"{name} is empty; give at least one of {', '.join(accepted)} (None "
                         "gives the default).")
    if len(set(names)) < len(names):
        raise ValueError(f"{name} lists a metric twice: {list(names)}.")
    return names


def as_calibration(calibration: Any, names: Iterable[str], *, kind: type | None = None,
                   name: str = "calibration") -> Any:
    """A calibration map: one of ``names``, or an object that fits and predicts.

    Parameters
    ----------
    calibration : str or object
        A name, or an object with ``fit(scores, labels)`` and ``predict(scores)`` (an instance
        of ``kind`` if given, e.g. :class:`bayeval.calibration.Calibrator`).
    names : iterable of str
        The accepted names.
    kind : type, optional
        The class that an object must be an instance of.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    str or object
        ``calibration`` unchanged.

    Raises
    ------
    ValueError
        An unknown name, or an object that does not fit and predict.

    Examples
    --------
    >>> as_calibration("platt", ("platt", "none"))
    'platt'
    >>> as_calibration(1, ("platt", "none"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: calibration must be a name ('platt', 'none') or an object with fit(...; got int.
    """
    names = tuple(names)
    if isinstance(calibration, str):
        return as_choice(calibration, name, names)
    fits = hasattr(calibration, "fit") and hasattr(calibration, "predict")
    if not fits or (kind is not None and not isinstance(calibration, kind)):
        what = (f"a {kind.__name__}" if kind is not None else
                "an object with fit(scores, labels) and predict(scores)")
        raise ValueError(f"{name} must be a name ({', '.join(map(repr, names))}) or {what}; "
                         f"got {type(calibration).__name__}.")
    return calibration



def as_prior(prior: Any, name: str = "prior", *, kind: str = "beta") -> tuple[float, float]:
    """The two parameters of a prior: a Beta's :math:`(a, b)`, both finite and positive, or a
    normal's :math:`(\\mu, \\sigma)`, finite with :math:`\\sigma > 0`.

    Parameters
    ----------
    prior : tuple of two numbers
        The parameters.
    name : str
        The argument's public name, used in error messages.
    kind : {"beta", "normal"}
        The prior's family.

    Returns
    -------
    tuple of two floats

    Raises
    ------
    ValueError
        Not two real numbers, or out of the family's range (NaN and infinities included).

    Examples
    --------
    >>> as_prior((1, 1)), as_prior((4.6, 2.0), "kappa_prior", kind="normal")
    ((1.0, 1.0), (4.6, 2.0))
    >>> as_prior((np.inf, 1))
    Traceback (most recent call last):
        ...
    ValueError: prior must be two finite positive numbers (a, b) of a Beta prior; got (inf, 1).
    """
    pair = tuple(prior) if isinstance(prior, (tuple, list, np.ndarray)) else ()
    what = ("two finite positive numbers (a, b) of a Beta prior" if kind == "beta" else
            "(mu, sigma) of a normal prior, finite numbers with sigma > 0")
    if len(pair) != 2 or not all(_number(v) and np.isfinite(v) for v in pair) or (
            pair[1] <= 0 or (kind == "beta" and pair[0] <= 0)):
        raise ValueError(f"{name} must be {what}; got {describe(prior)}.")
    return float(pair[0]), float(pair[1])


def as_mnar(mnar: Any, shifted: str) -> tuple[float, float]:
    """The ``mnar`` argument as the (mean, sd) of the shift :math:`\\delta` away from
    missingness at random.

    Parameters
    ----------
    mnar : None, float or (mean, sd)
        None is missingness at random, (0, 0); a number is a fixed shift, (delta, 0); a pair is
        a normal prior on delta.
    shifted : str
        What delta shifts, for the error message (e.g. "the log-odds of a missing label").

    Returns
    -------
    mean, sd : float

    Raises
    ------
    ValueError
        Anything else, or a negative sd.

    Examples
    --------
    >>> as_mnar(None, "x"), as_mnar(0.7, "x"), as_mnar((0.3, 0.5), "x")
    ((0.0, 0.0), (0.7, 0.0), (0.3, 0.5))
    """
    if mnar is None:
        return 0.0, 0.0
    try:
        values = np.atleast_1d(np.asarray(mnar, dtype=float))
    except (TypeError, ValueError):
        values = np.empty(0)
    if values.ndim != 1 or values.size not in (1, 2) or not np.isfinite(values).all() or (
            values.size == 2 and values[1] < 0):
        raise ValueError(f"mnar must be None (missing at random), a number delta ({shifted} "
                         "by delta) or (mean, sd) with sd >= 0 (a normal prior on delta); got "
                         f"{mnar!r}.")
    return float(values[0]), float(values[1]) if values.size == 2 else 0.0


def as_alert_thresholds(thresholds: Any, metrics: Iterable[str],
                        name: str = "alert_thresholds") -> dict[str, tuple[float, float]]:
    """Constant alert thresholds: ``{metric: (lower, upper)}``, None for no bound on a side.

    Parameters
    ----------
    thresholds : mapping or None
        The thresholds given; None gives no constant threshold.
    metrics : iterable of str
        The metrics estimated, the only keys accepted.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    dict
        ``{metric: (lower, upper)}`` as floats, ``-inf``/``inf`` where None was given.

    Raises
    ------
    ValueError
        Not a mapping, a metric not estimated, not a pair of numbers or None, NaN, or
        ``lower > upper``.

    Examples
    --------
    >>> as_alert_thresholds({"f1": (0.7, None)}, ["f1"])
    {'f1': (0.7, inf)}
    >>> as_alert_thresholds({"f1": (0.9, 0.1)}, ["f1"])
    Traceback (most recent call last):
        ...
    ValueError: alert_thresholds['f1'] has lower 0.9 above upper 0.1; give (lower, upper).
    """
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise ValueError(f"{name} must be a dict {{metric: (lower, upper)}}, got "
                         f"{type(thresholds).__name__} {describe(thresholds)}.")
    metrics = tuple(metrics)
    out = {}
    for metric, pair in thresholds.items():
        as_choice(metric, name, metrics)
        ok = isinstance(pair, (tuple, list)) and len(pair) == 2 and all(
            v is None or (_number(v) and not np.isnan(v)) for v in pair)
        if not ok:
            raise ValueError(f"{name}[{metric!r}] must be (lower, upper), each a number or None; "
                             f"got {describe(pair)}.")
        lower = -np.inf if pair[0] is None else float(pair[0])
        upper = np.inf if pair[1] is None else float(pair[1])
        if lower > upper:
            raise ValueError(f"{name}[{metric!r}] has lower {lower:g} above upper {upper:g}; "
                             "give (lower, upper).")
        out[metric] = (lower, upper)
    return out


#: ``pm.sample`` settings that are counts, and the least value of each
_SAMPLER_COUNTS = {"draws": 2, "tune": 0, "chains": 1, "cores": 1}


def as_sample_kwargs(sample_kwargs: Any, name: str = "sample_kwargs") -> dict[str, Any]:
    """Settings passed to ``pm.sample``: a dict whose counts are sane (``draws`` >= 2, whose sd
    is reported; ``tune`` >= 0; ``chains`` and ``cores`` >= 1); the other keys pass through.

    Parameters
    ----------
    sample_kwargs : dict or None
        The settings.
    name : str
        The argument's public name, used in error messages.

    Returns
    -------
    dict
        The settings (empty for None).

    Raises
    ------
    ValueError
        Not a dict, or a count that is not an integer at least its least value.

    Examples
    --------
    >>> as_sample_kwargs({"chains": 4, "target_accept": 0.9})
    {'chains': 4, 'target_accept': 0.9}
    >>> as_sample_kwargs({"chains": 0})
    Traceback (most recent call last):
        ...
    ValueError: sample_kwargs['chains'] must be a positive integer, got 0.
    """
    if sample_kwargs is None:
        return {}
    if not isinstance(sample_kwargs, Mapping):
        raise ValueError(f"{name} must be a dict of pm.sample settings, got "
                         f"{type(sample_kwargs).__name__}.")
    for key, least in _SAMPLER_COUNTS.items():
        if key in sample_kwargs:
            value = sample_kwargs[key]
            if least == 0 and _number(value) and value == 0:
                continue
            as_positive_int(value, f"{name}[{key!r}]", least=max(least, 1))
    return dict(sample_kwargs)
