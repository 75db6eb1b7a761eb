"""Reproductions of the papers' experiments that run offline; writes ``docs/reproductions.md``.

One module per method (``cbpe``, ``pemi``, ``judge``, ``bounds``, ``mvu``) holds one function per
experiment and their ``EXPERIMENTS``; each function returns rows ``experiment``, ``quantity``,
``paper``, ``ours``, ``note``, ``agrees`` (True/False when the row has a criterion, None when it is
a qualitative comparison) and, where a Monte-Carlo error is known, ``se`` (``core.row``).
Replication counts are keyword arguments, so that ``tests/test_reproductions.py`` runs small
versions of the same code. The data are scikit-learn's bundled data sets, bayeval's simulators
and, for the judge's real-data example, the 2x2 tables (``ARENA``) counted from the judge outputs
of the Chatbot Arena example that the paper's code ships
(github.com/yiqunchen/debias-llm-as-a-judge, ``data/judge_results``; every estimator depends on
the items only through their (Y, judge) pair). No network.

``python -m benchmarks.reproductions`` runs everything and writes the page, with the time of
each experiment (``page.render``); ``python -m benchmarks.reproductions judge_arena
mvu_synthetic`` runs some experiments and prints their rows without writing it.
"""

from .bounds import bounds_breast_cancer, bounds_validity, bounds_weak_label_choice
from .cbpe import REFERENCE_SHORTCUT, cbpe_covariate_shift, cbpe_coverage, cbpe_shortcuts
from .core import Experiment, row, verdict
from .judge import ARENA, ARENA_TRUE, judge_arena, judge_continuous, judge_simulation
from .mvu import mvu_synthetic
from .page import EXPERIMENTS, NOT_REPRODUCIBLE, main, render
from .pemi import pemi_mcar

__all__ = [
    "ARENA", "ARENA_TRUE", "EXPERIMENTS", "NOT_REPRODUCIBLE", "REFERENCE_SHORTCUT", "Experiment",
    "bounds_breast_cancer", "bounds_validity", "bounds_weak_label_choice", "cbpe_covariate_shift",
    "cbpe_coverage", "cbpe_shortcuts", "judge_arena", "judge_continuous", "judge_simulation",
    "main", "mvu_synthetic", "pemi_mcar", "render", "row", "verdict",
]
