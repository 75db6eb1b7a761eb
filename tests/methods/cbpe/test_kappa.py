"""The grid posterior of V2b's concentration against the normalised posterior density."""

import numpy as np
import pytest
from scipy import stats

from bayeval.methods.cbpe import kappa


def test_kappa_grid_posterior_is_the_normalised_posterior():
    k, n, c = [3, 9, 4, 12], [10, 12, 10, 15], [0.3, 0.6, 0.5, 0.7]
    x, w = kappa.kappa_posterior(k, n, c)
    fine = np.linspace(x[0], x[-1], 20_001)
    dens = np.exp(kappa._log_likelihood(fine, *(np.asarray(v, float) for v in (k, n, c)))
                  + stats.norm.logpdf(fine, *kappa.KAPPA_PRIOR))
    assert x @ w == pytest.approx(fine @ dens / dens.sum(), abs=1e-6)
