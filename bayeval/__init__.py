"""bayeval: Bayesian evaluation of ML models when the ground truth is missing, noisy or absent.

One function per method, each returning an :class:`Evaluation`::

    import bayeval as be
    ev = be.labelled(labels=y, y_pred=y_hat, method="both")
    ev.summary(); ev.check(); ev.diagnostics(); ev.sensitivity()
"""

from importlib.metadata import version

from bayeval import methods, plots  # plots and report register Evaluation.plot() and .report()
from bayeval.evaluation import Evaluation, load
from bayeval.methods.bounds import bounds
from bayeval.methods.cbpe import cbpe
from bayeval.methods.judge import compare_systems, judge, pool_judges
from bayeval.methods.labelled import labelled
from bayeval.methods.mvu import mvu
from bayeval.methods.pemi import pemi
from bayeval.report import report

__version__ = version("bayeval")
__all__ = [
    "Evaluation", "__version__", "bounds", "cbpe", "compare_systems", "judge", "labelled", "load",
    "methods", "mvu", "pemi", "plots", "pool_judges", "report",
]
