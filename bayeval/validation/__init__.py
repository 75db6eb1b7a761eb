"""Coercion and checking of user input, done once at the public entry points.

Every function takes the argument's public ``name`` so that the error says which argument was
wrong, what was received and what is accepted: one function, and one message, per kind of
argument. The entry functions call them once; the core's internal calls go to the trusting
twins of its checking functions (e.g. :func:`bayeval.metrics.metric_value` for
:func:`bayeval.metrics.from_counts`). :mod:`~bayeval.validation.tables` finds the per-row
arguments named as columns of a table (``data=``, a table ``reference=``),
:mod:`~bayeval.validation.arrays` checks them and pairs their rows,
:mod:`~bayeval.validation.options` everything else, and
:mod:`~bayeval.validation.memory` refuses work that would need more memory than its limit.
"""

from bayeval.validation.arrays import (
    aligned,
    as_array,
    as_binary,
    as_counts,
    as_labels,
    as_predictions,
    as_probabilities,
    as_reference,
    as_scores,
    check_same_length,
    describe,
)
from bayeval.validation.memory import (
    check_classes,
    check_label_draws,
    check_memory,
)
from bayeval.validation.options import (
    as_alert_thresholds,
    as_beta,
    as_calibration,
    as_choice,
    as_ci_prob,
    as_metrics,
    as_mnar,
    as_positive_int,
    as_prior,
    as_sample_kwargs,
    as_seed,
    as_threshold,
    as_zero_division,
)
from bayeval.validation.tables import as_table, is_table, named_columns

__all__ = [
    "aligned", "as_alert_thresholds", "as_array", "as_beta", "as_binary", "as_calibration",
    "as_choice", "as_ci_prob", "as_counts", "as_labels", "as_metrics", "as_mnar",
    "as_positive_int",
    "as_predictions", "as_prior", "as_probabilities", "as_reference", "as_sample_kwargs",
    "as_scores", "as_seed", "as_table", "as_threshold", "as_zero_division", "check_classes",
    "check_label_draws", "check_memory", "check_same_length", "describe", "is_table",
    "named_columns",
]
