r"""Partitioned fast paths: the methods' closed forms on data split into dask partitions.

Each fast path reduces every partition (a block of rows) to a small summary, combines the
summaries :data:`SPLIT_EVERY` at a time up a tree (:func:`tree_reduce`), and finishes on the
client with the in-memory engine. The summaries are exact, so the results equal the in-memory
ones (to rounding, 1e-12):

=============================  ==========================================  ====================
fast path                      summary of a partition :math:`b`            combined by
=============================  ==========================================  ====================
:func:`poisson_binomial`       the PMF window of :math:`K_b`                convolution
cbpe (cbpe package)            per chunk: windows of :math:`TP_b, FN_b`,    convolution, sums
                               row counts, :math:`\sum p`, the labelled
                               rows' confusion counts
:func:`auc_numerator_moments`  its rows, cut into score ranges (also for   concatenation of
                               CBPE's and PEMI's ROC-AUC); each range       score ranges
                               reduced to 13 sums
judge_counts (judge package)   the labelled 2x2 table, :math:`T_1, T_0`     sums
bounds_cells (bounds package)  items per (weak-label pattern, prediction)   sums on the union
mvu_hard_confidence (mvu)      the rows' :math:`(y_\mathrm{hard},           none (a row map)
                               c_\mathrm{hard})`
=============================  ==========================================  ====================

A count over independent rows is the sum of its partitions' counts,
:math:`K=\sum_b K_b` with independent :math:`K_b`, so its PMF is the convolution
:math:`f_K=f_{K_1}*\dots*f_{K_B}` (:func:`bayeval.poibin.convolve`); sufficient statistics are
sums. Only the windows of the PMFs travel between workers: :math:`O(\sigma_b)` numbers each.
ROC-AUC's moments are sums over pairs of rows in score order: a first pass places score
ranges at quantiles of the scores, the rows travel once to their range's task (equal scores
share a range), and the ranges' sums concatenate in score order (:func:`auc_numerator_moments`).
The calibrators (CBPE's reference, PEMI's labelled rows) are fitted in memory, as the in-memory
methods fit them, and applied to every partition.

Inputs are dask arrays or columns of one dask DataFrame (see :func:`partitions`); numpy and
pandas inputs are one partition; empty partitions (e.g. left by a filter) add nothing. The
reductions run on dask's current scheduler: a
``distributed.Client`` registers itself as that scheduler when it is created.
"""

from __future__ import annotations

from bayeval.partitions import (
    RANGE_ROWS,
    SPLIT_EVERY,
    auc_moments,
    auc_numerator_moments,
    partitions,
    poisson_binomial,
    tree_reduce,
)

__all__ = [
    "RANGE_ROWS",
    "SPLIT_EVERY",
    "auc_moments",
    "auc_numerator_moments",
    "partitions",
    "poisson_binomial",
    "tree_reduce",
]
