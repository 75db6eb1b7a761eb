r"""The result of :func:`bayeval.judge` for a 0/1 outcome: its summary states the decision.

With ``null`` given, the summary of the frequentist estimators has the column ``p_value`` (the
z-test of :math:`H_0: \theta = \theta_0`, computed when the estimates are) and the summary of
posterior draws the column ``prob_greater``, :math:`P(\theta > \theta_0 \mid \text{data})`,
the share of the draws above :math:`\theta_0`.
"""

from __future__ import annotations

from bayeval.evaluation import SAMPLE_DIMS, Evaluation
from bayeval.table import Table

__all__ = ["JudgeEvaluation"]


class JudgeEvaluation(Evaluation, method="judge"):
    """The result of :func:`bayeval.judge` on 0/1 labels.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> theta = xr.Dataset({"theta": (("chain", "draw"), np.linspace(0.4, 0.7, 40)[None])})
    >>> ev = JudgeEvaluation.create(method="judge", variant="pymc", estimand="posterior/theta",
    ...                             draws=xr.DataTree.from_dict({"posterior": theta}), null=0.5)
    >>> float(ev.summary()["prob_greater"].iloc[0])
    0.65
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        r""":meth:`Evaluation.summary`; with ``null`` given to :func:`bayeval.judge`, the
        summary of draws adds ``prob_greater`` :math:`= P(\theta > \theta_0 \mid
        \text{data})`, the share of the draws above ``null``.

        Examples
        --------
        >>> import numpy as np, xarray as xr
        >>> draws = np.linspace(0.4, 0.7, 40).reshape(1, 40, 1) + np.array([0.0, -0.2])
        >>> post = xr.Dataset({"theta": (("chain", "draw", "group"), draws)},
        ...                   coords={"group": ["a", "b"]})
        >>> ev = JudgeEvaluation.create(method="judge", variant="pymc", null=0.5,
        ...                             draws=xr.DataTree.from_dict({"posterior": post}),
        ...                             estimand="posterior/theta")
        >>> ev.summary()["prob_greater"].to_dict()
        {'a': 0.65, 'b': 0.0}
        """
        frame = super().summary(source, ci_prob, ci_kind)
        null = self.meta.get("null")
        if null is None or frame.attrs["source"] != "draws":
            return frame
        prob = (self.draws > null).mean(SAMPLE_DIMS)
        frame["prob_greater"] = (prob.to_series().reindex(frame.index).to_numpy()
                                 if prob.ndim else float(prob))
        return frame
