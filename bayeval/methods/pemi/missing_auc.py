r"""ROC-AUC's exact moments over many draws of the missing labels' probabilities, split into
the labelled rows' fixed part and the missing rows' part.

The moments of the Mann-Whitney count :math:`A=\sum_{i\ne j}\xi_{ij}Y_i(1-Y_j)` and of
:math:`D=N_+N_-` (:func:`bayeval.confusion_moments.auc_count_moments`, after Dervovic &
Cashmore, AISTATS 2025) need, with :math:`q=1-p` and :math:`v=pq`,

.. math:: \mathbb EA=\sum_ip_i\,\mathrm{fwd}_i,\qquad c_i=\mathrm{fwd}_i-\mathrm{bwd}_i,\qquad
          \mathrm{fwd}_i=\sum_{j\ne i}\xi_{ij}q_j,\quad \mathrm{bwd}_i=\sum_{j\ne i}\xi_{ji}p_j,

and sums of :math:`v_ic_i^2`, :math:`v_ic_ic^D_i`, :math:`v_i(c^D_i)^2` and of products
:math:`v_iv_j`. A labelled row has :math:`p_i\in\{0,1\}`, so :math:`v_i=0`: only the missing rows
:math:`\mathcal M` enter the variance sums, and a labelled row enters through its label alone.
With :math:`f_i=\sum_{j\in\mathcal K}\xi_{ij}q_j` (the labelled negatives ranked below
:math:`i`, ties weighted :math:`w`) and :math:`b_i=\sum_{j\in\mathcal K}\xi_{ji}p_j` (the
labelled positives above), fixed for every draw,

.. math:: \mathbb EA=A_{\mathcal K}+\sum_{i\in\mathcal M}\bigl(p_i(f_i+\mathrm{fwd}^{\mathcal M}_i)
          +q_ib_i\bigr),\qquad c_i=c^{\mathcal M}_i+f_i-b_i\quad(i\in\mathcal M),

where :math:`A_{\mathcal K}=\sum_{i\in\mathcal K}y_if_i` counts the labelled pairs and the
superscript :math:`\mathcal M` marks sums over the missing rows only. Each draw then costs
:math:`O(m)` instead of :math:`O(n)` (:math:`m` missing rows of :math:`n`): the labelled rows'
part is computed once, by one sort.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayeval.confusion_moments import RatioMoments

__all__ = ["BLOCK", "MissingAuc"]

#: cells (draws x missing rows) per block of :meth:`MissingAuc.moments`: its temporaries then
#: stay in the processor's cache, which halves its time against blocks of millions of cells
BLOCK = 1 << 18


class MissingAuc(NamedTuple):
    r"""The labelled rows' fixed part of ROC-AUC's moments, for draws of the missing rows.

    Attributes
    ----------
    order : numpy.ndarray of int
        Columns of the missing rows (in ``rows.order``) in score order.
    first, group : numpy.ndarray of int or None
        Tie groups of the missing rows' sorted scores: each group's first place, and the group
        of every place (None without ties).
    forward, backward : numpy.ndarray, shape (m,)
        :math:`f_i` and :math:`b_i` of the missing rows in score order.
    fixed_c : numpy.ndarray, shape (m,)
        :math:`i+f_i-b_i` at place :math:`i` (from 0) of that order: without ties
        :math:`\sum_{j<i}q_j-\sum_{j>i}p_j=i+p_i-\sum_jp_j` over the missing rows, so
        :math:`c_i=p_i-\sum_jp_j+i+f_i-b_i` needs no cumulative sum.
    known_num : float
        :math:`A_{\mathcal K}`, the labelled positive-negative pairs' count.
    known_p, known_q : float
        Labelled positives and negatives.
    w : float
        Weight of a tie (1/2 or 1).

    Examples
    --------
    >>> from bayeval.methods.pemi.fast import Rows
    >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
    >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
    >>> auc = MissingAuc.of(rows, 0.5)  # missing scores 0.2, 0.8; labelled pairs 0.9 > 0.3, 0.7
    >>> auc.forward.tolist(), auc.backward.tolist(), auc.known_num  # and 0.6 > 0.3
    ([0.0, 2.0], [2.0, 1.0], 3.0)
    """

    order: np.ndarray
    first: np.ndarray | None
    group: np.ndarray | None
    forward: np.ndarray
    backward: np.ndarray
    fixed_c: np.ndarray
    known_num: float
    known_p: float
    known_q: float
    w: float

    @classmethod
    def of(cls, rows, w: float) -> MissingAuc:
        r"""The fixed part for ``rows`` (a :class:`bayeval.methods.pemi.fast.Rows`) and tie
        weight ``w``.

        :math:`f(s)=Q_{\mathcal K}(<s)+w\,Q_{\mathcal K}(=s)` and
        :math:`b(s)=P_{\mathcal K}(>s)+w\,P_{\mathcal K}(=s)` from the labelled negatives'
        and positives' cumulative counts at the missing rows' scores (binary search in the
        sorted labelled scores); :math:`A_{\mathcal K}=\sum_{i\in\mathcal K}y_if(s_i)`.

        Examples
        --------
        >>> from bayeval.methods.pemi.fast import Rows
        >>> s = np.array([0.2, 0.5, 0.5, 0.5])  # a labelled negative tied with a missing row
        >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([0, 1, 0, np.nan]))
        >>> auc = MissingAuc.of(rows, 0.5)
        >>> auc.forward.tolist(), auc.backward.tolist(), auc.known_num
        ([1.5], [0.5], 1.5)
        """
        missing_scores = rows.scores[rows.order]
        order = np.argsort(missing_scores, kind="stable")
        s = missing_scores[order]
        known = ~rows.missing
        by_score = np.argsort(rows.scores[known], kind="stable")
        ks, ky = rows.scores[known][by_score], rows.labels[known][by_score]
        cum_p, cum_q = np.r_[0.0, np.cumsum(ky)], np.r_[0.0, np.cumsum(1.0 - ky)]
        known_p, known_q = float(cum_p[-1]), float(cum_q[-1])

        def parts(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            below, upto = np.searchsorted(ks, at, "left"), np.searchsorted(ks, at, "right")
            forward = cum_q[below] + w * (cum_q[upto] - cum_q[below])
            backward = (known_p - cum_p[upto]) + w * (cum_p[upto] - cum_p[below])
            return forward, backward

        forward, backward = parts(s)
        known_num = float(parts(ks[ky == 1])[0].sum())
        tie = s[1:] == s[:-1]
        first = group = None
        if tie.any():
            first = np.flatnonzero(np.r_[True, ~tie])
            group = np.repeat(np.arange(first.size), np.diff(np.r_[first, s.size]))
        fixed_c = np.arange(s.size) + (forward - backward)
        return cls(order, first, group, forward, backward, fixed_c, known_num, known_p, known_q,
                   w)

    def moments(self, p: np.ndarray) -> RatioMoments:
        r"""The moments of :math:`A` and :math:`D` for every row of ``p`` (S, m), the missing
        rows' probabilities (columns in ``rows.order``); the fields are arrays (S,).

        The sums of :func:`bayeval.confusion_moments.auc_count_moments_rows` over the missing
        rows, with :math:`f`, :math:`b` and the labelled counts added as in the module's
        formulas; :math:`\Pi=\sum_{i<j}v_iv_j` and :math:`\Pi_=` (tied pairs) run over the
        missing rows only, where :math:`v\ne0`.

        Examples
        --------
        Equal to the moments of the completed rows:

        >>> from bayeval.confusion_moments import auc_count_moments
        >>> from bayeval.methods.pemi.fast import Rows
        >>> s = np.array([0.9, 0.8, 0.3, 0.6, 0.2, 0.7])
        >>> rows = Rows(s, (s >= 0.5).astype(np.int8), np.array([1, np.nan, 0, 1, np.nan, 0]))
        >>> split = MissingAuc.of(rows, 0.5).moments(np.array([[0.8, 0.1]]))
        >>> whole = auc_count_moments(s, rows.completed(np.array([0, 0.8, 0, 0, 0.1, 0])), 0.5)
        >>> bool(np.allclose([x[0] for x in split], whole, rtol=1e-14))
        True
        """
        step = max(1, BLOCK // max(p.shape[1], 1))
        parts = [self._block(p[start:start + step]) for start in range(0, p.shape[0], step)]
        return RatioMoments(*(np.concatenate(field) for field in zip(*parts, strict=True)))

    def _block(self, p: np.ndarray) -> RatioMoments:
        """:meth:`moments` of a block of rows."""
        p = p[:, self.order]
        q = 1.0 - p  # summed apart from p, as in auc_count_moments_rows
        sum_p, sum_q = p.sum(-1), q.sum(-1)
        total_p, total_q = self.known_p + sum_p, self.known_q + sum_q
        v = p * q
        v_sum = v.sum(-1)
        w = self.w
        if self.first is None:  # fwd_i = sum_{j<i} q_j and bwd_i = sum_{j>i} p_j over M
            # c_i = fwd_i - bwd_i = i - sum_{j != i} p_j + f_i - b_i
            mean_num = _row_dot(p, np.cumsum(q, axis=-1)) - v_sum + _row_dot(p, self.forward)
            c_num = p + (self.fixed_c - sum_p[:, None])
            tied = 0.0
        else:
            first, group = self.first, self.group
            group_q, group_p, group_v = (np.add.reduceat(x, first, axis=-1) for x in (q, p, v))
            q_below = (np.cumsum(group_q, axis=-1) - group_q)[:, group]
            p_above = (sum_p[:, None] - np.cumsum(group_p, axis=-1))[:, group]
            forward = q_below + w * (group_q[:, group] - q) + self.forward
            backward = p_above + w * (group_p[:, group] - p) + self.backward
            mean_num = _row_dot(p, forward)
            c_num = forward - backward
            tied = ((group_v**2 - np.add.reduceat(v**2, first, axis=-1)) / 2).sum(-1)
        c_den = 2.0 * p + (total_q - total_p - 1.0)[:, None]
        pairs = (v_sum**2 - _row_dot(v, v)) / 2
        v_num = v * c_num
        return RatioMoments(
            mean_num=self.known_num + mean_num + _row_dot(q, self.backward),
            var_num=_row_dot(v_num, c_num) + pairs + (4 * w * w - 1) * tied,
            mean_den=total_p * total_q - v_sum,
            var_den=_row_dot(v, c_den**2) + 4 * pairs,
            cov=_row_dot(v_num, c_den) + 2 * pairs + 2 * (2 * w - 1) * tied)

def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of each row of ``a`` with the same row of ``b``, or with ``b`` (1-D)."""
    return np.einsum("ij,ij->i" if b.ndim == 2 else "ij,j->i", a, b)
