"""Fully labelled evaluation: the posterior of a classifier's population rates.

``api`` (the entry function :func:`labelled`), ``fast`` (the conjugate Beta posterior,
:func:`posterior`) and ``models`` (the PyMC model, :func:`model`).
"""

from bayeval.methods.labelled.api import labelled
from bayeval.methods.labelled.fast import posterior
from bayeval.methods.labelled.models import model

__all__ = ["labelled", "model", "posterior"]
