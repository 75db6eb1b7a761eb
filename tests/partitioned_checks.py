"""Checks shared by the partitioned paths' tests: a dask result equals the in-memory one."""

import numpy as np

#: partitioned and in-memory results agree to rounding
EXACT = 1e-12


def assert_same(a, b, tol=EXACT):
    """Every variable of Dataset ``b`` equals ``a``'s: floats to ``tol`` (NaN where NaN); PMFs
    as laws (:func:`assert_same_laws`)."""
    if "pmf_prob" in b:
        assert_same_laws(a, b, tol)
    for name in set(b.data_vars) - {"pmf_value", "pmf_prob"}:
        x, y = a[name].values, b[name].values
        assert x.shape == y.shape, name
        if x.dtype.kind == "f":
            np.testing.assert_allclose(y, x, rtol=0, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(y, x, err_msg=name)


def assert_same_laws(a, b, tol):
    """The PMFs (``pmf_value``, ``pmf_prob`` over ``support``) of ``a`` and ``b`` give every value
    the same probability to ``tol``. The supports may differ by values of probability below
    1e-15: each side cuts its count PMFs where they fall below 1e-16, and those ends differ by
    rounding."""
    for point in np.ndindex(a["pmf_prob"].shape[:-1]):
        laws = [(ds["pmf_value"].values[point], ds["pmf_prob"].values[point]) for ds in (a, b)]
        laws = [(v[np.isfinite(p)], p[np.isfinite(p)]) for v, p in laws]
        support = np.union1d(laws[0][0], laws[1][0])
        aligned = []
        for values, probs in laws:
            full = np.zeros(support.size)
            full[np.searchsorted(support, values)] = probs
            aligned.append(full)
        np.testing.assert_allclose(aligned[1], aligned[0], rtol=0, atol=tol)


def tied_scores(rng, n):
    """Scores on a grid of 0.01 (many ties) with a block of 0.5 (a tie group larger than a score
    range, and at the threshold)."""
    scores = rng.beta(2, 3, n).round(2)
    scores[rng.random(n) < 0.15] = 0.5
    return scores
