"""One module per method: its fast path, its PyMC model builder(s) and its entry function."""

from bayeval.methods import cbpe, judge, labelled, pemi

__all__ = ["cbpe", "judge", "labelled", "pemi"]
