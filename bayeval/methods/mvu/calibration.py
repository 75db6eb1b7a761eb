r"""Calibration of hard confidence: MVCE, ECE, reliability tables and post-hoc scaling of alpha.

**MVCE** (missing value calibration error, paper Def. 2): bin the hard confidences
:math:`\hat c_i` into :math:`B` equal-width bins, :math:`b_i = \min(\lfloor \hat c_i B \rfloor,
B - 1)` (so :math:`\hat c = 1` is in the last bin), and compare each bin's mean confidence with its
*consistency*, the fraction of decisions on the partial input that equal the same model's decision
on the complete input:

.. math:: \mathrm{MVCE} = \sum_{b:\,|B_b| > 0} \frac{|B_b|}{n}
          \left|\frac{1}{|B_b|}\sum_{i \in B_b} 1[\hat y_i^{(O)} = \hat y_i]
          - \frac{1}{|B_b|}\sum_{i \in B_b} \hat c_i\right|.

The paper's "soft MVCE" uses :math:`\hat y^{(O)} = y_\mathrm{soft}`. **ECE** is the same
construction with soft confidence and accuracy against the true labels. A method with zero variance
has :math:`\hat c \equiv 1`, so its MVCE is one minus its consistency.

**Post-hoc calibration** (paper §6.2) multiplies :math:`\alpha` by the :math:`\lambda` of the grid
:math:`\{0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10\}` with the smallest validation MVCE (ties to the
first). Scaling keeps the mean and moves :math:`c_\mathrm{hard}` between about
:math:`c_\mathrm{soft}` (:math:`\lambda \to 0`) and 1 (:math:`\lambda \to \infty`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from bayeval.methods.mvu.fast import check_alpha, hard_confidence, soft_confidence

__all__ = ["LAMBDA_GRID", "consistency", "ece", "fit_scale", "mvce", "reliability"]

LAMBDA_GRID = (0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


def _as_inputs(confidence, y_partial, y_reference):
    c = np.asarray(confidence, dtype=float).ravel()
    a, b = np.asarray(y_partial).ravel(), np.asarray(y_reference).ravel()
    if not (len(c) == len(a) == len(b)) or len(c) == 0:
        raise ValueError(f"confidence, predictions and references need one value per row; got "
                         f"lengths {len(c)}, {len(a)} and {len(b)}.")
    if not np.isfinite(c).all() or (c < 0).any() or (c > 1).any():
        raise ValueError("confidence must lie in [0, 1] with no NaN.")
    return c, a == b


def reliability(confidence, y_partial, y_reference, n_bins: int = 10) -> pd.DataFrame:
    r"""Per non-empty bin: ``count``, mean ``confidence``, ``consistency`` (or accuracy), ``gap``.

    Bins are :math:`\min(\lfloor c B \rfloor, B - 1)`; ``gap`` is consistency minus confidence.

    Parameters
    ----------
    confidence : array (n,) in [0, 1]
        Hard (or soft) confidences.
    y_partial : array (n,)
        Decisions on the partial inputs.
    y_reference : array (n,)
        Decisions on the complete inputs (or true labels, for accuracy).
    n_bins : int
        Number of equal-width bins B.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``bin``.

    Raises
    ------
    ValueError
        Inputs of different lengths, empty, or confidences outside [0, 1].

    Examples
    --------
    >>> reliability([0.95, 0.55, 1.0], [1, 0, 1], [1, 1, 1])  # doctest: +NORMALIZE_WHITESPACE
         count  confidence  consistency    gap
    bin
    5        1       0.550          0.0 -0.550
    9        2       0.975          1.0  0.025
    """
    c, hit = _as_inputs(confidence, y_partial, y_reference)
    bins = np.minimum(np.floor(c * n_bins).astype(int), n_bins - 1)
    frame = pd.DataFrame({"bin": bins, "confidence": c, "consistency": hit.astype(float)})
    out = frame.groupby("bin").agg(count=("confidence", "size"), confidence=("confidence", "mean"),
                                   consistency=("consistency", "mean"))
    out["gap"] = out["consistency"] - out["confidence"]
    return out


def mvce(c_hard, y_partial, y_full, n_bins: int = 10) -> float:
    r"""Missing value calibration error of hard confidences (the module docstring's formula).

    Parameters
    ----------
    c_hard : array (n,) in [0, 1]
    y_partial : array (n,)
        Decisions on the partial inputs (:math:`y_\mathrm{soft}` for the paper's soft MVCE).
    y_full : array (n,)
        The same model's decisions on the complete inputs.
    n_bins : int

    Returns
    -------
    float

    Examples
    --------
    >>> mvce([1.0, 1.0, 1.0, 1.0], [0, 1, 1, 1], [0, 1, 1, 0])  # zero variance: 1 - consistency
    0.25
    """
    table = reliability(c_hard, y_partial, y_full, n_bins)
    return float((table["count"] * table["gap"].abs()).sum() / table["count"].sum())


def ece(c_soft, y_pred, labels, n_bins: int = 10) -> float:
    """Expected calibration error: soft confidence against accuracy, same binning as MVCE.

    Parameters
    ----------
    c_soft : array (n,) in [0, 1]
    y_pred : array (n,)
        Decisions.
    labels : array (n,)
        True labels.
    n_bins : int

    Returns
    -------
    float

    Examples
    --------
    >>> ece([0.9, 0.9, 0.6, 0.6], [1, 1, 0, 0], [1, 0, 0, 0])
    0.4
    """
    return mvce(c_soft, y_pred, labels, n_bins)


def consistency(y_partial, y_full) -> float:
    """Fraction of decisions on partial inputs equal to the decision on the complete input.

    Parameters
    ----------
    y_partial, y_full : array (n,)

    Returns
    -------
    float

    Examples
    --------
    >>> consistency([0, 1, 1, 1], [0, 1, 1, 0])
    0.75
    """
    return float(np.mean(np.asarray(y_partial) == np.asarray(y_full)))


def fit_scale(alpha, y_full, *, grid=LAMBDA_GRID, weights=None,
              n_bins: int = 10) -> tuple[float, pd.DataFrame]:
    r"""The :math:`\lambda` of ``grid`` minimising the validation MVCE of :math:`\lambda\alpha`.

    Parameters
    ----------
    alpha : array (n, K)
        Dirichlet MVUs of validation rows with missing features (several mask trials may be
        stacked as rows).
    y_full : array (n,)
        The same model's decisions on the complete rows.

    Returns
    -------
    (lambda*, table)
        ``table`` is indexed by ``scale`` with column ``mvce``. A minimum at an end of the grid is
        reported with a warning: the optimum may lie outside it.

    Examples
    --------
    >>> import numpy as np

    Beta MVUs with concentration 1 whose complete-input decisions follow concentration 4:

    >>> rng = np.random.default_rng(0)
    >>> mu = rng.dirichlet([2.0, 2.0], size=2000)
    >>> y_full = (rng.beta(4 * mu[:, 1], 4 * mu[:, 0]) > 0.5).astype(int)
    >>> lam, table = fit_scale(mu, y_full, grid=(1.0, 2.0, 4.0, 8.0, 16.0))
    >>> lam, table["mvce"].round(3).tolist()
    (4.0, [0.072, 0.047, 0.021, 0.042, 0.081])
    """
    a = check_alpha(alpha)
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or (grid <= 0).any():
        raise ValueError(f"grid must be positive scales of alpha, got {grid.tolist()}.")
    y_soft, _ = soft_confidence(a, weights=weights)
    scores = [mvce(hard_confidence(lam * a, weights=weights)[1], y_soft, y_full, n_bins)
              for lam in grid]
    best = int(np.argmin(scores))
    if grid.size > 1 and best in (0, grid.size - 1):
        warnings.warn(f"the best scale {grid[best]:g} is at an end of the grid "
                      f"[{grid[0]:g}, {grid[-1]:g}]; the optimum may lie outside it.",
                      UserWarning, stacklevel=2)
    return float(grid[best]), pd.DataFrame({"mvce": scores}, index=pd.Index(grid, name="scale"))
