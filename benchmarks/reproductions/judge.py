"""The LLM judge: §5.1-5.3 binary simulation, §5.4 continuous outcome, §6 Chatbot Arena."""

from __future__ import annotations

import numpy as np

import bayeval as be
from bayeval.methods.judge.fast import Counts, youden, z_value
from bayeval.metrics import confusion_counts

from .. import judge_graded as graded
from .core import SEED, Experiment, quiet, row

JUDGE_SHOWN = {"naive": "naive", "rogan_gladen_adjusted": "RG", "ppi": "PPI",
               "ppi_pp_unclipped": "PPI++", "eif": "EIF", "mle": "MLE"}


def _judge_fit(y, yhat, labelled, truth) -> dict[str, dict[str, float]]:
    """90 % logit intervals of every estimator over replicates (columns); coverage of
    ``truth`` (scalar or per replicate), mean width and mean error, over the replicates where
    the estimator exists.

    ``be.judge`` leaves Rogan-Gladen out of a grouped call as soon as one group has a smoothed
    kappa <= 0, so the replicates are fitted in two calls: kappa > 0, and the others (no RG).
    """
    m = labelled
    tp, fp, fn, tn = confusion_counts(y[:m].T, yhat[:m].T)
    t1 = yhat[m:].sum(0)
    counts = Counts(n11=tp, n10=fn, n01=fp, n00=tn, t1=t1, t0=y.shape[0] - m - t1)
    kappa = youden(counts, adjust=True, z=z_value(0.9))  # be.judge's test for RG
    truth = np.broadcast_to(truth, y.shape[1])
    parts = {est: {"lower": [], "upper": [], "mean": [], "sd": [], "truth": []}
             for est in JUDGE_SHOWN}
    for cols in (np.flatnonzero(kappa > 0), np.flatnonzero(kappa <= 0)):
        if not cols.size:
            continue
        with quiet():
            cf = be.judge(y[:m, cols], yhat[:m, cols], yhat[m:, cols], method="all",
                          ci_prob=0.9).closed_form
        for est in JUDGE_SHOWN:
            if est not in cf["estimator"].values:
                continue
            c = cf.sel(estimator=est)
            for key in ("lower", "upper", "mean", "sd"):
                parts[est][key].append(np.atleast_1d(c[key].values))
            parts[est]["truth"].append(truth[cols])
    out = {}
    for est, short in JUDGE_SHOWN.items():
        lo, hi, mean, sd, t = (np.concatenate(parts[est][k]) if parts[est][k] else np.array([])
                               for k in ("lower", "upper", "mean", "sd", "truth"))
        ok = np.isfinite(lo) & np.isfinite(hi)
        lo, hi, mean, sd, t = lo[ok], hi[ok], mean[ok], sd[ok], t[ok]
        out[short] = {"coverage": float(np.mean((lo <= t) & (t <= hi))),
                      "width": float(np.mean(hi - lo)), "bias": float(np.mean(mean - t)),
                      "sd": float(np.mean(sd)),
                      "width_se": float(np.std(hi - lo, ddof=1) / np.sqrt(max(ok.sum(), 1))),
                      "n": int(ok.sum())}
    return out


def _usable(y, yhat, m) -> np.ndarray:
    """The paper's filter (at least 2 labelled items of each class) and a labelled judge with
    both values (the estimators need it; a constant judge is rare here)."""
    m1 = y[:m].sum(0)
    j1 = yhat[:m].sum(0)
    return (m1 >= 2) & (m - m1 >= 2) & (j1 >= 1) & (j1 <= m - 1)


