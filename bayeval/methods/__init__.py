"""One package per method, each with the same files.

``api`` (the entry function and its input handling), ``fast`` (the closed forms), ``models`` (the
PyMC models, ``model(..., variant=...)``), ``result`` (its Evaluation subclass, where it has one),
``partitioned`` (its dask path, where it has one) and ``plots`` (its own figures, where it has
some; importing it registers them with the core's display registry, as this package does).
Methods import only the core, never each other.
"""

from bayeval.methods import bounds, cbpe, judge, labelled, mvu, pemi
from bayeval.methods.mvu import plots as mvu_plots  # noqa: F401 (registers MVU's figure)

__all__ = ["bounds", "cbpe", "judge", "labelled", "mvu", "pemi"]
