"""CBPE: performance of a binary classifier estimated without labels, chunk by chunk.

:func:`cbpe` is the entry function (:mod:`~bayeval.methods.cbpe.api`); :func:`model` builds
its PyMC models (:mod:`~bayeval.methods.cbpe.models`), :func:`kappa_posterior` is the grid
posterior of V2b's concentration (:mod:`~bayeval.methods.cbpe.kappa`), and
:mod:`~bayeval.methods.cbpe.partitioned` runs the fast path on dask partitions.
"""

from bayeval.deprecation import renamed_builders
from bayeval.methods.cbpe.api import NOISES, cbpe
from bayeval.methods.cbpe.kappa import kappa_posterior
from bayeval.methods.cbpe.models import VARIANTS, model, predictive_v2b

__all__ = ["NOISES", "cbpe", "kappa_posterior", "model", "predictive_v2b"]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