#: asymptotic (EIF/PPI width ratio, RG/EIF width ratio, EIF 90 % width) at N = 2000, keyed by
#: (q, m, theta): a reference computation from the paper's asymptotic variances (RG eq. 7, PPI
#: Prop. 2, EIF eq. 17) with q0 = q1 = q, widths 2 x 1.6449 sqrt(V/N) on the Wald scale
ASYMPTOTIC_JUDGE_WIDTHS = {
    (0.6, 20, 0.1): (0.54, 8.27, 0.219), (0.6, 20, 0.3): (0.73, 5.47, 0.331),
    (0.6, 20, 0.5): (0.77, 5.03, 0.360), (0.6, 100, 0.1): (0.53, 8.44, 0.098),
    (0.6, 100, 0.3): (0.72, 5.58, 0.148), (0.6, 100, 0.5): (0.76, 5.13, 0.161),
    (0.6, 200, 0.1): (0.52, 8.67, 0.069), (0.6, 200, 0.3): (0.71, 5.73, 0.105),
    (0.6, 200, 0.5): (0.75, 5.27, 0.114), (0.7, 20, 0.1): (0.59, 3.97, 0.214),
    (0.7, 20, 0.3): (0.79, 2.71, 0.313), (0.7, 20, 0.5): (0.83, 2.51, 0.337),
    (0.7, 100, 0.1): (0.58, 4.05, 0.096), (0.7, 100, 0.3): (0.78, 2.76, 0.141),
    (0.7, 100, 0.5): (0.82, 2.56, 0.151), (0.7, 200, 0.1): (0.56, 4.16, 0.068),
    (0.7, 200, 0.3): (0.77, 2.84, 0.100), (0.7, 200, 0.5): (0.81, 2.64, 0.108),
    (0.8, 20, 0.1): (0.65, 2.45, 0.201), (0.8, 20, 0.3): (0.86, 1.77, 0.278),
    (0.8, 20, 0.5): (0.89, 1.68, 0.295), (0.8, 100, 0.1): (0.64, 2.50, 0.090),
    (0.8, 100, 0.3): (0.84, 1.81, 0.126), (0.8, 100, 0.5): (0.88, 1.71, 0.133),
    (0.8, 200, 0.1): (0.62, 2.57, 0.064), (0.8, 200, 0.3): (0.82, 1.86, 0.090),
    (0.8, 200, 0.5): (0.86, 1.76, 0.096),
}


