"""The display registry: what ``Evaluation.plot()`` and ``Evaluation.report()`` call.

The core imports no face, yet an :class:`~bayeval.evaluation.Evaluation` draws figures and writes
reports: :mod:`bayeval.plots` and :mod:`bayeval.report` register their entry functions here
(:func:`register_display`), and the figures register as plot kinds (:func:`register_plot`):
the generic ones in :mod:`bayeval.plots`, a method's own in its package (e.g.
``bayeval/methods/mvu/plots.py``). ``import bayeval`` imports them all. This module imports
nothing of bayeval, and the figure modules import matplotlib only when they draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bayeval.evaluation import Evaluation

__all__ = ["DEFAULT_PLOT_KINDS", "DISPLAYS", "PLOT_KINDS", "PlotKind", "for_methods",
           "register_display", "register_plot"]

#: colours of every figure: posterior draws, fast path, alerts
DRAWS_COLOR, FAST_COLOR, ALERT_COLOR = "#1f5a96", "#d55e00", "#b2182b"
#: the functions behind :meth:`Evaluation.plot` (``"plot"``) and :meth:`Evaluation.report`
#: (``"report"``), registered by :mod:`bayeval.plots` and :mod:`bayeval.report`
DISPLAYS: dict[str, Callable[..., Any]] = {}


def register_display(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Make ``fn`` the display ``name`` of every Evaluation, and return it.

    ``name`` is ``"plot"`` (``fn(ev, kind, **kwargs)``) or ``"report"`` (``fn(ev, path,
    **kwargs)``).

    Examples
    --------
    >>> from bayeval import display  # filled by ``import bayeval``
    >>> {name: fn.__module__ for name, fn in display.DISPLAYS.items()}
    {'plot': 'bayeval.plots', 'report': 'bayeval.report'}
    """
    DISPLAYS[name] = fn
    return fn


@dataclass(frozen=True)
class PlotKind:
    """A figure of Evaluations: ``draw(ev, **kwargs) -> Figure``, a one-line ``description``
    (shown in the HTML report), and ``applies(ev)``: None where it applies, else the reason.

    Examples
    --------
    >>> from bayeval import display  # filled by ``import bayeval``
    >>> display.PLOT_KINDS["trace"].description.split(":")[0]
    'MCMC traces and per-chain densities'
    """

    draw: Callable[..., Any]
    description: str
    applies: Callable[[Evaluation], str | None]


#: every plot kind, in the order the report shows them (:mod:`bayeval.plots` has the generic ones)
PLOT_KINDS: dict[str, PlotKind] = {}
#: the default kind of a method, where it is not the generic one
DEFAULT_PLOT_KINDS: dict[str, str] = {}


def register_plot(name: str, description: str,
                  applies: Callable[[Evaluation], str | None] = lambda ev: None):
    """Decorator adding a drawing function ``fn(ev, **kwargs) -> Figure`` as plot kind ``name``.

    Parameters
    ----------
    name : str
        The kind, for ``Evaluation.plot`` (a registered name is replaced).
    description : str
        One line saying what the figure shows.
    applies : callable, optional
        ``applies(ev) -> str | None`` (e.g. :func:`for_methods`); by default every evaluation.

    Returns
    -------
    callable
        The decorator; it returns ``fn`` unchanged.

    Examples
    --------
    >>> @register_plot("nothing", "no figure", applies=for_methods("labelled"))
    ... def nothing(ev):
    ...     return None
    >>> PLOT_KINDS.pop("nothing").draw is nothing
    True
    """
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        PLOT_KINDS[name] = PlotKind(fn, description, applies)
        return fn
    return wrap


def for_methods(*methods: str) -> Callable[[Evaluation], str | None]:
    """The applicability test of a kind specific to ``methods`` (for :func:`register_plot`).

    Examples
    --------
    >>> import bayeval as be
    >>> ev = be.labelled(labels=[1, 0, 1, 1], y_pred=[1, 0, 0, 1])
    >>> for_methods("labelled")(ev) is None, for_methods("cbpe", "pemi")(ev)
    (True, 'it is specific to method cbpe or pemi')
    """
    def applies(ev: Evaluation) -> str | None:
        if ev.meta["method"] in methods:
            return None
        return f"it is specific to method {' or '.join(methods)}"
    return applies
