"""CBPE: performance of a binary classifier estimated without labels, chunk by chunk."""

from bayeval.methods.cbpe.api import cbpe

__all__ = ["cbpe"]