def judge_simulation(reps: int = 1000, thetas=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
                     qs=(0.6, 0.7, 0.8), budgets=(20, 100, 200), n_total: int = 2000,
                     seed: int = SEED + 4) -> list[dict]:
    r"""§5.1-5.3 (Figs. 2-4): binary simulation, :math:`q_0=q_1=q`, N = 2,000, labelled
    budgets of 1, 5 and 10 %, 90 % intervals; summaries of the paper's text statements."""
    rng = np.random.default_rng(seed)
    res = {}
    for theta in thetas:
        for q in qs:
            for m in budgets:
                y = (rng.random((n_total, reps)) < theta).astype(np.int8)
                yhat = np.where(y == 1, rng.random(y.shape) < q,
                                rng.random(y.shape) >= q).astype(np.int8)
                keep = _usable(y, yhat, m)
                res[theta, q, m] = _judge_fit(y[:, keep], yhat[:, keep], m, theta)
    exp = "Judge §5 binary simulation"

    def values(est, key, **fix):
        return np.array([v[est][key] for (t, q, m), v in res.items()
                         if all({"theta": t, "q": q, "m": m}[k] == x for k, x in fix.items())])

    def ratio(a, b, **fix):
        return values(a, "width", **fix) / values(b, "width", **fix)

    rows = []
    narrow = 1 - ratio("EIF", "PPI")
    rows.append(row(exp, "EIF width vs PPI: 1 - EIF/PPI", "35-55 % narrower (typically)",
                    f"{np.median(narrow):.0%} (range {narrow.min():.0%} to {narrow.max():.0%})",
                    "median over the grid; criterion: the median inside 35-55 %",
                    agrees=bool(0.35 <= np.median(narrow) <= 0.55)))
    ref = [(k, v) for k, v in ASYMPTOTIC_JUDGE_WIDTHS.items() if k[1] >= 100 and k[1] in budgets
           and k[0] in qs and k[2] in thetas]
    if ref:
        got = np.array([1 - res[k[2], k[0], k[1]]["EIF"]["sd"]
                        / res[k[2], k[0], k[1]]["PPI"]["sd"] for k, _ in ref])
        want = np.array([1 - v[0] for _, v in ref])
        rows.append(row(exp, f"1 - EIF/PPI standard error at the {len(ref)} reference points "
                        "with m >= 100", f"{want.min():.0%} to {want.max():.0%} (asymptotic, "
                        "reference computation)", f"{got.min():.0%} to {got.max():.0%}",
                        f"largest difference {np.abs(got - want).max():.3f}; Wald scale, as the "
                        "reference values (the logit intervals of a rate near 0 or 1 are skewed); "
                        "the paper prints no numbers",
                        agrees=bool(np.abs(got - want).max() <= 0.015),
                        values={k: (g, w) for (k, _), g, w in zip(ref, got, want,
                                                                   strict=True)}))
    big = [m for m in budgets if m >= 100] or list(budgets)
    pp = np.concatenate([ratio("PPI++", "EIF", m=m) for m in big])
    small = ratio("PPI++", "EIF", m=budgets[0])
    rows.append(row(exp, f"PPI++ width / EIF width, m >= {big[0]}", "nearly identical",
                    f"{pp.min():.3f} to {pp.max():.3f}",
                    f"at m = {budgets[0]}: {small.min():.3f} to {small.max():.3f} (the "
                    "unclipped lambda is noisy)", agrees=bool(np.all(np.abs(pp - 1) <= 0.05))))
    for q in qs:
        rg = ratio("RG", "EIF", q=q)
        rows.append(row(exp, f"RG width / EIF width, q = {q}",
                        "about 10x" if q == 0.6 else "3-15x over the grid",
                        f"{np.median(rg):.1f}x (range {rg.min():.1f} to {rg.max():.1f})",
                        "RG's logit interval cannot exceed width 1, EIF's is about 0.07-0.3"))
    mle = ratio("MLE", "EIF")
    rows.append(row(exp, "MLE width / EIF width", "slightly wider, comparable",
                    f"{np.median(mle):.3f} (range {mle.min():.3f} to {mle.max():.3f})",
                    "for a binary judge our closed-form MLE is the EIF estimate and its observed-"
                    "information se equals the EIF se; the paper's numerical MLE is a little "
                    "wider", agrees=bool(mle.max() <= 1.5)))
    for est in ("RG", "PPI", "PPI++", "EIF", "MLE"):
        cov = values(est, "coverage")
        rows.append(row(exp, f"{est} coverage of 90 % intervals (mean, min over the grid)",
                        "nominal" + (" or above (over-covers at small m, weak judge)"
                                     if est == "RG" else ""),
                        f"{cov.mean():.3f} (min {cov.min():.3f})",
                        f"{len(cov)} settings x up to {reps} replicates",
                        values={k: (v[est]["coverage"], v[est]["n"]) for k, v in res.items()},
                        agrees=bool(abs(cov.mean() - 0.9) <= 0.02 or (est == "RG"
                                                                       and cov.mean() > 0.9))))
    rg_small = values("RG", "coverage", m=budgets[0], q=qs[0])
    rows.append(row(exp, f"RG coverage, m = {budgets[0]}, q = {qs[0]}", "over-covers",
                    f"{rg_small.mean():.3f}", "", agrees=bool(rg_small.mean() > 0.9)))
    naive_mid = values("naive", "coverage", theta=0.5)
    naive_far = np.concatenate([values("naive", "coverage", theta=t) for t in (0.1, 0.9)
                                if t in thetas])
    rows.append(row(exp, "naive coverage at theta = 0.5 / at theta = 0.1, 0.9",
                    "near nominal at 0.5, severe undercoverage elsewhere",
                    f"{naive_mid.mean():.3f} / {naive_far.mean():.3f}" if naive_far.size
                    else f"{naive_mid.mean():.3f}", "",
                    agrees=bool(naive_mid.mean() > 0.8 and (not naive_far.size
                                                            or naive_far.max() < 0.1))))
    bias_rg = np.abs(values("RG", "bias", m=budgets[0]))
    bias_eif = np.abs(values("EIF", "bias", m=budgets[0]))
    rows.append(row(exp, f"max |bias|, m = {budgets[0]}: RG / EIF",
                    "RG considerably biased at 1 % labels",
                    f"{bias_rg.max():.3f} / {bias_eif.max():.3f}", "",
                    agrees=bool(bias_rg.max() > 2 * bias_eif.max())))
    return rows


#: (n11, n10, n01, n00) counted from the judge outputs in the paper's code repository
#: (github.com/yiqunchen/debias-llm-as-a-judge, data/judge_results), all items with a valid pick;
#: Y = human picked position A, judge = judge picked A (Claude Opus 4 against the named model)
ARENA = {("Gemini 2.5 Flash", "GPT-4o-mini"): (115, 55, 70, 85),
         ("Gemini 2.5 Flash", "GPT-5.2"): (100, 70, 73, 82),
         ("Gemini 2.5 Pro", "GPT-4o-mini"): (106, 31, 56, 83),
         ("Gemini 2.5 Pro", "GPT-5.2"): (93, 44, 50, 89),
         ("Qwen3-235B", "GPT-4o-mini"): (78, 46, 70, 81),
         ("Qwen3-235B", "GPT-5.2"): (63, 61, 87, 64)}
