"""The demo: every method on embedded or simulated data (``bayeval demo``, ``make demo``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import bayeval as be
from bayeval import datasets

__all__ = ["run"]


def _steps(seed: int) -> list[tuple[str, Callable[[], be.Evaluation]]]:
    data = datasets.breast_cancer(random_seed=seed)
    rng = np.random.default_rng(seed)
    # production: 400 held-out cases resampled in 4 chunks, no labels
    rows = rng.choice(data.scores.size, size=400)
    masked = datasets.mask_labels(data.labels, p_m=0.3, mechanism="mnar", eta=0.7,
                                  random_seed=seed)
    judge = datasets.noisy_judge(200, 5000, prevalence=0.6, sensitivity=0.9,
                                 specificity=0.8, random_seed=seed)
    weak = datasets.weak_labels(3000, min_votes=1, random_seed=seed)
    incomplete = data.X[:40].copy()
    incomplete[rng.random(incomplete.shape) < 0.3] = np.nan
    return [
        ("labelled: every label known (breast-cancer classifier)",
         lambda: be.labelled(data.scores, data.labels, method="both", random_seed=seed)),
        ("cbpe: no labels in production, 4 chunks of 100 cases",
         lambda: be.cbpe(data.scores[rows], reference=(data.scores, data.labels),
                         chunk_size=100, metrics=["accuracy", "precision", "recall", "f1"],
                         method="both", random_seed=seed)),
        ("pemi: 30% of the test labels missing, mostly positives (MNAR)",
         lambda: be.pemi(data.scores, masked.labels, mnar=(0.0, 1.0),
                         metrics=["precision", "recall", "f1", "roc_auc"], random_seed=seed)),
        ("judge: an LLM judge on 5,200 answers, humans on 200",
         lambda: be.judge(judge.y, judge.yhat, judge.yhat_unlabeled, method="all",
                          random_seed=seed)),
        ("bounds: no labels, three labelling functions vote",
         lambda: be.bounds(weak.y_pred, weak.weak_labels, random_seed=seed)),
        ("mvu: 40 new patients with 30% of their measurements missing",
         lambda: be.mvu(data.classifier.predict_proba, incomplete, train=data.X[40:],
                        random_seed=seed)),
    ]


def run(seed: int = 0, verbose: bool = False) -> list[be.Evaluation]:
    """Evaluations of each method; the fast path and the model are checked where both ran.

    In order: ``labelled`` on the breast-cancer classifier (fast path and PyMC), ``cbpe`` on 400
    unlabelled cases in 4 chunks (both), ``pemi`` with 30 % of the labels missing not at random,
    ``judge`` with every estimator, ``bounds`` from three labelling functions and ``mvu`` on 40
    cases with missing features (see :mod:`bayeval.datasets`).

    Parameters
    ----------
    seed : int
        Seed of the data and of every method.
    verbose : bool
        Print each step's title before running it.

    Returns
    -------
    list of Evaluation
        One per method, in the order above.

    Examples
    --------
    The steps, and the data they are built from, without running them:

    >>> [title.split(":")[0] for title, _ in _steps(seed=0)]
    ['labelled', 'cbpe', 'pemi', 'judge', 'bounds', 'mvu']

    The whole demo samples the PyMC models of several methods (minutes), so it is not run here:

    >>> evaluations = run(seed=0, verbose=True)  # doctest: +SKIP
    >>> be.report(evaluations, "bayeval-demo/report.html")  # doctest: +SKIP
    """
    out = []
    for title, step in _steps(seed):
        if verbose:
            print(f"== {title}", flush=True)
        out.append(step())
    return out
