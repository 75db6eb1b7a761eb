r"""The PyMC model of fully labelled evaluation: independent Beta–Binomial rates.

:math:`\theta_j \sim \mathrm{Beta}(a, b)`, :math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`,
independently per metric :math:`j` (the likelihood of each rate is its own binomial; the joint
law of the counts is not used). Its posterior is the conjugate one of
:func:`bayeval.methods.labelled.fast.posterior`; it is the reference model of the catalogue
(``models/labelled_beta_binomial``).
"""

from __future__ import annotations

import numpy as np

from bayeval.methods.labelled.fast import RATE_METRICS

__all__ = ["model"]


def model(successes, trials, *, metrics=RATE_METRICS, prior=(1.0, 1.0), variant=None):
    r"""The PyMC model: independent Beta–Binomial rates, one per metric.

    :math:`\theta_j \sim \mathrm{Beta}(a, b)`, :math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`.

    Parameters
    ----------
    successes, trials : array of int, one per metric
    metrics : sequence of str
        Names of the rates (the ``metric`` coordinate).
    prior : (a, b)
        Beta prior shared by the rates.
    variant : None
        The method has one model, so the only variant is None.

    Returns
    -------
    pymc.Model
        Free variable ``theta`` (dim ``metric``), observed ``successes``.

    Examples
    --------
    >>> m = model([5, 3], [7, 4], metrics=["accuracy", "recall"], prior=(2, 2))
    >>> [rv.name for rv in m.free_RVs], [rv.name for rv in m.observed_RVs]
    (['theta'], ['successes'])
    >>> m.named_vars_to_dims["theta"], m.coords["metric"]
    (('metric',), ('accuracy', 'recall'))
    """
    if variant is not None:
        raise ValueError(f"variant must be None: labelled has one model; got {variant!r}.")
    import pymc as pm

    with pm.Model(coords={"metric": list(metrics)}) as m:
        theta = pm.Beta("theta", alpha=prior[0], beta=prior[1], dims="metric")
        pm.Binomial("successes", n=np.asarray(trials), p=theta, observed=np.asarray(successes),
                    dims="metric")
    return m
