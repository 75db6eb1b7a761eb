"""One module per method: its fast path, its PyMC model builder(s) and its entry function."""

from bayeval.methods import judge, labelled, pemi

__all__ = ["judge", "labelled", "pemi"]
