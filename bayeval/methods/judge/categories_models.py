r"""The PyMC models of a judge of K categories, with the hidden labels summed out.

The data are the labelled K×K table :math:`C_{kj}` = #{Y = k, Ŷ = j} and the counts
:math:`u_j` of unlabelled items the judge labels :math:`j`
(:class:`~bayeval.methods.judge.categories.ClassCounts`). An unlabelled item is judged :math:`j`
with probability :math:`p_j = \sum_k\pi_kM_{kj}` whatever its hidden label, so the :math:`n` items
enter as one multinomial count vector: no discrete variable is left and the cost does not depend
on :math:`n`. As for two classes (:mod:`bayeval.methods.judge.models`):

* **Model A** (``variant="a"``), the misclassification model: :math:`\pi \sim
  \mathrm{Dirichlet}`, rows :math:`M_{k\cdot} \sim \mathrm{Dirichlet}`; :math:`(m_k)_k \sim
  \mathrm{Mult}(m, \pi)`, :math:`C_{k\cdot} \sim \mathrm{Mult}(m_k, M_{k\cdot})`,
  :math:`u \sim \mathrm{Mult}(n, M^\top\pi)`.
* **Model B** (``variant="b"``), the same likelihood in the calibration parametrisation
  :math:`\rho_j = P(\hat Y = j)`, :math:`\mu_{jk} = P(Y = k \mid \hat Y = j)`:
  :math:`(c_j + u_j)_j \sim \mathrm{Mult}(N, \rho)`, :math:`C_{\cdot j} \sim
  \mathrm{Mult}(c_j, \mu_{j\cdot})`, :math:`\pi_k = \sum_j\rho_j\mu_{jk}`.

A Dirichlet :math:`\alpha` on the table :math:`P(Y = k, \hat Y = j)` gives, by aggregation, both
models' priors: :math:`\pi \sim \mathrm{Dirichlet}(\sum_j\alpha_{kj})`, :math:`M_{k\cdot} \sim
\mathrm{Dirichlet}(\alpha_{k\cdot})` and :math:`\rho \sim \mathrm{Dirichlet}(\sum_k\alpha_{kj})`,
:math:`\mu_{j\cdot} \sim \mathrm{Dirichlet}(\alpha_{\cdot j})`, so both have the exact posterior of
:func:`~bayeval.methods.judge.categories.posterior_draws`. The default is Jeffreys' prior of the
:math:`K^2`-cell multinomial, all :math:`\alpha_{kj} = 1/2` (for two classes the binary judge's
default).
"""

from __future__ import annotations

import numpy as np

from bayeval.validation import as_choice

__all__ = ["class_model"]

VARIANTS = ("a", "b")


def class_model(table, unlabelled, classes, *, alpha, variant: str = "a"):
    r"""The PyMC model of a judge of K categories: Model A (``"a"``) or Model B (``"b"``).

    Parameters
    ----------
    table : array of int (K, K)
        Labelled items, rows the human label, columns the judge's.
    unlabelled : array of int (K,)
        Unlabelled items per judge label.
    classes : sequence
        The ``class`` coordinate.
    alpha : array (K, K)
        Dirichlet concentrations on the table's cells.
    variant : {"a", "b"}

    Returns
    -------
    pymc.Model
        Model A: free ``pi`` (dim ``class``) and ``misclassification`` (dims ``true``,
        ``judge``); Model B: free ``rho`` (dim ``judge``) and ``mu`` (dims ``judge``,
        ``true``), deterministic ``pi``. The counts are ``pm.Data``.

    Examples
    --------
    >>> a = class_model([[40, 8, 2], [6, 20, 4], [2, 6, 12]], [450, 320, 230], ["A", "tie", "B"],
    ...                 alpha=np.full((3, 3), 0.5))
    >>> [v.name for v in a.free_RVs]
    ['pi', 'misclassification']
    >>> b = class_model([[40, 8, 2], [6, 20, 4], [2, 6, 12]], [450, 320, 230], ["A", "tie", "B"],
    ...                 alpha=np.full((3, 3), 0.5), variant="b")
    >>> [v.name for v in b.free_RVs], [v.name for v in b.deterministics]
    (['rho', 'mu'], ['pi'])
    """
    import pymc as pm

    variant = as_choice(variant, "variant", VARIANTS)
    alpha = np.asarray(alpha, float)
    coords = {"class": list(classes), "true": list(classes), "judge": list(classes)}
    with pm.Model(coords=coords) as model:
        table = pm.Data("table", np.asarray(table, np.int64), dims=("true", "judge"))
        u = pm.Data("unlabelled", np.asarray(unlabelled, np.int64), dims="judge")
        rows, cols = table.sum(axis=1), table.sum(axis=0)
        if variant == "a":
            pi = pm.Dirichlet("pi", a=alpha.sum(axis=1), dims="class")
            mm = pm.Dirichlet("misclassification", a=alpha, dims=("true", "judge"))
            pm.Multinomial("human_labels", n=rows.sum(), p=pi, observed=rows, dims="class")
            pm.Multinomial("judge_given_human", n=rows, p=mm, observed=table,
                           dims=("true", "judge"))
            pm.Multinomial("unlabelled_judged", n=u.sum(), p=pm.math.dot(pi, mm), observed=u,
                           dims="judge")
        else:
            rho = pm.Dirichlet("rho", a=alpha.sum(axis=0), dims="judge")
            mu = pm.Dirichlet("mu", a=alpha.T, dims=("judge", "true"))
            pm.Multinomial("judged", n=cols.sum() + u.sum(), p=rho, observed=cols + u,
                           dims="judge")
            pm.Multinomial("human_given_judge", n=cols, p=mu, observed=table.T,
                           dims=("judge", "true"))
            pm.Deterministic("pi", pm.math.dot(rho, mu), dims="class")
    return model