ARENA_TRUE = {"Gemini 2.5 Flash": 0.523, "Gemini 2.5 Pro": 0.496, "Qwen3-235B": 0.451}


def judge_arena(splits: int = 1000, seed: int = SEED + 5) -> list[dict]:
    r"""§6 (Fig. 7): 1,000 random 10 % labelled splits of each pair x judge, 90 % intervals of
    the win rate of position A over all items; the items are rebuilt from their 2x2 table."""
    rng = np.random.default_rng(seed)
    res = {}
    for key, (n11, n10, n01, n00) in ARENA.items():
        y = np.repeat(np.array([1, 1, 0, 0], np.int8), (n11, n10, n01, n00))
        yhat = np.repeat(np.array([1, 0, 1, 0], np.int8), (n11, n10, n01, n00))
        m = max(4, round(0.1 * y.size))  # Python's round is R's round-half-even
        order = np.argsort(rng.random((splits, y.size)), axis=1).T
        ys, yhs = y[order], yhat[order]
        keep = _usable(ys, yhs, m)
        res[key] = _judge_fit(ys[:, keep], yhs[:, keep], m, y.mean())
        res[key]["truth"] = float(y.mean())
        res[key]["splits"] = int(keep.sum())
    exp = "Judge §6 Chatbot Arena (Fig. 7)"
    rows = []
    for pair, truth in ARENA_TRUE.items():
        ours = res[pair, "GPT-4o-mini"]["truth"]
        rows.append(row(exp, f"true win rate, {pair}", truth, ours, "",
                        agrees=round(ours, 3) == truth))

    def span(est, key):
        v = [res[k][est][key] for k in ARENA]
        return min(v), max(v)

    fewest = min(res[k]["splits"] for k in ARENA)

    for est, cov_claim, width_claim in (("EIF", "near nominal", (0.27, 0.30)),
                                        ("PPI++", "near nominal", (0.27, 0.30)),
                                        ("MLE", "near nominal", (0.27, 0.30)),
                                        ("PPI", "slightly over nominal", (0.35, 0.44)),
                                        ("RG", "1.00", (0.76, 0.96))):
        lo, hi = span(est, "width")
        # the paper's ends are printed to 2 decimals and are Monte-Carlo means like ours
        tol = 0.005 + 3 * np.sqrt(2) * max(res[k][est]["width_se"] for k in ARENA)
        rows.append(row(exp, f"{est} mean width (range over the 6 pair x judge)",
                        f"{width_claim[0]:.2f}-{width_claim[1]:.2f}", f"{lo:.3f}-{hi:.3f}",
                        f"tolerance {tol:.3f}; splits with an estimate: " + ", ".join(
                            str(res[k][est]["n"]) for k in ARENA),
                        agrees=bool(abs(lo - width_claim[0]) <= tol
                                    and abs(hi - width_claim[1]) <= tol),
                        values={k: res[k][est]["width"] for k in ARENA}))
        clo, chi = span(est, "coverage")
        se = np.sqrt(0.09 / fewest)
        ok = (clo >= 0.99) if est == "RG" else (clo >= 0.9 - 4 * se)
        rows.append(row(exp, f"{est} coverage (range)", cov_claim, f"{clo:.3f}-{chi:.3f}",
                        f"{fewest} or more usable splits each",
                        agrees=bool(ok), se=float(se),
                        values={k: res[k][est]["coverage"] for k in ARENA}))
    naive = {k: res[k]["naive"]["coverage"] for k in ARENA}
    zero = [("Gemini 2.5 Pro", "GPT-4o-mini"), ("Qwen3-235B", "GPT-4o-mini"),
            ("Qwen3-235B", "GPT-5.2")]
    rows.append(row(exp, "naive coverage: Pro / 4o-mini, Qwen / both judges", "0 %",
                    ", ".join(f"{naive[k]:.3f}" for k in zero), "",
                    agrees=all(naive[k] <= 0.02 for k in zero), values=naive))
    rows.append(row(exp, "naive coverage: Pro / GPT-5.2", "near perfect",
                    f"{naive['Gemini 2.5 Pro', 'GPT-5.2']:.3f}", "",
                    agrees=naive["Gemini 2.5 Pro", "GPT-5.2"] >= 0.9))
    return rows


