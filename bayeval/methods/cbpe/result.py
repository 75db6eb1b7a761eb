"""CBPE's result: an :class:`~bayeval.evaluation.Evaluation` that also holds the reference period.

Given a labelled reference, CBPE splits it into chunks once: their realized metrics give the
alert thresholds, and they are estimated as the analysis chunks are (same calibration map, its
posterior, noise model and options), so each reference chunk has its estimate beside its
realized metric. They are the result's group ``reference``, over ``(chunk, metric)`` like
``closed_form``, with the coordinate ``period`` (``"reference"``).
"""

from __future__ import annotations

import pandas as pd
import xarray as xr

from bayeval.evaluation import Evaluation
from bayeval.methods.cbpe.reference import PERIODS
from bayeval.table import Table, table
from bayeval.validation import as_choice

__all__ = ["CBPEEvaluation"]


class CBPEEvaluation(Evaluation, method="cbpe"):
    """CBPE's Evaluation: the analysis period's chunks and whole period, and the reference
    period's chunks.

    The default :meth:`summary` is the analysis period's (chunks, then ``all``): its rows are
    what alerts, reports and the command line's exit code are about. The reference chunks are
    the data the calibration was fitted on and the thresholds were computed from, an
    in-sample check of the estimates against their realized metrics rather than something to
    monitor, and their keys may repeat the analysis chunks' (``[0:999]`` in both): so they are
    asked for, ``summary(period="reference")``, or beside the analysis,
    ``summary(period="all")`` (NannyML's ``filter(period=...)``).

    Examples
    --------
    >>> import bayeval as be
    >>> from bayeval import datasets
    >>> ref = datasets.calibrated_scores(2000, random_seed=0)
    >>> new = datasets.calibrated_scores(1000, random_seed=1)
    >>> ev = be.cbpe(new.scores, reference=(ref.scores, ref.labels), chunk_size=500,
    ...              metrics=["accuracy"], calibration="none")
    >>> ev.summary(period="reference")[["mean", "realized"]].round(4)
    ... # doctest: +NORMALIZE_WHITESPACE
    cbpe (exact), reference period, closed form: 95% equal-tailed intervals (eti)
                            mean  realized
    chunk       metric
    [0:499]     accuracy  0.6833     0.680
    [500:999]   accuracy  0.6877     0.668
    [1000:1499] accuracy  0.6844     0.722
    [1500:1999] accuracy  0.6891     0.668
    >>> ev.summary(period="all").index.get_level_values("period").unique().tolist()
    ['reference', 'analysis']
    """

    @property
    def reference(self) -> xr.Dataset | None:
        """The reference chunks' estimates and realized metrics over ``(chunk, metric)``
        (the variables of ``closed_form``), or None without a reference.

        Examples
        --------
        >>> import bayeval as be
        >>> be.cbpe([0.2, 0.7, 0.9, 0.4]).reference is None  # no reference given
        True
        """
        return self.tree["reference"].to_dataset() if "reference" in self.tree.children \
            else None

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None, period: str = "analysis") -> Table:
        """The summary of :meth:`Evaluation.summary`, of a period.

        Parameters
        ----------
        source, ci_prob, ci_kind
            As :meth:`Evaluation.summary`, for the analysis period (the reference chunks are
            the fast path's).
        period : {"analysis", "reference", "all"}
            The analysis chunks and the whole period (indexed by ``chunk`` and ``metric``), the
            reference chunks (likewise, with their ``realized`` metrics), or both indexed by
            ``period``, ``chunk`` and ``metric``, the reference first.

        Returns
        -------
        Table

        Raises
        ------
        ValueError
            For another ``period``; for the reference without one, or with ``source="draws"``.

        Examples
        --------
        >>> import bayeval as be
        >>> be.cbpe([0.2, 0.7, 0.9, 0.4]).summary(period="reference")
        Traceback (most recent call last):
            ...
        ValueError: period='reference': no reference was given to cbpe, so there is no ...
        """
        period = as_choice(period, "period", PERIODS)
        if period == "analysis":
            return super().summary(source, ci_prob, ci_kind)
        if self.reference is None:
            raise ValueError(f"period={period!r}: no reference was given to cbpe, so there is "
                             "no reference period.")
        if period == "reference" and source not in (None, "closed_form"):
            raise ValueError(f"period='reference' with source={source!r}: the reference chunks "
                             "are estimated by the fast path only; use source='closed_form'.")
        tree = self.tree.copy(deep=False)
        tree["closed_form"] = self.tree["reference"].copy(deep=False)
        reference = Evaluation(tree).summary("closed_form")
        caption = reference.attrs["caption"].replace(", closed form:",
                                                     ", reference period, closed form:", 1)
        if period == "reference":
            return table(reference, caption, **_attrs(reference))
        analysis = super().summary(source, ci_prob, ci_kind)
        both = pd.concat({"reference": pd.DataFrame(reference),
                          "analysis": pd.DataFrame(analysis)}, names=["period"])
        return table(both, f"{analysis.attrs['caption']}; reference period: closed form",
                     **_attrs(analysis))


def _attrs(summary: Table) -> dict:
    return {k: v for k, v in summary.attrs.items() if k != "caption"}
