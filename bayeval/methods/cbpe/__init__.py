"""CBPE: performance of a binary classifier estimated without labels, chunk by chunk.

:func:`cbpe` is the entry function (:mod:`~bayeval.methods.cbpe.api`); :func:`model` builds
its PyMC models (:mod:`~bayeval.methods.cbpe.models`), :func:`kappa_posterior` is the grid
posterior of V2b's concentration (:mod:`~bayeval.methods.cbpe.fast`), and
:mod:`~bayeval.methods.cbpe.partitioned` runs the fast path on dask partitions.
"""

import functools

from bayeval.deprecation import renamed_names
from bayeval.methods.cbpe.api import NOISES, cbpe
from bayeval.methods.cbpe.fast import kappa_posterior
from bayeval.methods.cbpe.models import model, predictive_v2b

__all__ = ["NOISES", "cbpe", "kappa_posterior", "model", "predictive_v2b"]

__getattr__ = renamed_names(__name__, {
    f"model_{variant}": (f"model(..., variant={variant!r})",
                         functools.partial(functools.partial, model, variant=variant))
    for variant in ("v0", "v2", "v2b")})
