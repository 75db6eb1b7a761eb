r"""Memory bounds: inputs whose work would need more than :data:`MEMORY_LIMIT` are refused
before any work is done, with the amount needed and the argument that sets it.

Each bound is the size of the largest array the work holds at once, from the sizes of the
input (measured with :mod:`tracemalloc`; the constants below are bytes per cell):

* :func:`check_label_draws`: draws of every row's label (a sampled model that keeps them, e.g.
  CBPE's forward draws for ROC-AUC): ``draws`` x rows cells of :data:`LABEL_DRAW_BYTES`;
* :func:`check_classes`: K x K arrays per draw and window (confusion matrices of K classes).

The limit is 4 GiB; a user who has more memory may raise it (``bayeval.validation.memory.
MEMORY_LIMIT = 16 * 2**30``).
"""

from __future__ import annotations

__all__ = ["FLOAT_BYTES", "LABEL_DRAW_BYTES", "MEMORY_LIMIT", "check_classes",
           "check_label_draws", "check_memory"]

MEMORY_LIMIT = 4 * 2**30
"""Bytes an evaluation may need at most (4 GiB)."""

LABEL_DRAW_BYTES = 52
"""Peak bytes per draw and row of label draws: the sampler's int64 labels and their ranking
(measured: 1.04 GB for 1,000 draws of 20,000 rows, 3.9 GB for 4,000 draws)."""

FLOAT_BYTES = 8


def _size(nbytes: float) -> str:
    """``nbytes`` in GiB or MiB, e.g. '4.0 GiB'."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.0f} MiB"


def check_memory(needed: float, argument: str, what: str, advice: str) -> None:
    """Refuse work that needs more than :data:`MEMORY_LIMIT` bytes.

    Parameters
    ----------
    needed : float
        Bytes the work needs.
    argument : str
        The argument that sets the size (named in the error).
    what : str
        What would be allocated, with its dimensions.
    advice : str
        What the user can change.

    Raises
    ------
    ValueError
        If ``needed`` exceeds the limit.

    Examples
    --------
    >>> check_memory(2**20, "draws", "1,000 x 1,000 floats", "use fewer draws")
    >>> check_memory(2**40, "draws", "a lot", "use fewer draws")
    Traceback (most recent call last):
    ...
    ValueError: draws: a lot would need 1024.0 GiB of memory, more than the limit of 4.0 GiB \
(bayeval.validation.memory.MEMORY_LIMIT); use fewer draws.
    """
    if needed > MEMORY_LIMIT:
        raise ValueError(f"{argument}: {what} would need {_size(needed)} of memory, more than "
                         f"the limit of {_size(MEMORY_LIMIT)} "
                         f"(bayeval.validation.memory.MEMORY_LIMIT); {advice}.")


def check_label_draws(draws: int, rows: int, argument: str = "draws",
                      advice: str = "use fewer draws or rows") -> None:
    """Refuse ``draws`` draws of the labels of ``rows`` rows beyond the limit
    (:data:`LABEL_DRAW_BYTES` a cell).

    Examples
    --------
    >>> check_label_draws(4000, 20_000)
    >>> check_label_draws(4000, 300_000)
    Traceback (most recent call last):
    ...
    ValueError: draws: 4,000 draws of the labels of 300,000 rows would need 58.1 GiB of \
memory, more than the limit of 4.0 GiB (bayeval.validation.memory.MEMORY_LIMIT); use fewer \
draws or rows.
    """
    check_memory(float(draws) * rows * LABEL_DRAW_BYTES, argument,
                 f"{draws:,} draws of the labels of {rows:,} rows", advice)


def check_classes(n_classes: int, cells: int, argument: str, advice: str) -> None:
    """Refuse K x K float arrays over ``cells`` draws x windows beyond the limit.

    Examples
    --------
    >>> check_classes(10, 4000 * 11, "labels", "use fewer classes")
    >>> check_classes(10**5, 1, "labels", "use fewer classes")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: labels: 100,000 x 100,000 arrays (100,000 classes) over 1 draws and windows \
would need 74.5 GiB of memory, ...
    """
    check_memory(float(n_classes) ** 2 * cells * FLOAT_BYTES, argument,
                 f"{n_classes:,} x {n_classes:,} arrays ({n_classes:,} classes) over {cells:,} "
                 "draws and windows", advice)

