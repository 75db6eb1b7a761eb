r"""MVU on rows split into dask partitions: the exact hard confidence, one partition at a time.

A row's hard confidence depends on that row only (and on the imputer and classifier, fitted in
memory), so the partitioned path is a row map with no reduction: every partition goes through
the in-memory code, :meth:`~bayeval.methods.mvu.estimators.GaussianImputer.logits` and
:func:`~bayeval.methods.mvu.fast.gaussian_hard_confidence`, and the result equals the
in-memory one exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayeval.methods.mvu.fast import gaussian_hard_confidence
from bayeval.partitions import as_dask_array

if TYPE_CHECKING:
    import dask.array as da

__all__ = ["mvu_hard_confidence"]


def _block(x: np.ndarray, imputer: Any, coef: np.ndarray, intercept: np.ndarray,
           weights: Any) -> np.ndarray:
    """(y_hard, c_hard) of each row, shape (rows, 2)."""
    if x.shape[0] == 0:
        return np.empty((0, 2))
    mean, cov = imputer.logits(x, np.isnan(x), coef, intercept)
    y, c = gaussian_hard_confidence(mean[:, 0], cov[:, 0, 0], weights=weights)
    return np.stack([y, c], axis=1)


def mvu_hard_confidence(x: Any, imputer: Any, coef: Any, intercept: Any, *,
                        weights: Any = None) -> tuple[da.Array, da.Array]:
    r"""Exact hard confidence of a binary linear classifier under Gaussian imputation, row-wise.

    Parameters
    ----------
    x : dask array or array-like, shape (n, d)
        Rows with NaN for the missing features.
    imputer : bayeval.methods.mvu.estimators.GaussianImputer
        Fitted on complete training rows (in memory).
    coef, intercept : array-like, shapes (1, d) and (1,)
        The classifier :math:`\sigma(w^\top x+b)`.
    weights : two positive floats, optional
        Class weights of the decision (a threshold :math:`t` is :math:`(t, 1-t)`).

    Returns
    -------
    y_hard, c_hard : dask.array.Array, shape (n,)
        Lazy, one row at a time (``map_blocks``): :math:`z=w^\top x+b` given :math:`x_O` is
        :math:`N(w^\top\hat x+b,\;w_M^\top\Sigma_{M|O}w_M)`, so
        :math:`P(V=1)=\Phi_N((\mu_z-\log(w_0/w_1))/\sigma_z)` and :math:`c_\mathrm{hard}=
        \max(P(V=1), 1-P(V=1))` (:func:`bayeval.methods.mvu.fast.gaussian_hard_confidence`).

    Raises
    ------
    ValueError
        If ``coef``/``intercept`` are not one binary linear classifier, or ``x`` does not have
        its ``d`` columns.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from bayeval.methods.mvu.estimators import GaussianImputer
    >>> rng = np.random.default_rng(0)
    >>> imputer = GaussianImputer.fit(rng.multivariate_normal([0, 1], [[1, 0.6], [0.6, 1]],
    ...                                                       500))
    >>> x = np.array([[0.5, np.nan], [np.nan, 2.0], [1.0, -1.0], [np.nan, np.nan]])
    >>> y_hard, c_hard = mvu_hard_confidence(da.from_array(x, chunks=(2, 2)), imputer,
    ...                                      [[1.0, -0.5]], [0.2])
    >>> with dask.config.set(scheduler="synchronous"):
    ...     y_hard.compute().tolist(), c_hard.compute().round(3).tolist()
    ([1, 0, 1, 0], [0.537, 0.576, 1.0, 0.627])
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    intercept = np.atleast_1d(np.asarray(intercept, dtype=float))
    if coef.shape[0] != 1 or intercept.size != 1:
        raise ValueError(f"coef must have shape (1, d) and intercept (1,) (a binary linear "
                         f"classifier); got {coef.shape} and {intercept.shape}.")
    x = as_dask_array(x, None)
    if x.ndim != 2 or x.shape[1] != coef.shape[1]:
        raise ValueError(f"x must have shape (n, {coef.shape[1]}) like coef; got {x.shape}.")
    out = x.map_blocks(_block, imputer, coef, intercept, weights, dtype=float,
                       chunks=(x.chunks[0], (2,)))
    return out[:, 0].astype(np.int64), out[:, 1]
