"""Judge: a rate from a noisy judge that labels everything plus human labels on a few items."""

from bayeval.methods.judge.api import judge

__all__ = ["judge"]
