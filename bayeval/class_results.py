"""Results with a ``class`` dimension: the metrics of K classes in one summary.

The estimand of a K-class evaluation has dims (``metric``, ``class``): a per-class metric
(one-vs-rest, e.g. ``recall``) fills its row, and a metric of the whole confusion matrix (e.g.
``accuracy``, ``macro_f1``) is stored at the first class with NaN at the others, so that the
Dataset, the draws and :meth:`~bayeval.evaluation.Evaluation.check` need no special case
(check leaves NaN coordinates out). :class:`ClassEvaluation` shows each metric once in
:meth:`~ClassEvaluation.summary`: the metrics of the whole matrix with an empty class.
"""

from __future__ import annotations

import pandas as pd

from bayeval.evaluation import Evaluation
from bayeval.metrics import REGISTRY
from bayeval.table import Table, table

__all__ = ["ClassEvaluation"]


class ClassEvaluation(Evaluation):
    """An :class:`Evaluation` of K classes: :meth:`summary` shows one row per metric and class.

    The methods' K-class results are subclasses registered under their own method names.

    Examples
    --------
    >>> import bayeval as be
    >>> ev = be.labelled(labels=["a", "b", "c", "a"] * 5, y_pred=["a", "b", "b", "a"] * 5,
    ...                  metrics=["accuracy", "recall"], random_seed=0)
    >>> [c.__name__ for c in type(ev).__mro__[:3]]
    ['LabelledClasses', 'ClassEvaluation', 'Evaluation']
    >>> ev.summary()[["mean", "lower", "upper"]].round(2)  # doctest: +NORMALIZE_WHITESPACE
    labelled_multiclass (exact), closed form: 95% equal-tailed intervals (eti)
                     mean  lower  upper
    metric   class
    accuracy         0.73   0.53   0.89
    recall   a       0.97   0.82   1.00
             b       0.94   0.67   1.00
             c       0.06   0.00   0.34
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """:meth:`Evaluation.summary` with each metric of the whole matrix once (class ``""``).

        Parameters
        ----------
        source, ci_prob, ci_kind
            As in :meth:`Evaluation.summary`.

        Returns
        -------
        Table
            Indexed by (``estimator``,) ``metric``, ``class``.

        Examples
        --------
        >>> import bayeval as be
        >>> ev = be.labelled(labels=[0, 1, 2, 2], y_pred=[0, 1, 2, 1], metrics="mcc",
        ...                  random_seed=1)
        >>> ev.summary().index.tolist()
        [('mcc', '')]
        """
        frame = super().summary(source, ci_prob, ci_kind)
        if "class" not in frame.index.names:
            return frame
        first = frame.index.get_level_values("class")[0]
        keep, index = [], []
        for *head, metric, cls in frame.index:  # (estimator,) metric, class
            per_class = self.per_class(metric)
            keep.append(per_class or cls == first)
            index.append((*head, metric, cls if per_class else ""))
        out = frame[keep].set_axis(pd.MultiIndex.from_tuples(
            [i for i, k in zip(index, keep, strict=True) if k], names=frame.index.names))
        attrs = dict(frame.attrs)
        return table(out, attrs.pop("caption"), **attrs)

    @staticmethod
    def per_class(metric: str) -> bool:
        """Whether ``metric`` has a value per class (else one for the whole matrix).

        Examples
        --------
        >>> ClassEvaluation.per_class("recall"), ClassEvaluation.per_class("accuracy")
        (True, False)
        """
        return REGISTRY[metric].classes == "per_class"
