r"""PEMI's K-class calibration model: multinomial Platt scaling with a posterior, and MNAR shifts.

The calibration map of K classes is Platt scaling on the log class probabilities,

.. math:: p_{ik}(a,b)=\frac{\exp(a_k+b\log s_{ik})}{\sum_j\exp(a_j+b\log s_{ij})},
          \qquad a_0=0,\ b>0,

the restriction :math:`W=bI` of Dirichlet calibration (Kull et al., NeurIPS 2019); with K = 2 it
is the binary Platt map :math:`\sigma(a_1+b\operatorname{logit}s_{i1})`. Its priors are those of
the binary model M1, :math:`a_k\sim\mathcal N(\mu_a,s_a^2)` for :math:`k\ge1` and
:math:`\log b\sim\mathcal N(\mu_b,s_b^2)`, and the labelled rows are observed as
:math:`y_j\sim\mathrm{Cat}(p_j(a,b))`.

A missing label is :math:`Y_i\sim\mathrm{Cat}(p^{\mathrm{mis}}_i)` with
:math:`p^{\mathrm{mis}}_{ik}\propto p_{ik}e^{\delta_k}`. When a label is missing with a
probability that depends on its class (and possibly on the row through a common factor),
:math:`P(M=1\mid Y=k,x)=r_k\,h(x)`, Bayes' rule gives this form exactly with
:math:`\delta_k=\log(r_k/r_0)+\mathrm{const}` for a map fitted on data that represent the whole
population; :math:`\delta=0` is missingness at random given the scores. Only differences of the
:math:`\delta_k` matter. No observed variable depends on :math:`\delta`, so a prior on it is its
posterior (pattern-mixture sensitivity, as the binary model M3).

The missing labels enter no likelihood: summed over their K values each contributes 1, so the
model holds continuous parameters only (NUTS) and the labels are drawn in the posterior
predictive. :func:`bayeval.multiclass_calibration.posterior` draws the same posterior without MCMC
(Laplace approximation, then importance sampling), for the fast paths and for checking the NUTS
draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayeval.methods.pemi.models import PRIOR_A, PRIOR_LOG_B
from bayeval.multiclass_calibration import (
    PlattPosterior,
    log_scores,
    platt_probabilities,
    posterior,
)

__all__ = ["PlattPosterior", "class_model", "log_scores", "platt_probabilities", "posterior"]

def class_model(cal_scores: Any, cal_labels: Any, *, classes: Any = None, delta=None,
                prior_a=PRIOR_A, prior_log_b=PRIOR_LOG_B):
    r"""PEMI's PyMC model of K classes: the multinomial Platt map's posterior, MNAR shifts.

    .. math:: a_k\sim\mathcal N(\mu_a,s_a^2)\ (k\ge1),\quad \log b\sim\mathcal N(\mu_b,s_b^2),
              \quad y_j\sim\mathrm{Cat}\big(\operatorname{softmax}(a+b\log s_j)\big),

    and, with a prior on the MNAR shifts, :math:`\delta_k\sim\mathcal N(\mu_k,s_k^2)` for the
    classes with :math:`s_k>0` (module docstring). The missing labels are summed out; they are
    drawn given the posterior draws in the predictive.

    Parameters
    ----------
    cal_scores : array-like, shape (n, K)
        Class probabilities of the labelled rows.
    cal_labels : array-like of int, shape (n,)
        Their classes' codes 0..K-1.
    classes : sequence, optional
        The names of the K classes (coordinate ``class``); default 0..K-1.
    delta : (numpy.ndarray, numpy.ndarray), optional
        Means and sds of the K shifts; a free ``delta`` (dim ``class``) when an sd is positive
        (the classes with sd 0 are fixed at their means).
    prior_a, prior_log_b : (mean, sd)
        Normal priors of the intercepts and of the log slope.

    Returns
    -------
    pm.Model
        Free ``a`` (dim ``free_class``, the classes after the first) and ``log_b``,
        deterministic ``b``, observed ``labels``; free ``delta_free`` and deterministic
        ``delta`` with a prior on the shifts.

    Examples
    --------
    >>> m = class_model([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], [0, 1, 2],
    ...                 classes=["x", "y", "z"])
    >>> [v.name for v in m.free_RVs], m.coords["free_class"]
    (['a', 'log_b'], ('y', 'z'))
    """
    import pymc as pm
    import pytensor.tensor as pt

    x = log_scores(np.asarray(cal_scores, dtype=float))
    y = np.asarray(cal_labels, dtype=np.int64)
    k = x.shape[1]
    names = list(range(k)) if classes is None else list(classes)
    with pm.Model(coords={"class": names, "free_class": names[1:],
                          "row": np.arange(y.size)}) as m:
        a_free = pm.Normal("a", mu=prior_a[0], sigma=prior_a[1], dims="free_class")
        log_b = pm.Normal("log_b", mu=prior_log_b[0], sigma=prior_log_b[1])
        b = pm.Deterministic("b", pm.math.exp(log_b))
        a = pm.math.concatenate([pm.math.zeros(1), a_free])
        pm.Categorical("labels", logit_p=a[None, :] + b * x, observed=y, dims="row")
        if delta is not None and np.any(delta[1] > 0):
            free = np.flatnonzero(delta[1] > 0)
            d = pm.Normal("delta_free", mu=delta[0][free], sigma=delta[1][free],
                          shape=free.size)
            pm.Deterministic("delta", pt.set_subtensor(
                pt.as_tensor(np.asarray(delta[0], dtype=float))[free], d), dims="class")
    return m
