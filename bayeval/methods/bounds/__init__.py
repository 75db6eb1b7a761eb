"""Fréchet bounds: evaluating a classifier from weak labels only (Maia Polo et al., 2024).

``api`` (the entry function :func:`bounds`, its input handling and the selection helpers),
``fast`` (the exact and entropic bounds), ``models`` (the PyMC models, ``model(...,
variant="m1" | "m2" | "m3")``), ``result`` (:class:`BoundsEvaluation`), ``label_models`` (the
label models :math:`P(Y \\mid Z)`) and ``partitioned`` (the exact bounds on dask partitions).
"""

from bayeval.deprecation import renamed_builders
from bayeval.methods.bounds.api import bounds, compare_labelling_functions, rank_classifiers
from bayeval.methods.bounds.models import VARIANTS, model

__all__ = ["bounds", "compare_labelling_functions", "model", "rank_classifiers"]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