def continuous_asymptotic_widths(mu3: float, fraction: float, ci_prob: float) -> dict[str, float]:
    r"""Asymptotic interval widths :math:`2z\sqrt{V}` of §5.4's estimators, from the population
    moments (:math:`Z` uniform on {1, 2, 3}, :math:`\mu=(1, 2, \mu_3)`, unit noise): PPI
    :math:`\mathrm{Var}(\hat Y)/n+\mathrm{Var}(Y-\hat Y)/m`, PPI++ the same at ppi_py's optimal
    :math:`\lambda^*=\mathrm{Cov}(Y,\hat Y)/((1+m/n)\mathrm{Var}(\hat Y))`, EIF-linear and EIF
    :math:`\mathrm{Var}(\mu(\hat Y))/N+E[(Y-\mu(\hat Y))^2]/m` with the population line or cell
    means as :math:`\mu`; :math:`m` labelled and :math:`n=N-m` unlabelled items."""
    big_n = graded.N_ITEMS
    m = max(10, round(fraction * big_n))
    n = big_n - m
    var_z = 2 / 3
    means = np.array([1.0, 2.0, mu3])
    var_mu = float(means.var())
    cov = float(np.mean((means - means.mean()) * (np.arange(1, 4) - 2)))
    var_line = cov**2 / var_z
    lam = cov / ((1 + m / n) * var_z)
    variances = {"ppi": var_z / n + (var_mu + 1 + var_z - 2 * cov) / m,
                 "ppi_pp_unclipped": lam**2 * var_z / n + (var_mu + 1 - 2 * lam * cov
                                                           + lam**2 * var_z) / m,
                 "eif_linear": var_line / big_n + (var_mu + 1 - var_line) / m,
                 "eif": var_mu / big_n + 1 / m}
    return {k: float(2 * z_value(ci_prob) * np.sqrt(v)) for k, v in variances.items()}


#: §5.4's debiased estimators as ``benchmarks.judge_graded`` names them, and their page names
CONTINUOUS_DEBIASED = {"ppi": "PPI", "ppi_pp": "PPI++, λ clipped to [0, 1]",
                       "ppi_pp_unclipped": "PPI++, unclipped (the paper's)",
                       "eif_linear": "EIF-linear", "eif": "EIF (cell means)"}
CONTINUOUS_WIDTHS = ("ppi", "ppi_pp_unclipped", "eif_linear", "eif")


