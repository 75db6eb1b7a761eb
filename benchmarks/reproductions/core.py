"""The pieces every reproduction uses: the seed, a page row, an experiment and its verdict."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

SEED = 20261122


def keyed_rng(*keys: int) -> np.random.Generator:
    """A generator seeded by a sequence of integers (the experiment's seed and a setting)."""
    return np.random.default_rng(list(keys))


def row(experiment: str, quantity: str, paper, ours, note: str = "", agrees: bool | None = None,
        se: float | None = None, values: dict | None = None) -> dict:
    """One row of the page; ``values`` keeps the numbers behind a summarised ``ours`` (for the
    tests), keyed by setting."""
    return {"experiment": experiment, "quantity": quantity, "paper": paper, "ours": ours,
            "note": note, "agrees": agrees, "se": se, "values": values or {}}


@contextmanager
def quiet() -> Iterator[None]:
    """Warnings of the methods (weak judges, small cells...) are expected in simulations."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@dataclass
class Experiment:
    """One experiment of a paper: its method, title, the paper's design and ours, the function
    that returns its rows, and why it differs where it does."""

    method: str
    title: str
    paper: str
    ours: str
    run: Callable[[], list[dict]]
    because: str = ""


def verdict(exp: Experiment, rows: list[dict]) -> str:
    """One sentence: how many of the rows with a criterion agree, and which do not."""
    judged = [r for r in rows if r["agrees"] is not None]
    bad = [r for r in judged if not r["agrees"]]
    if not judged:
        return "qualitative comparison only (see the rows)."
    if not bad:
        return (f"agrees within Monte-Carlo error and the stated tolerances (all {len(judged)} "
                "checked rows).")
    names = "; ".join(r["quantity"] for r in bad[:6]) + ("; ..." if len(bad) > 6 else "")
    because = f" Differs because {exp.because}." if exp.because else ""
    return (f"agrees in {len(judged) - len(bad)} of {len(judged)} checked rows; differs in: "
            f"{names}." + because)
