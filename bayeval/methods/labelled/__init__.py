"""Fully labelled evaluation: the posterior of a classifier's population rates."""

from bayeval.methods.labelled.api import labelled

__all__ = ["labelled"]
