r"""The judge on partitioned data (dask): its sufficient statistics, summed over partitions.

For a binary judge every estimator and both generative models depend on the items only through
the labelled 2×2 table :math:`n_{ab}` = #{Y = a, Ŷ = b} and the counts :math:`T_1, T_0` of
unlabelled items the judge calls 1 and 0 (:class:`~bayeval.methods.judge.fast.Counts`). Counts
are sums over partitions, so :func:`judge_counts` reduces each partition to its counts and adds
them up a tree (:func:`bayeval.partitions.reduce_blocks`); :func:`judge_estimates` then runs the
in-memory estimators on them. The results equal :func:`bayeval.methods.judge.api.judge`'s on the
same items. Public through :mod:`bayeval.scale`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from bayeval.deprecation import renamed_arguments
from bayeval.methods.judge.api import CI_KINDS, estimates, estimates_dataset, refuse_counts
from bayeval.methods.judge.fast import ESTIMATORS, Counts, Moments, z_value
from bayeval.partitions import add_tuples, dask_modules, reduce_blocks
from bayeval.validation import as_binary, as_choice, as_ci_prob, check_same_length

__all__ = ["judge_counts", "judge_estimates"]


def _labelled_counts(y: Any, yhat: Any) -> Counts:
    if len(y) == 0:
        return Counts(0, 0, 0, 0, 0, 0)
    y, yhat = as_binary(y, "y"), as_binary(yhat, "yhat")
    check_same_length(y=y, yhat=yhat)
    return Counts.from_labels(y, yhat, np.empty(0, np.int8))


def _unlabelled_counts(yhat_unlabeled: Any) -> Counts:
    if len(yhat_unlabeled) == 0:
        return Counts(0, 0, 0, 0, 0, 0)
    yhat_u = as_binary(yhat_unlabeled, "yhat_unlabeled")
    return Counts(0, 0, 0, 0, int(yhat_u.sum()), int(yhat_u.size - yhat_u.sum()))


def judge_counts(y: Any, yhat: Any, yhat_unlabeled: Any) -> Counts:
    r"""The judge's sufficient statistics from partitioned labels: 2x2 table and :math:`T_1, T_0`.

    Parameters
    ----------
    y, yhat : dask array, dask Series or array-like of 0/1
        Human labels and the (binary) judge on the labelled items, aligned.
    yhat_unlabeled : same
        The judge on the unlabelled items (its own partitions).

    Returns
    -------
    bayeval.methods.judge.fast.Counts
        Exactly ``Counts.from_labels(y, yhat, yhat_unlabeled)``: the input of every binary
        estimator (:func:`judge_estimates`) and of the models
        (``bayeval.methods.judge.model(*counts, variant=...)``).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> y = da.from_array(np.array([1, 0, 1, 1, 0, 0]), chunks=4)
    >>> yhat_unlabeled = da.from_array(np.array([1, 1, 0, 1, 0, 0, 1, 1]), chunks=3)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     judge_counts(y, [1, 0, 0, 1, 1, 0], yhat_unlabeled)
    Counts(n11=2, n10=1, n01=1, n00=2, t1=5, t0=3)
    """
    labelled = reduce_blocks(_labelled_counts, add_tuples, {"y": y, "yhat": yhat})
    unlabelled = reduce_blocks(_unlabelled_counts, add_tuples,
                               {"yhat_unlabeled": yhat_unlabeled})
    return add_tuples(*dask_modules()[0].compute(labelled, unlabelled))


@renamed_arguments(ci="ci_kind")
def judge_estimates(counts: Counts, *, ci_prob: float = 0.95, ci_kind: str = "logit"
                    ) -> xr.Dataset:
    r"""Every estimator of a binary judge from its counts, with intervals.

    Parameters
    ----------
    counts : bayeval.methods.judge.fast.Counts
        E.g. from :func:`judge_counts`.
    ci_prob : float
        Interval level.
    ci_kind : {"logit", "wald"}
        Interval kind (:func:`bayeval.methods.judge.fast.interval`). (Formerly ``ci=``, still
        accepted with a ``FutureWarning``.)

    Returns
    -------
    xr.Dataset
        Over ``estimator``: ``mean`` (the estimate), ``sd`` (its standard error), ``lower``,
        ``upper``: those of ``judge(y, yhat, yhat_unlabeled, method="all")`` (Rogan–Gladen is
        left out for :math:`\hat\kappa\le0`, as there). The estimators depend on the items only
        through the counts (:class:`~bayeval.methods.judge.fast.Moments` of a binary judge are
        functions of them).

    Raises
    ------
    ValueError
        Where :func:`~bayeval.methods.judge.api.judge` refuses the same items: a judge with one
        value on every item or on every labelled item, fewer than 2 labelled items of a class
        (:func:`~bayeval.methods.judge.api.refuse_counts`).

    Examples
    --------
    >>> est = judge_estimates(Counts(n11=80, n10=10, n01=20, n00=190, t1=1700, t0=3300))
    >>> est["mean"].sel(estimator=["naive", "classical", "ppi", "eif"]).round(4).values.tolist()
    [0.34, 0.3, 0.3067, 0.3047]
    """
    ci_prob, ci_kind = as_ci_prob(ci_prob), as_choice(ci_kind, "ci_kind", CI_KINDS)
    refuse_counts(counts)
    z = z_value(ci_prob)
    out, _ = estimates(Moments.from_counts(counts), counts, counts.cells(), ESTIMATORS, z)
    return estimates_dataset([out], None, z, ci_kind)
