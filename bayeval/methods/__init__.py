"""One package per method, each with the same files.

``api`` (the entry function and its input handling), ``fast`` (the closed forms), ``models`` (the
PyMC models, ``model(..., variant=...)``), ``result`` (its Evaluation subclass, where it has one),
``partitioned`` (its dask path, where it has one) and ``plots`` (its own figures, where it has
some; the method's package imports it, which registers them with the core's display registry).
Methods import only the core, never each other.
"""

from bayeval.methods import bounds, cbpe, judge, labelled, mvu, pemi

__all__ = ["bounds", "cbpe", "judge", "labelled", "mvu", "pemi"]