def judge_continuous(replications: int = 1000, fractions=graded.FRACTIONS, mu3s=graded.MU3,
                     ci_prob: float = 0.95, seed: int = graded.SEED) -> list[dict]:
    r"""§5.4 (Fig. 5): continuous outcome, discrete judge, through
    :func:`benchmarks.judge_graded.run` (its seeds: the same numbers as the script). Criteria:
    the coverage of :math:`E[Y]` within 2 points of ``ci_prob`` in every cell for PPI, PPI++ and
    both EIFs, and the paper's width order: PPI widest, PPI++ and EIF-linear nearly equal, the EIF
    with cell means narrowest, the gaps growing with :math:`\mu_3` (none at :math:`\mu_3=3`,
    where the judge is linear)."""
    frame = graded.run(replications, ci_prob, seed=seed, fractions=fractions, mu3s=mu3s)
    cells = {(f, m): g.set_index("estimator") for (f, m), g in frame.groupby(["fraction", "mu3"])}
    exp = "Judge §5.4 continuous outcome"
    level = f"{100 * ci_prob:g} %"
    se = float(np.sqrt(ci_prob * (1 - ci_prob) / replications))

    def spread(est, key):
        v = np.array([g.loc[est, key] for g in cells.values()])
        return f"{v.min():.3f}-{v.max():.3f} ({v.mean():.3f})"

    rows = []
    extra = {"ppi_pp": "; equals PPI for μ3 > 3, where ppi_py's estimate of λ exceeds 1 "
                       "and is clipped to 1",
             "eif": "; its pooled term (1/N) Σ μ̂(Ŷ) moves with the unlabelled mean, so "
                    "its intervals over-cover that mean"}
    for est, name in CONTINUOUS_DEBIASED.items():
        cov = {k: float(g.loc[est, "coverage_pop"]) for k, g in cells.items()}
        rows.append(row(exp, f"{name}: coverage of E[Y] by {level} intervals, min-max over the "
                        f"{len(cells)} cells (mean)", "nominal (figures only)",
                        spread(est, "coverage_pop"),
                        f"criterion: every cell within 0.02 of {ci_prob}; coverage of the "
                        f"unlabelled mean (the paper's truth): {spread(est, 'coverage')}"
                        + extra.get(est, ""),
                        agrees=all(round(abs(c - ci_prob), 9) <= 0.02 for c in cov.values()),
                        se=se,
                        values=cov))
    rows.append(row(exp, "classical (human labels only): coverage of E[Y], min-max (mean)",
                    "–", spread("classical", "coverage_pop"),
                    f"coverage of the unlabelled mean: {spread('classical', 'coverage')} "
                    "(independent of the unlabelled items, it under-covers their mean)", se=se))
    far = [g.loc["naive", "coverage_pop"] for (_, m), g in cells.items() if m > 3]
    if far:
        rows.append(row(exp, "naive (judge mean): coverage of E[Y], μ3 > 3, largest",
                        "lost once μ3 > 3", float(max(far)), "",
                        agrees=bool(max(far) <= 0.05)))
    width = {k: {e: float(g.loc[e, "width"]) for e in CONTINUOUS_WIDTHS}
             for k, g in cells.items()}
    width_se = max(float(g.loc[e, "width_se"]) for g in cells.values() for e in CONTINUOUS_WIDTHS)
    asym = {(f, m): continuous_asymptotic_widths(m, f, ci_prob) for f, m in cells}
    for (f, m), w in width.items():
        if m not in (3, 6, 9):
            continue
        rows.append(row(exp, f"mean width of {level} intervals, {f:.0%} labelled, μ3 = {m}: "
                        "PPI / PPI++ unclipped / EIF-linear / EIF",
                        "all equal" if m == 3 else "PPI > PPI++ ~ EIF-linear > EIF",
                        " / ".join(f"{w[e]:.3f}" for e in CONTINUOUS_WIDTHS),
                        "asymptotic " + " / ".join(f"{asym[f, m][e]:.3f}"
                                                   for e in CONTINUOUS_WIDTHS)))
    shifted = [k for k in width if k[1] > 3]
    middle = {k: (width[k]["ppi_pp_unclipped"], width[k]["eif_linear"]) for k in shifted}
    ordered = [k for k in shifted
               if width[k]["ppi"] > max(middle[k]) and min(middle[k]) > width[k]["eif"]]
    rows.append(row(exp, "PPI widest and EIF (cell means) narrowest, cells with μ3 > 3",
                    "yes", f"{len(ordered)} of {len(shifted)} cells",
                    f"width SEs at most {width_se:.4f}", agrees=len(ordered) == len(shifted)))
    pair = np.array([w["ppi_pp_unclipped"] / w["eif_linear"] for w in width.values()])
    rows.append(row(exp, "PPI++ / EIF-linear width, all cells", "nearly equal",
                    f"{pair.min():.3f}-{pair.max():.3f}", "criterion: within 2 %",
                    agrees=bool(np.all(np.abs(pair - 1) <= 0.02))))
    for f in fractions:
        path = [width[f, m] for m in mu3s if (f, m) in width]
        gaps = {name: np.array([w[a] / w[b] for w in path]) for name, (a, b) in
                {"PPI / EIF": ("ppi", "eif"), "EIF-linear / EIF": ("eif_linear", "eif")}.items()}
        rows.append(row(exp, f"{f:.0%} labelled: width ratios from μ3 = {mu3s[0]} to "
                        f"{mu3s[-1]}", "the gaps grow with μ3",
                        "; ".join(f"{name} {g[0]:.2f} -> {g[-1]:.2f}" for name, g in gaps.items()),
                        "criterion: both ratios increase at every step of μ3",
                        agrees=all(bool(np.all(np.diff(g) > 0)) for g in gaps.values())))
    diff = max(abs(width[k][e] / asym[k][e] - 1) for k in width for e in CONTINUOUS_WIDTHS)
    rows.append(row(exp, "largest |mean width / asymptotic width - 1|, all cells and estimators",
                    "–", f"{diff:.1%}", "asymptotic widths from the estimators' variances at "
                    "the population moments (continuous_asymptotic_widths)"))
    return rows


