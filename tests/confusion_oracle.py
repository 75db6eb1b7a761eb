"""Enumeration oracle of the tests of bayeval.confusion and bayeval.confusion_moments.

Small cases (n <= 12): every completion of the unknown labels is enumerated with its probability,
and the metric is computed in exact rational arithmetic, independently of bayeval.metrics.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

BETA = 2.0  # fbeta uses beta^2 = 4 throughout


def case(seed: int, n: int, n_known: int, *, y_pred: str = "random", p: str = "uniform",
          scores: str = "ties") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(y_pred, p, labels with NaN for unknown, scores) of a small reproducible case."""
    rng = np.random.default_rng(seed)
    yp = {"random": rng.integers(0, 2, n), "ones": np.ones(n, int),
          "zeros": np.zeros(n, int)}[y_pred]
    prob = {"uniform": rng.uniform(0, 1, n), "half": np.full(n, 0.5),
            "small": rng.uniform(0, 0.15, n)}[p]
    labels = np.full(n, np.nan)
    known = rng.choice(n, n_known, replace=False)
    labels[known] = rng.integers(0, 2, n_known)
    s = np.round(rng.uniform(0, 1, n), 1) if scores == "ties" else rng.normal(size=n)
    return yp, prob, labels, s


CASES = {
    "no_labels": case(0, 10, 0),
    "known_and_certain_p": case(1, 12, 3),  # p set to 0 and 1 on some unknown rows below
    "all_predicted_positive": case(2, 9, 2, y_pred="ones"),
    "all_predicted_negative": case(3, 8, 1, y_pred="zeros"),
    "dyadic_p_many_ties": case(4, 11, 2, p="half"),
    "often_undefined": case(5, 7, 0, p="small", scores="distinct"),
    "nearly_known": case(6, 12, 10),
}
CASES["known_and_certain_p"][1][np.flatnonzero(np.isnan(CASES["known_and_certain_p"][2]))[:2]] = (
    0.0, 1.0)


def exact_metric(metric: str, tp: int, fp: int, fn: int, tn: int):
    """Exact metric as a sortable key (MCC: its signed square) and its float; None if undefined."""
    f = Fraction
    b2 = f(BETA) ** 2
    pos, neg = tp + fn, tn + fp
    ratios = {"accuracy": (tp + tn, tp + fp + fn + tn), "precision": (tp, tp + fp),
              "recall": (tp, pos), "specificity": (tn, neg), "npv": (tn, tn + fn),
              "f1": (2 * tp, 2 * tp + fp + fn),
              "fbeta": ((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)}
    if metric in ratios:
        num, den = ratios[metric]
        return None if den == 0 else (f(num) / den, float(f(num) / den))
    if metric == "balanced_accuracy":
        if pos == 0 or neg == 0:  # scikit-learn: the recall of the class present
            return None if pos == neg == 0 else exact_metric(
                "specificity" if pos == 0 else "recall", tp, fp, fn, tn)
        value = (f(tp, pos) + f(tn, neg)) / 2
        return value, float(value)
    den = (tp + fp) * pos * neg * (tn + fn)  # mcc
    if den == 0:
        return None
    num = tp * tn - fp * fn
    square = f(num * num, den) * (1 if num >= 0 else -1)
    return square, math.copysign(math.sqrt(abs(square)), num)


@cache
def completions(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels of every completion, its probability)."""
    _, p, labels, _ = CASES[name]
    unknown = np.flatnonzero(np.isnan(labels))
    bits = (np.arange(2**unknown.size)[:, None] >> np.arange(unknown.size)) & 1
    y = np.tile(np.nan_to_num(labels), (bits.shape[0], 1))
    y[:, unknown] = bits
    return y.astype(int), np.prod(np.where(bits == 1, p[unknown], 1 - p[unknown]), axis=1)


@cache
def oracle(name: str, metric: str, zero_division: float):
    """Exact law by enumeration: (values, probs, p_undefined)."""
    yp = CASES[name][0]
    y, w = completions(name)
    tp, fn = (y * yp).sum(1), (y * (1 - yp)).sum(1)
    fp, tn = yp.sum() - tp, (1 - yp).sum() - fn
    law: dict = {}
    p_undefined = []
    for k in np.flatnonzero(w > 0):  # completions of probability 0 (p in {0, 1}) are impossible
        exact = exact_metric(metric, int(tp[k]), int(fp[k]), int(fn[k]), int(tn[k]))
        if exact is None:
            p_undefined.append(w[k])
            if np.isnan(zero_division):
                continue
            zd = Fraction(int(zero_division))  # MCC's key is its signed square: the same here
            exact = zd, float(zd)
        law.setdefault(exact, []).append(w[k])
    keys = sorted(law)
    probs = np.array([math.fsum(law[key]) for key in keys])
    pu = math.fsum(p_undefined)
    if np.isnan(zero_division):
        return ((np.array([np.nan]), np.ones(1), pu) if not keys
                else (np.array([v for _, v in keys]), probs / (1 - pu), pu))
    return np.array([v for _, v in keys]), probs, pu


def moderate_case(seed: int = 7, n: int = 60):
    """A case with both classes known in both predicted groups, so no metric is ever undefined."""
    rng = np.random.default_rng(seed)
    yp = np.r_[1, 1, 0, 0, rng.integers(0, 2, n - 4)]
    p = rng.beta(2, 2, n)
    labels = np.full(n, np.nan)
    labels[:4] = [1, 0, 1, 0]
    labels[4:20] = rng.integers(0, 2, 16)
    return yp, p, labels
