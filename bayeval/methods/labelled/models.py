r"""The PyMC model of fully labelled evaluation: independent Beta–Binomial rates.

:math:`\theta_j \sim \mathrm{Beta}(a, b)`, :math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`,
independently per metric :math:`j` (the likelihood of each rate is its own binomial; the joint
law of the counts is not used). Its posterior is the conjugate one of
:func:`bayeval.methods.labelled.fast.posterior`; it is the reference model of the catalogue
(``models/labelled_beta_binomial``).

With K classes (``variant="dirichlet"``, :func:`dirichlet_model`): the cell probabilities of the
K x K confusion matrix, :math:`\pi\sim\mathrm{Dirichlet}(\alpha)`,
:math:`C\sim\mathrm{Multinomial}(n,\pi)`; its posterior is the conjugate
:math:`\mathrm{Dirichlet}(\alpha+C)` of :func:`bayeval.methods.labelled.fast.class_posterior`,
and :func:`bayeval.methods.labelled.fast.metric_draws` turns draws of :math:`\pi` into draws of
the metrics.
"""

from __future__ import annotations

import numpy as np

from bayeval.methods.labelled.fast import RATE_METRICS, cell_prior

__all__ = ["dirichlet_model", "model"]

VARIANTS = (None, "dirichlet")


def model(*args, variant=None, **kwargs):
    r"""The PyMC model: independent Beta–Binomial rates (two classes), or the Dirichlet–multinomial
    confusion matrix of K classes (``variant="dirichlet"``, :func:`dirichlet_model`).

    :math:`\theta_j \sim \mathrm{Beta}(a, b)`, :math:`k_j \sim \mathrm{Binomial}(m_j, \theta_j)`.

    Parameters
    ----------
    *args, **kwargs
        The data and prior of the variant, by position or by name:

        * ``successes``, ``trials``, arrays of int, one per metric (two classes);
        * ``metrics``, sequence of str: names of the rates (the ``metric`` coordinate);
        * ``prior``, (a, b): Beta prior shared by the rates;
        * with ``variant="dirichlet"``: ``matrix, classes, prior`` instead
          (:func:`dirichlet_model`).
    variant : {None, "dirichlet"}
        The rates of two classes, or the confusion matrix of K classes.

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
    if variant not in VARIANTS:
        raise ValueError(f"variant must be None (the rates of two classes) or 'dirichlet' (the "
                         f"confusion matrix of K classes); got {variant!r}.")
    if variant == "dirichlet":
        return dirichlet_model(*args, **kwargs)
    return _rates(*args, **kwargs)


def _rates(successes, trials, *, metrics=RATE_METRICS, prior=(1.0, 1.0)):
    import pymc as pm

    with pm.Model(coords={"metric": list(metrics)}) as m:
        theta = pm.Beta("theta", alpha=prior[0], beta=prior[1], dims="metric")
        pm.Binomial("successes", n=np.asarray(trials), p=theta, observed=np.asarray(successes),
                    dims="metric")
    return m


def dirichlet_model(matrix, classes, *, prior=(1.0, 1.0)):
    r"""The PyMC model of K classes: a Dirichlet on the cells of the confusion matrix.

    .. math:: \pi\sim\mathrm{Dirichlet}(\alpha),\qquad
              \operatorname{vec}C\sim\mathrm{Multinomial}(n,\operatorname{vec}\pi),

    with :math:`\alpha` from ``prior`` (:func:`bayeval.methods.labelled.fast.cell_prior`).

    Parameters
    ----------
    matrix : array of int (K, K)
        The confusion matrix, rows true classes, columns predictions.
    classes : array (K,)
        The classes (coordinates ``true`` and ``predicted``).
    prior : (a, b) or array (K, K)
        The Dirichlet's concentrations, or the pair they are spread from.

    Returns
    -------
    pymc.Model
        Free variable ``cells_flat`` (dim ``cell``, the row-major cells), its K x K view
        ``cells`` (dims ``true``, ``predicted``), observed ``matrix``.

    Examples
    --------
    >>> m = model([[5, 1, 0], [2, 3, 1], [0, 0, 4]], ["a", "b", "c"], variant="dirichlet")
    >>> [rv.name for rv in m.free_RVs], [rv.name for rv in m.observed_RVs]
    (['cells_flat'], ['matrix'])
    >>> m.named_vars_to_dims["cells"]
    ('true', 'predicted')
    """
    import pymc as pm

    c = np.asarray(matrix, dtype=np.int64)
    k = c.shape[0]
    alpha = cell_prior(prior, k)
    coords = {"true": list(classes), "predicted": list(classes), "cell": np.arange(k * k)}
    with pm.Model(coords=coords) as m:
        flat = pm.Dirichlet("cells_flat", a=alpha.ravel(), dims="cell")
        pm.Deterministic("cells", flat.reshape((k, k)), dims=("true", "predicted"))
        pm.Multinomial("matrix", n=int(c.sum()), p=flat, observed=c.ravel(), dims="cell")
    return m
