"""The figure of MVU: hard confidence and its reliability (plot kind ``"confidence"``).

Importing this module registers the kind with the core's display registry
(:func:`bayeval.display.register_plot`) and makes it MVU's default, so that
``ev.plot()`` and the HTML report of an MVU evaluation draw it. Matplotlib is imported when the
figure is drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bayeval.display import (
    DEFAULT_PLOT_KINDS,
    DRAWS_COLOR,
    FAST_COLOR,
    for_methods,
    register_plot,
)
from bayeval.methods.mvu.calibration import reliability

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from bayeval.evaluation import Evaluation

__all__ = ["confidence"]


@register_plot("confidence", "hard confidence: its histogram over instances and a reliability "
                             "diagram against the consistency of the decisions",
               applies=for_methods("mvu"))
def confidence(ev: Evaluation, n_bins: int = 10) -> Figure:
    """Left: histogram of ``c_hard``. Right: per bin of ``c_hard`` (the ``n_bins`` equal-width
    bins of :func:`~bayeval.methods.mvu.calibration.reliability`), the mean confidence against
    the share of instances whose hard decision ``y_hard`` equals the soft one ``y_soft``.

    Parameters
    ----------
    ev : Evaluation
        An MVU evaluation (``be.mvu``).
    n_bins : int
        Equal-width bins of ``c_hard`` on [0, 1].

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the histogram and the reliability diagram (bin counts annotated).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import bayeval as be
    >>> from bayeval.methods.mvu.estimators import LinearClassifier
    >>> rng = np.random.default_rng(0)
    >>> cov = [[0.3, 0.383406], [0.383406, 1]]
    >>> X = rng.multivariate_normal([0, 0], cov, size=30)
    >>> X[rng.random(X.shape) < 0.3] = np.nan
    >>> ev = be.mvu(LinearClassifier([[1.0, 1.0]], [-1.0]), X,
    ...             train=rng.multivariate_normal([0, 0], cov, size=2000), random_seed=0)
    >>> left, right = confidence(ev).axes
    >>> int(sum(bar.get_height() for bar in left.patches))  # every instance in the histogram
    30
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    table = ev.summary()
    c = table["c_hard"].to_numpy(dtype=float)
    keep = np.isfinite(c)
    rel = reliability(c[keep], table["y_hard"].to_numpy()[keep],
                      table["y_soft"].to_numpy()[keep], n_bins)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    left.hist(c[keep], bins=np.linspace(0, 1, 2 * n_bins + 1), color=DRAWS_COLOR, alpha=0.6,
              label="instances")
    left.set_xlabel("hard confidence c_hard")
    left.set_ylabel("instances")
    left.set_title("hard confidence")
    right.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect calibration")
    right.plot(rel["confidence"], rel["consistency"], "-o", color=FAST_COLOR, ms=4,
               label="share with y_hard = y_soft")
    for conf, cons, count in zip(rel["confidence"], rel["consistency"], rel["count"],
                                 strict=True):
        right.annotate(str(count), (conf, cons), xytext=(4, 4), textcoords="offset points",
                       fontsize=7, color="0.35")
    right.set_xlim(0, 1.02)
    right.set_ylim(-0.02, 1.05)
    right.set_xlabel("mean c_hard in bin")
    right.set_ylabel("consistency")
    right.set_title("reliability (bin counts annotated)")
    fig.suptitle(f"{ev.meta['method']} ({ev.meta['variant']}): hard confidence")
    fig.legend(loc="outside lower center", ncols=3)  # the labelled artists of both axes
    return fig


DEFAULT_PLOT_KINDS["mvu"] = "confidence"
