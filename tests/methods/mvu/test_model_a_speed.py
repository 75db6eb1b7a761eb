"""Model A's likelihood from the training rows' sufficient statistics: the same log density and
gradient as N MvNormal rows, a compiled gradient that holds no (N, d) array (its cost does not
grow with N), MvNormal draws for predictive checks, and a log likelihood per posterior draw that
sensitivity() can use."""

import numpy as np
import pymc as pm
import pytest
from pytensor.compile.mode import Mode
from pytensor.graph.basic import Constant
from scipy import stats

from bayeval.methods.mvu.api import mvu
from bayeval.methods.mvu.models import model
from tests.methods.mvu.synthetic import CLF

pytestmark = pytest.mark.xdist_group("mvu_model_a_speed")
#: the rewrites of the sampler's compiled functions, run by Python (nothing to compile)
REWRITTEN = Mode(linker="py", optimizer="fast_run")


def rows_model(train):
    """Model A with the rows' likelihood written row by row (observed MvNormal), the same priors."""
    z = (train - train.mean(0)) / train.std(0)
    d = z.shape[1]
    with pm.Model() as m:
        mu = pm.Normal("mu", 0.0, 2.0, shape=(d,))
        packed = pm.LKJCholeskyCov("chol", eta=2.0, n=d, sd_dist=pm.HalfNormal.dist(2.0),
                                   compute_corr=False)
        pm.MvNormal("x_train", mu=mu, chol=pm.math.expand_packed_triangular(d, packed),
                    observed=z)
    return m


@pytest.fixture(scope="module")
def train():
    rng = np.random.default_rng(2)
    return rng.multivariate_normal([1.0, -1.0, 0.5], [[2.0, 0.8, 0.3], [0.8, 1.0, -0.2],
                                                      [0.3, -0.2, 0.5]], size=400)


def test_log_density_and_gradient_equal_the_rows_mvnormal(train):
    """At 5 random points of the unconstrained space: the log likelihood equals scipy's sum of
    the 400 rows' log densities, and the joint log density and its gradient equal those of the
    row-by-row model (to rounding)."""
    fast, slow = model(train, variant="a"), rows_model(train)
    z = (train - train.mean(0)) / train.std(0)
    like = fast.compile_logp(vars=[fast["x_train"]], mode=REWRITTEN)
    chol = fast.compile_fn(fast.replace_rvs_by_values([fast["chol"]])[0], point_fn=True,
                           inputs=fast.value_vars, on_unused_input="ignore", mode=REWRITTEN)
    f_logp, s_logp = fast.compile_logp(mode=REWRITTEN), slow.compile_logp(mode=REWRITTEN)
    f_grad, s_grad = fast.compile_dlogp(mode=REWRITTEN), slow.compile_dlogp(mode=REWRITTEN)
    rng = np.random.default_rng(0)
    for _ in range(5):
        point = {k: v + rng.normal(0.0, 0.4, v.shape) for k, v in fast.initial_point().items()}
        lower = np.zeros((3, 3))
        lower[np.tril_indices(3)] = chol(point)
        want = stats.multivariate_normal(point["mu"], lower @ lower.T).logpdf(z).sum()
        assert like(point) == pytest.approx(want, rel=1e-10)
        assert f_logp(point) == pytest.approx(s_logp(point), rel=1e-10)
        np.testing.assert_allclose(f_grad(point), s_grad(point), rtol=1e-8, atol=1e-8)


def test_compiled_gradient_holds_no_training_rows(train):
    """The rows are folded into d x d statistics when the gradient is compiled: no constant of
    the compiled function has more than d^2 numbers (the row-by-row model keeps the N x d rows,
    and every gradient costs O(N d^2))."""
    def largest_constant(m):
        fn = m.logp_dlogp_function(ravel_inputs=True, mode=REWRITTEN)
        fgraph = fn._pytensor_function.maker.fgraph
        return max(c.data.size for c in fgraph.variables if isinstance(c, Constant))

    assert largest_constant(model(train, variant="a")) <= 9
    assert largest_constant(rows_model(train)) == train.size


def test_draws_are_mvnormal_rows(train):
    """Prior draws of x_train have the shape of the rows and, given mu and Sigma, their law: the
    mean of the 400 rows of each of 200 prior draws is within z standard errors of mu, z
    splitting a 4-sigma false alarm over the 600 comparisons (Bonferroni, z = 5.2)."""
    m = model(train, variant="a")
    with m:
        prior = pm.sample_prior_predictive(200, random_seed=1)
    x = prior.prior_predictive["x_train"].values[0]  # (200, 400, 3)
    mu, chol = prior.prior["mu"].values[0], prior.prior["chol"].values[0]
    lower = np.zeros((200, 3, 3))
    lower[:, *np.tril_indices(3)] = chol
    sd = np.sqrt(np.einsum("sij,sij->si", lower, lower))  # the rows' sds per draw
    assert x.shape == (200, 400, 3)
    z = stats.norm.isf(stats.norm.sf(4.0) / mu.size)
    assert np.all(np.abs(x.mean(1) - mu) <= z * sd / np.sqrt(400))


def test_log_likelihood_per_draw_feeds_sensitivity():
    """After method='pymc', the log likelihood of each posterior draw is the sum of the rows'
    MvNormal log densities (scipy), and sensitivity() reports every mean and Cholesky scalar."""
    rng = np.random.default_rng(5)
    train = rng.multivariate_normal([0.0, 0.0], [[0.3, 0.38], [0.38, 1.0]], size=200)
    ev = mvu(CLF, [[np.nan, 0.9], [0.4, np.nan]], train=train, method="pymc", random_seed=3,
             sample_kwargs={"draws": 200, "tune": 300})
    table = ev.sensitivity()
    assert len(table) == 2 + 3 and np.isfinite(table["likelihood"]).all()
    loglik = ev.tree["log_likelihood"]["x_train"].values  # (chain, draw): one number per draw
    post = ev.tree["posterior"]
    z = (train - train.mean(0)) / train.std(0)
    for c, s in [(0, 0), (1, 199), (0, 77)]:
        lower = np.zeros((2, 2))
        lower[np.tril_indices(2)] = post["chol"].values[c, s]
        want = stats.multivariate_normal(post["mu"].values[c, s], lower @ lower.T).logpdf(z)
        assert loglik[c, s] == pytest.approx(want.sum(), rel=1e-10)
