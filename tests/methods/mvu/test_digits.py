"""An offline substitute for the paper's MNIST: scikit-learn's digits, a 4 x 4 grid of 2 x 2-pixel
sensors each missing with probability 0.5. DMV's MVCE is below the imputation heuristics'."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from bayeval.methods.mvu.api import mvu
from bayeval.methods.mvu.calibration import mvce
from bayeval.methods.mvu.estimators import DMV, mcar_mask, sensor_groups

TRIALS = 64
#: reference (LogisticRegression, 70/30 split, mean imputation, 4 trials): mean and SD of MVCE
REFERENCE = {"zero_var": (0.271, 0.010), "max_var": (0.107, 0.008), "scale_prob": (0.091, 0.011)}


@pytest.fixture(scope="module")
def digits():
    d = load_digits()
    x_train, x_test, y_train, _ = train_test_split(d.data / 16, d.target, test_size=0.3,
                                                   random_state=0, stratify=d.target)
    clf = LogisticRegression(max_iter=2000).fit(x_train, y_train)
    groups = sensor_groups((8, 8), (4, 4))
    masks = mcar_mask(TRIALS * len(x_test), groups, 0.5, random_seed=0)
    x = np.where(masks, np.nan, np.tile(x_test, (TRIALS, 1)))
    y_full = np.tile(clf.predict(x_test), TRIALS)  # the classifier's decision, complete rows
    dmv = DMV(hidden=16, n_masks=4, max_iter=150, groups=groups, random_seed=0).fit(x_train, clf)
    per_trial = {}
    for name, kwargs in (("dmv", dict(imputer="dmv", dmv=dmv)),
                         *((h, dict(imputer="mean", heuristic=h)) for h in REFERENCE)):
        cf = mvu(clf, x, train=x_train, **kwargs).closed_form
        c, y = np.split(cf["c_hard"].values, TRIALS), np.split(cf["y_soft"].values, TRIALS)
        per_trial[name] = np.array([mvce(ci, yi, yf) for ci, yi, yf in
                                    zip(c, y, np.split(y_full, TRIALS), strict=True)])
    return per_trial


@pytest.mark.parametrize("heuristic", list(REFERENCE))
def test_heuristics_reproduce_the_reference(digits, heuristic):
    centre, sd = REFERENCE[heuristic]
    ours = digits[heuristic]
    assert abs(ours.mean() - centre) <= 4 * np.hypot(sd / 2, ours.std(ddof=1) / np.sqrt(TRIALS))


@pytest.mark.parametrize("heuristic", list(REFERENCE))
def test_dmv_mvce_is_below_the_heuristics(digits, heuristic):
    diff = digits["dmv"] - digits[heuristic]  # paired: same masks
    assert diff.mean() + 4 * diff.std(ddof=1) / np.sqrt(TRIALS) < 0
