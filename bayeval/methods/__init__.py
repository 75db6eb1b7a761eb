"""One package per method, each with the same files.

``api`` (the entry function and its input handling), ``fast`` (the closed forms), ``models`` (the
PyMC models, ``model(..., variant=...)``), ``result`` (its Evaluation subclass, where it has one)
and ``partitioned`` (its dask path, where it has one).
"""

from bayeval.methods import bounds, cbpe, judge, labelled, mvu, pemi

__all__ = ["bounds", "cbpe", "judge", "labelled", "mvu", "pemi"]
