"""MVU hard confidence of non-linear classifiers: accuracy of the default against a Monte-Carlo
ground truth.

Design: six correlated Gaussian features (a random correlation matrix, seed 20261201), the label
``x1 + x2 x3 - 0.7 x4 + 0.5 sin(2 x5) + 0.3 x6^2 - 0.3 + noise > 0``, 3,000 training rows; a
random forest (100 trees) and histogram gradient boosting fitted on them; 150 test rows, each
feature missing with probability 0.4 (at least one missing, at least one observed). The
ground truth of a row is the vote frequency of 50,000 imputations pushed through the classifier
(standard error at most 0.0022), once under the Gaussian fitted to the training rows (the
estimators' own model: their error alone) and once under the true Gaussian.

Estimators, each with 1,000 imputations per row, over 4 seeds: the default (vote of randomly
shifted quasi-Monte-Carlo imputations), the plain vote of independent imputations
(``method="mc"``), and the exact c_hard of Dirichlet summaries of the quasi-Monte-Carlo draws
(maximum likelihood, the former default, which fitted it to independent draws; moments). The
table gives the mean absolute c_hard error (mean over seeds, with its standard error) and,
for the default, the mean squared error over the mean squared ``c_hard_se`` (1 when the
standard error is honest).

Run ``python -m benchmarks.accuracy_mvu`` (about 10 minutes on one core).
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from threadpoolctl import threadpool_limits

from bayeval.methods.mvu import mvu
from bayeval.methods.mvu.estimators import GaussianImputer

SEED = 20261201
D, N_TRAIN, N_TEST, P_MISSING = 6, 3000, 150, 0.4
TRUTH_DRAWS, DRAWS, SEEDS = 50_000, 1_000, 4
ESTIMATORS = {"default (quasi-Monte-Carlo vote)": {},
              "plain vote (method='mc')": {"method": "mc"},
              "Dirichlet MLE, exact c_hard (former default)": {"dirichlet": "mle"},
              "Dirichlet moments, exact c_hard": {"dirichlet": "moments"}}


def design():
    """Training rows and labels, test rows with NaN, the true correlation matrix."""
    rng = np.random.default_rng(SEED)
    a = rng.normal(size=(D, D))
    cov = a @ a.T / D + 0.5 * np.eye(D)
    cov /= np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    x = rng.multivariate_normal(np.zeros(D), cov, size=N_TRAIN + N_TEST)
    f = (x[:, 0] + x[:, 1] * x[:, 2] - 0.7 * x[:, 3] + 0.5 * np.sin(2 * x[:, 4])
         + 0.3 * x[:, 5] ** 2 - 0.3)
    y = (f + rng.normal(size=len(x)) > 0).astype(int)
    m = rng.random((N_TEST, D)) < P_MISSING
    m[m.all(1), 0] = False
    m[~m.any(1), 1] = True
    return x[:N_TRAIN], y[:N_TRAIN], np.where(m, np.nan, x[N_TRAIN:]), cov


def truth(clf, test, imputer) -> np.ndarray:
    return mvu(clf, test, imputer=imputer, method="mc", draws=TRUTH_DRAWS,
               random_seed=SEED + 1).closed_form["c_hard"].values


def run() -> list[dict]:
    train, y, test, cov = design()
    fitted, true = GaussianImputer.fit(train), GaussianImputer(np.zeros(D), cov)
    rows = []
    for name, clf in (("random forest", RandomForestClassifier(n_estimators=100,
                                                               random_state=0)),
                      ("gradient boosting", HistGradientBoostingClassifier(random_state=0))):
        clf.fit(train, y)
        gt = {"fitted": truth(clf, test, fitted), "true": truth(clf, test, true)}
        for label, kwargs in ESTIMATORS.items():
            err = {k: [] for k in gt}
            ratio = []
            for seed in range(SEEDS):
                cf = mvu(clf, test, imputer=fitted, draws=DRAWS, random_seed=seed,
                         **kwargs).closed_form
                c = cf["c_hard"].values
                for k in gt:
                    err[k].append(np.abs(c - gt[k]).mean())
                if not kwargs:  # the default
                    se = cf["c_hard_se"].values
                    ratio.append(np.mean((c - gt["fitted"]) ** 2) / np.mean(se**2))
            rows.append({"classifier": name, "estimator": label,
                         **{f"err_{k}": float(np.mean(v)) for k, v in err.items()},
                         **{f"se_{k}": float(np.std(v, ddof=1) / np.sqrt(SEEDS))
                            for k, v in err.items()},
                         "mse_over_se2": float(np.mean(ratio)) if ratio else None,
                         "mean_c_hard": float(gt["fitted"].mean())})
    return rows


if __name__ == "__main__":
    with threadpool_limits(1):
        for r in run():
            print(" | ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                             for k, v in r.items()))
