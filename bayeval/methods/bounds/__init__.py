"""Fréchet bounds: evaluating a classifier from weak labels only (Maia Polo et al., 2024)."""

from bayeval.methods.bounds.api import bounds

__all__ = ["bounds"]