EXPERIMENTS: dict[str, Experiment] = {
    "judge_simulation": Experiment(
        "Judge", "§5.1-5.3 (Figs. 2-4): binary simulation",
        "N = 2,000, theta in 0.1-0.9, q0 = q1 in {0.6, 0.7, 0.8}, 1 %, 5 %, 10 % labelled, "
        "1,000 replicates per setting, 90 % intervals; bias, coverage, width.",
        "the same grid and replicate count through `be.judge(..., method='all')` (RG: the "
        "paper's adjusted variant; PPI++: its unclipped lambda); replicates with fewer than 2 "
        "labelled items of a class dropped, as the paper's code.",
        judge_simulation,
        "the paper's \"35-55 %\" is read off its figures, where the extreme prevalences and "
        "the smallest budget dominate; over the whole grid our ratios are smaller and match "
        "the asymptotic values of the paper's variance formulas (second row)"),
    "judge_continuous": Experiment(
        "Judge", "§5.4 (Fig. 5): continuous outcome, discrete judge",
        "N = 2,000 items, a latent class Z uniform on {1, 2, 3}, the human outcome "
        "Y | Z ~ N(μ_Z, 1) with μ = (1, 2, μ3), μ3 in 3-9, and the judge Ŷ = Z (it finds the "
        "class, on the wrong scale: E[Y | Ŷ] is a step function, linear only at μ3 = 3); 5 %, "
        "10 %, 20 % labelled; 500 replicates; 90 % intervals; coverage and width of PPI, PPI++, "
        "EIF-linear and EIF with a flexible calibration curve (after Ji et al. 2025). Figures "
        "only: every debiased estimator keeps nominal coverage; PPI is the widest, PPI++ and "
        "EIF-linear come next, nearly equal, and the EIF with a flexible curve is the narrowest, "
        "the gaps growing with μ3; the naive judge mean loses all coverage once μ3 > 3.",
        "the same design through `benchmarks.judge_graded` (`python -m benchmarks.judge_graded` "
        "prints its per-cell table), 1,000 replicates per cell and 95 % intervals: every "
        "replicate calls `be.judge` with the outcome declared unbounded (`y_range=(-inf, inf)`, "
        "Wald intervals, as the paper's code), `method=\"all\"` (EIF with cell means, the "
        "saturated curve for a 3-valued judge) and `method=\"eif\", mu_model=\"linear\"`. "
        "PPI++ is reported with ppi_py's λ clipped to [0, 1] and unclipped (the paper's). "
        "Coverage is of two targets: E[Y] = (3 + μ3)/3, which the intervals estimate, and the "
        "mean of Y over the unlabelled items, the paper's truth. They differ: the EIF's pooled "
        "term (1/N) Σ μ̂(Ŷ) moves with the unlabelled mean, so its intervals over-cover it, "
        "while the human-labels-only mean, independent of it, under-covers it; the paper's "
        "\"nominal coverage\" holds for E[Y]. Not reproduced: the paper's GAM and spline "
        "curves (bayeval has cells, a line and bins); with a 3-valued judge the paper's spline "
        "interpolates the three cell means, so it is the cell EIF, averaged over the unlabelled "
        "items only.",
        judge_continuous),
    "judge_arena": Experiment(
        "Judge", "§6 (Fig. 7): Chatbot Arena, 1,000 random 10 % labelled splits",
        "three model pairs judged by GPT-4o-mini and GPT-5.2; coverage and width of 90 % "
        "intervals of the win rate of position A.",
        "the same data rebuilt from the 2x2 tables of the judge outputs in the paper's code "
        "repository (every estimator sees only the (human, judge) pairs), 1,000 splits each.",
        judge_arena,
        "our PPI and PPI++ variances use ddof = 0 moments and the paper's code ddof = 1, which "
        "widens its intervals by about 2 % at m = 28-32 (PPI with ddof = 1: 0.342-0.440); "
        "Rogan-Gladen is left out of splits with a smoothed kappa <= 0 (most of Qwen3 / "
        "GPT-5.2), where the paper's code reports an interval of width about 1"),
}

NOT_REPRODUCIBLE = "Table 1 (the judges' q0, q1 on one random split whose seed is unknown)."
