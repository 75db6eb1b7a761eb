r"""The result of the Fréchet bounds: an :class:`~bayeval.evaluation.Evaluation` with bounds first.

``summary()`` has one row per metric: ``lower_bound``/``upper_bound`` are the estimated bounds
(posterior means for draws); ``lower``/``upper`` cover the identified set: the lower end of the
lower bound's interval and the upper end of the upper bound's; ``mean`` is the midpoint
:math:`(L+U)/2` (the "bounds average" of Maia Polo et al., 2024, the mean of the metric under a
uniform coupling position) and ``sd`` the sd of the metric draw
:math:`M = L + u\,(U - L)`. ``check()`` compares the NUTS draws of each bound with model M1's
exact conjugate posterior, which :func:`check_reference` summarises.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayeval.evaluation import CI_KINDS, Evaluation
from bayeval.table import Table, table
from bayeval.validation import as_choice, as_ci_prob

__all__ = ["BoundsEvaluation", "check_reference"]


def check_reference(draws: np.ndarray, metrics, ci_prob: float) -> xr.Dataset:
    """Mean, sd, equal-tailed interval and its mass of independent draws of the bounds.

    What :meth:`BoundsEvaluation.check` compares the NUTS draws with.

    Parameters
    ----------
    draws : float array (n_draws, n_metrics, 2)
        Lower and upper bound per draw and metric
        (:func:`~bayeval.methods.bounds.models.m1_posterior_bounds`).
    metrics : sequence of str
    ci_prob : float
        Level of the interval.

    Returns
    -------
    xr.Dataset
        ``mean``, ``sd``, ``lower``, ``upper`` and ``interval_mass`` over (metric, bound).

    Examples
    --------
    >>> draws = np.stack([np.linspace(0.1, 0.3, 101), np.linspace(0.6, 0.8, 101)], axis=-1)
    >>> ref = check_reference(draws[:, None, :], ["accuracy"], 0.9)
    >>> ref["mean"].values.round(3).tolist()
    [[0.2, 0.7]]
    """
    tail = (1 - ci_prob) / 2
    lower, upper = np.quantile(draws, [tail, 1 - tail], axis=0)
    mass = ((draws >= lower) & (draws <= upper)).mean(axis=0)
    dims = ("metric", "bound")
    return xr.Dataset(
        {"mean": (dims, draws.mean(axis=0)), "sd": (dims, draws.std(axis=0, ddof=1)),
         "lower": (dims, lower), "upper": (dims, upper), "interval_mass": (dims, mass)},
        coords={"metric": list(metrics), "bound": ["lower", "upper"]})


class BoundsEvaluation(Evaluation, method="bounds"):
    """An :class:`Evaluation` of a partially identified metric: bounds first.

    ``summary()`` has one row per metric with ``lower_bound``, ``upper_bound`` (estimated
    bounds), ``lower``/``upper`` (the interval covering the identified set) and ``mean``/``sd``
    of a metric draw under a uniform coupling position (module docstring). ``check()`` compares
    the NUTS draws of each bound with M1's exact conjugate posterior.

    Examples
    --------
    >>> from bayeval.methods.bounds import bounds
    >>> weak = [[1, 1], [1, 0], [1, 0], [0, -1], [0, 0], [-1, 1]] * 50
    >>> y_pred = [1, 1, 0, 0, 0, 1] * 50
    >>> ev = bounds(y_pred, weak, label_model="majority_vote")
    >>> type(ev).__name__
    'BoundsEvaluation'
    >>> ev.summary()[["lower_bound", "upper_bound", "lower", "upper"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
    bounds (exact), closed form: 95% equal-tailed intervals (eti)
               lower_bound  upper_bound  lower  upper
    metric
    accuracy         0.654          1.0  0.599    1.0
    precision        0.654          1.0  0.577    1.0
    recall           0.654          1.0  0.590    1.0
    f1               0.654          1.0  0.587    1.0
    """

    def summary(self, source: str | None = None, ci_prob: float | None = None,
                ci_kind: str | None = None) -> Table:
        """One row per metric: the bounds, an interval covering the identified set, a metric draw.

        Parameters
        ----------
        source : {"closed_form", "draws"}, optional
            By default the draws where a model was sampled, else the closed form (then as
            :meth:`Evaluation.summary`).
        ci_prob, ci_kind : optional
            Interval level and kind for the draws.

        Returns
        -------
        Table
            From draws: ``mean``/``sd`` of ``value`` (a metric draw under a uniform coupling),
            ``lower``/``upper`` (the lower end of the lower bound's interval and the upper end of
            the upper bound's), ``lower_bound``/``upper_bound`` (posterior means) with their sds,
            and ``r_hat`` (the larger of the two bounds').

        Examples
        --------
        Independent draws of model M1's bounds
        (:func:`~bayeval.methods.bounds.models.m1_posterior_bounds`) stand in for NUTS:

        >>> from bayeval.methods.bounds.models import m1_posterior_bounds
        >>> import xarray as xr
        >>> counts, beta = [[300, 700], [500, 100]], [[0.6, 0.4], [0.2, 0.8]]
        >>> d = m1_posterior_bounds(counts, beta, ["accuracy"], draws=2000, random_seed=1)
        >>> d = d.reshape(2, 1000, 1, 2)  # two "chains" of (lower, upper) bound draws
        >>> dims = ("chain", "draw", "metric")
        >>> post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
        ...                    "value": (dims, d.mean(axis=-1))}, coords={"metric": ["accuracy"]})
        >>> ref = check_reference(m1_posterior_bounds(counts, beta, ["accuracy"], random_seed=2),
        ...                       ["accuracy"], 0.95)  # what bounds() stores for the check
        >>> ev = BoundsEvaluation.create(
        ...     method="bounds", variant="pymc", estimand="posterior/value",
        ...     draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))
        >>> ev.summary()[["lower", "upper", "lower_bound", "upper_bound"]].round(4)
        ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        bounds (pymc), posterior: bounds are posterior means; ...
                   lower   upper  lower_bound  upper_bound
        metric
        accuracy  0.0539  0.5984       0.0744       0.5756
        """
        default = "draws" if self.draws is not None else "closed_form"
        if as_choice(source or default, "source", ("closed_form", "draws")) == "closed_form":
            return super().summary("closed_form", ci_prob, ci_kind)
        ci_prob = as_ci_prob(self.ci_prob if ci_prob is None else ci_prob)
        ci_kind = as_choice(ci_kind or self.ci_kind, "ci_kind", CI_KINDS)
        import arviz as az

        post = self.tree["posterior"].to_dataset()
        interval = az.eti if ci_kind == "eti" else az.hdi
        dims = ("chain", "draw")
        frame = xr.Dataset({
            "mean": post["value"].mean(dims), "sd": post["value"].std(dims, ddof=1),
            "lower": interval(post["lower_bound"], prob=ci_prob).sel(ci_bound="lower", drop=True),
            "upper": interval(post["upper_bound"], prob=ci_prob).sel(ci_bound="upper", drop=True),
            "lower_bound": post["lower_bound"].mean(dims),
            "upper_bound": post["upper_bound"].mean(dims),
            "lower_bound_sd": post["lower_bound"].std(dims, ddof=1),
            "upper_bound_sd": post["upper_bound"].std(dims, ddof=1),
            "r_hat": np.maximum(az.rhat(post["lower_bound"]), az.rhat(post["upper_bound"])),
        }).to_dataframe()
        caption = (f"bounds ({self.meta['variant']}), posterior: bounds are posterior means; "
                   f"lower/upper = {100 * ci_prob:g}% {ci_kind} lower end of the lower bound and "
                   "upper end of the upper bound; mean/sd of a metric draw (uniform coupling)")
        return table(frame, caption, ci_prob=ci_prob, ci_kind=ci_kind, source="draws")

    def check(self) -> Table:
        """Each bound's NUTS draws against M1's conjugate posterior and the reported bounds.

        The tests of :func:`bayeval.check.compare` (mean, variance ratio, interval mass) per
        metric and bound, with 4-sigma Monte-Carlo tolerances: the sampler is right; and the
        sampler's own tests (:func:`bayeval.check.sampler_tests` on the whole posterior: worst
        R-hat, bulk and tail ESS, divergences; bound and metric ``"sampler"``), which those
        tolerances assume. With a
        fast path (``method="both"``) also ``reported_bound`` and ``reported_sd``: the
        posterior mean is within half a standard error (plus 4 MCSE) of the bound the results
        table reports, and the posterior sd within 50 % of its standard error; they fail when
        the posterior and the fast path tell different stories.

        Returns
        -------
        Table
            Indexed by ``(bound, metric, test)``; ``attrs["passed"]`` as in
            :meth:`Evaluation.check`.

        Raises
        ------
        ValueError
            Unless model M1 was sampled (M2 and M3 have no closed-form posterior).

        Examples
        --------
        Independent draws of model M1's bounds
        (:func:`~bayeval.methods.bounds.models.m1_posterior_bounds`) stand in for NUTS:

        >>> from bayeval.methods.bounds.models import m1_posterior_bounds
        >>> import xarray as xr
        >>> counts, beta = [[300, 700], [500, 100]], [[0.6, 0.4], [0.2, 0.8]]
        >>> d = m1_posterior_bounds(counts, beta, ["accuracy"], draws=2000, random_seed=1)
        >>> d = d.reshape(2, 1000, 1, 2)  # two "chains" of (lower, upper) bound draws
        >>> dims = ("chain", "draw", "metric")
        >>> post = xr.Dataset({"lower_bound": (dims, d[..., 0]), "upper_bound": (dims, d[..., 1]),
        ...                    "value": (dims, d.mean(axis=-1))}, coords={"metric": ["accuracy"]})
        >>> ref = check_reference(m1_posterior_bounds(counts, beta, ["accuracy"], random_seed=2),
        ...                       ["accuracy"], 0.95)  # what bounds() stores for the check
        >>> ev = BoundsEvaluation.create(
        ...     method="bounds", variant="pymc", estimand="posterior/value",
        ...     draws=xr.DataTree.from_dict({"posterior": post, "check_reference": ref}))
        >>> ev.check()[["fast", "draws", "tolerance", "passed"]].round(4)
        ... # doctest: +NORMALIZE_WHITESPACE
        fast path vs MCMC draws, 4-sigma Monte-Carlo tolerances: all passed
                                         fast   draws  tolerance  passed
        bound metric   test
        lower accuracy mean            0.0743  0.0744     0.0009    True
                       variance_ratio  1.0000  0.9839     0.1303    True
                       interval_mass   0.9500  0.9530     0.0210    True
        upper accuracy mean            0.5757  0.5756     0.0010    True
                       variance_ratio  1.0000  1.0077     0.1263    True
                       interval_mass   0.9500  0.9520     0.0198    True
        """
        if "check_reference" not in self.tree.children:
            raise ValueError("check() compares model M1's NUTS draws of the bounds with their "
                             "exact conjugate posterior; run bounds(..., method='pymc' or "
                             "'both', model='m1'). M2 and M3 have no closed-form posterior: "
                             "use diagnostics().")
        post = self.tree["posterior"].to_dataset()
        draws = xr.concat([post["lower_bound"], post["upper_bound"]],
                          dim=pd.Index(["lower", "upper"], name="bound"))
        groups = {"posterior": post.assign(bounds=draws)}
        if "sample_stats" in self.tree.children:  # the sampler's own tests run too
            groups["sample_stats"] = self.tree["sample_stats"].to_dataset()
        view = Evaluation.create(
            method="bounds", variant=self.meta["variant"], ci_prob=self.ci_prob,
            closed_form=self.tree["check_reference"].to_dataset(), estimand="posterior/bounds",
            draws=xr.DataTree.from_dict(groups))
        out = view.check()
        if self.closed_form is None:
            return out
        reported = _against_reported(draws, self.closed_form)
        frame = pd.concat([out, reported]).sort_index(level=["bound", "metric"],
                                                      sort_remaining=False)
        passed = bool(frame["passed"].all())
        caption = ("posterior vs NUTS reference (4-sigma Monte-Carlo tolerances) and vs the "
                   "reported fast-path bounds (half a standard error, sd within 50%): "
                   + ("all passed" if passed else "FAILED"))
        if "; the sampler" in out.caption:  # the view's verdict on the sampler's own tests
            caption += out.caption[out.caption.index("; the sampler"):]
        return table(frame, caption, passed=passed)


def _against_reported(draws: xr.DataArray, closed: xr.Dataset) -> pd.DataFrame:
    r"""The posterior of each bound against the bound and sd the results table reports.

    ``reported_bound``: :math:`|\bar x - \hat B| \le \mathrm{SE}/2 + 4\,\mathrm{MCSE}`;
    ``reported_sd``: :math:`|\log(s / \mathrm{SE})| \le \log 1.5`. Both reports then give
    the same centre to within half a standard error and the same spread to within 50 %, so a
    reader would draw the same conclusion from either. A bound reported at 0 or 1 is clipped in
    both, and only its centre is compared.
    """
    import arviz as az

    rows = []
    for bound in ("lower", "upper"):
        for metric in draws["metric"].values:
            x = draws.sel(bound=bound, metric=metric).transpose("chain", "draw").values
            fast = float(closed[f"{bound}_bound"].sel(metric=metric))
            se = float(closed[f"{bound}_bound_sd"].sel(metric=metric))
            if not (np.isfinite(fast) and np.isfinite(x).all()):
                continue
            n_eff = float(az.ess(x, method="mean"))
            mcse = float(x.std(ddof=1)) / np.sqrt(max(n_eff, 1.0))
            sd = float(x.std(ddof=1))
            with np.errstate(divide="ignore"):
                log_ratio = abs(np.log(sd / se)) if se > 0 and sd > 0 else (
                    0.0 if sd == se else np.inf)
            rows.append((bound, metric, "reported_bound", fast, float(x.mean()),
                         abs(x.mean() - fast), se / 2 + 4 * mcse, n_eff))
            if 0.0 < fast < 1.0:  # at 0 or 1 both are clipped and the spreads not comparable
                rows.append((bound, metric, "reported_sd", se, sd, log_ratio, np.log(1.5),
                             n_eff))
    frame = pd.DataFrame(rows, columns=["bound", "metric", "test", "fast", "draws", "statistic",
                                        "tolerance", "n_eff"])
    frame["passed"] = frame["statistic"] <= frame["tolerance"]
    return frame.set_index(["bound", "metric", "test"])
