"""MVU's PyMC models: model(..., variant=...) builds A, B and C; the old builder names still work
with a warning; Model B's posterior is centred on the Dirichlet MLE; the independent posteriors
behind method='both''s check (importance sampling) equal NUTS's for A, B and C."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import bayeval.methods.mvu as mvu_package
from bayeval.methods.mvu import dmv_design, model
from bayeval.methods.mvu.estimators import dirichlet_mle
from bayeval.methods.mvu.fast import hard_confidence
from bayeval.methods.mvu.models import (
    independent_posterior_a,
    independent_posterior_b,
    independent_posterior_c,
)
from bayeval.sampling import sample

ROOT = Path(__file__).resolve().parents[3]


def test_variants_build_their_models():
    rng = np.random.default_rng(0)
    a = model(rng.normal(size=(30, 2)), variant="a")
    assert [v.name for v in a.free_RVs] == ["mu", "chol"]
    b = model(rng.dirichlet([1.0, 2.0], size=50), variant="b")
    assert [v.name for v in b.free_RVs] == ["mu", "kappa"]
    h = dmv_design([[1.0, np.nan], [np.nan, 2.0]], [[False, True], [True, False]])
    c = model(h, [[0.2, 0.8], [0.6, 0.4]], sigma_w=2.0, variant="c")
    assert [v.name for v in c.free_RVs] == ["w_eta", "w_kappa"]
    with pytest.raises(ValueError, match="variant must be one of"):
        model(h, variant="d")


@pytest.mark.parametrize("variant", ["a", "b", "c"])
def test_old_builder_names_warn_and_build_the_same_model(variant):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = getattr(mvu_package, f"model_{variant}")
    assert caught[0].category is FutureWarning
    assert f"model(..., variant='{variant}')" in str(caught[0].message)
    assert old.func is model and old.keywords == {"variant": variant}
    with pytest.raises(AttributeError):
        mvu_package.model_d  # noqa: B018


def test_model_b_posterior_is_centred_on_the_mle():
    rng = np.random.default_rng(5)
    z = 0.5 + 0.8 * rng.standard_normal(400)
    phi = np.stack([special.expit(-z), special.expit(z)], axis=1)
    post = sample(model(phi, variant="b"), 5, {"draws": 1000, "tune": 1000})["posterior"]["alpha"]
    mle = dirichlet_mle(phi[None])[0]
    mean, sd = post.mean(("chain", "draw")).values[0], post.std(("chain", "draw")).values[0]
    assert np.all(np.abs(mean - mle) <= 3 * sd)
    c_fit = hard_confidence(mean[None])[1][0]
    assert abs(c_fit - (phi[:, 1] > 0.5).mean()) <= 0.03


def test_model_b_reference_is_centred_on_the_mle():
    spec = json.loads((ROOT / "models" / "mvu_model_b" / "reference.json").read_text())
    assert spec["builder"] == "bayeval.methods.mvu.models:model"
    assert spec["kwargs"]["variant"] == "b"
    mle = dirichlet_mle(np.asarray(spec["kwargs"]["phi"])[None])[0]
    for j in range(2):
        ref = spec["reference"][f"alpha[0, {j}]"]
        assert abs(ref["mean"] - mle[j]) <= 3 * ref["sd"]


def test_model_a_independent_posterior_is_the_nuts_posterior():
    """The importance-resampled draws behind method='both''s check and NUTS on Model A agree on
    the means and covariances (with 60 training rows, where the prior still matters): each
    scalar within 4.5 combined Monte-Carlo SEs (Bonferroni over the 10 scalars)."""
    import arviz as az

    rng = np.random.default_rng(3)
    train = rng.multivariate_normal([1.0, -2.0], [[1.0, 0.6], [0.6, 2.0]], size=60)
    tree = sample(model(train, variant="a"), 4, {"draws": 1000, "tune": 1000})
    post = tree["posterior"].to_dataset()
    center, scale = train.mean(0), train.std(0)
    mu = center + scale * post["mu"].values.reshape(-1, 2)
    chol = np.zeros((len(mu), 2, 2))
    chol[:, *np.tril_indices(2)] = post["chol"].values.reshape(len(mu), -1)
    cov = scale[:, None] * (chol @ np.swapaxes(chol, 1, 2)) * scale[None, :]
    nuts = np.column_stack([mu, cov[:, 0, 0], cov[:, 0, 1], cov[:, 1, 1]])
    mean_i, prec_i, ess = independent_posterior_a(train, 4000, random_seed=5)
    cov_i = np.linalg.inv(prec_i)
    iid = np.column_stack([mean_i, cov_i[:, 0, 0], cov_i[:, 0, 1], cov_i[:, 1, 1]])
    assert ess > 8000  # of 16,000 proposals
    n_iid = 1 / (1 / 4000 + 1 / ess)  # resampling repeats proposals
    for j in range(nuts.shape[1]):
        x = nuts[:, j].reshape(2, 1000)
        se = np.hypot(float(az.mcse(x)), iid[:, j].std() / np.sqrt(n_iid))
        assert abs(x.mean() - iid[:, j].mean()) <= 4.5 * se, j
        se_sd = np.hypot(float(az.mcse(x, method="sd")), iid[:, j].std() / np.sqrt(2 * n_iid))
        assert abs(x.std() - iid[:, j].std()) <= 4.5 * se_sd, j


def test_model_b_independent_posterior_is_the_nuts_posterior():
    """The importance-sampled draws behind method='both''s check of Model B and NUTS agree on
    every alpha (two and three classes, 30 MVU draws each): means and sds within 4.5 combined
    Monte-Carlo SEs."""
    import arviz as az

    rng = np.random.default_rng(8)
    for a in ([1.5, 4.0], [3.0, 0.7, 2.0]):
        phi = rng.dirichlet(a, size=(1, 30))
        post = sample(model(phi, variant="b"), 2, {"draws": 1000, "tune": 1000})["posterior"]
        nuts = post["alpha"].values[:, :, 0]  # (chain, draw, K)
        iid, ess = independent_posterior_b(phi, 4000, random_seed=3)
        n_iid = 1 / (1 / 4000 + 1 / ess[0])
        for j in range(len(a)):
            x, y = nuts[..., j], iid[0, :, j]
            se = np.hypot(float(az.mcse(x)), y.std() / np.sqrt(n_iid))
            assert abs(x.mean() - y.mean()) <= 4.5 * se, (a, j)
            se_sd = np.hypot(float(az.mcse(x, method="sd")), y.std() / np.sqrt(2 * n_iid))
            assert abs(x.std() - y.std()) <= 4.5 * se_sd, (a, j)


def test_model_c_independent_posterior_is_the_nuts_posterior():
    """The importance-sampled weights behind method='both''s check of Model C and NUTS agree on
    every weight (one feature, two classes, 120 rows: 4 weights): means and sds within 4.5
    combined Monte-Carlo SEs (Bonferroni over the 8 comparisons)."""
    import arviz as az

    rng = np.random.default_rng(12)
    h = rng.normal(size=(120, 1))
    mu = special.expit(0.3 + 0.8 * h[:, 0])
    kappa = np.exp(2.0 - 0.5 * h[:, 0])
    p1 = rng.beta(kappa * mu, kappa * (1 - mu))  # Dir(kappa (1 - mu, mu)) of two classes
    targets = np.column_stack([1 - p1, p1])
    post = sample(model(h, targets, variant="c"), 6, {"draws": 1000, "tune": 1000})["posterior"]
    nuts = np.concatenate([post["w_eta"].values.reshape(2, 1000, -1),
                           post["w_kappa"].values.reshape(2, 1000, -1)], axis=-1)
    w, ess = independent_posterior_c(h, targets, 4000, random_seed=7)
    iid = np.column_stack([w["w_eta"].reshape(4000, -1), w["w_kappa"].reshape(4000, -1)])
    assert ess > 8000  # of 16,000 proposals
    n_iid = 1 / (1 / 4000 + 1 / ess)
    for j in range(iid.shape[1]):
        x, y = nuts[..., j], iid[:, j]
        se = np.hypot(float(az.mcse(x)), y.std() / np.sqrt(n_iid))
        assert abs(x.mean() - y.mean()) <= 4.5 * se, j
        se_sd = np.hypot(float(az.mcse(x, method="sd")), y.std() / np.sqrt(2 * n_iid))
        assert abs(x.std() - y.std()) <= 4.5 * se_sd, j



def _model_c_z_scores(rows: int, **prior) -> np.ndarray:
    """(mean, sd) z-scores of NUTS against Model C's independent posterior on ``rows`` rows of
    one feature and two classes, the independent draws under ``prior`` (default: the model's)."""
    import arviz as az

    rng = np.random.default_rng(12)
    h = rng.normal(size=(rows, 1))
    mu = special.expit(0.3 + 0.8 * h[:, 0])
    kappa = np.exp(2.0 - 0.5 * h[:, 0])
    p1 = rng.beta(kappa * mu, kappa * (1 - mu))
    targets = np.column_stack([1 - p1, p1])
    post = sample(model(h, targets, variant="c"), 6, {"draws": 1000, "tune": 1000})["posterior"]
    nuts = np.concatenate([post["w_eta"].values.reshape(2, 1000, -1),
                           post["w_kappa"].values.reshape(2, 1000, -1)], axis=-1)
    w, ess = independent_posterior_c(h, targets, 4000, random_seed=7, **prior)
    iid = np.column_stack([w["w_eta"].reshape(4000, -1), w["w_kappa"].reshape(4000, -1)])
    n_iid = 1 / (1 / 4000 + 1 / ess)
    z = []
    for j in range(iid.shape[1]):
        x, y = nuts[..., j], iid[:, j]
        se = np.hypot(float(az.mcse(x)), y.std() / np.sqrt(n_iid))
        se_sd = np.hypot(float(az.mcse(x, method="sd")), y.std() / np.sqrt(2 * n_iid))
        z += [(x.mean() - y.mean()) / se, (x.std() - y.std()) / se_sd]
    return np.abs(z)


def test_model_c_independent_posterior_has_the_models_prior():
    """On 10 rows the prior (N(log 10, 3^2) on the concentration's intercept, N(0, 1) on the
    other weights) shapes the posterior: NUTS and the independent draws agree within 4.5
    Monte-Carlo SEs on every weight, and independent draws under every weight N(0, 3^2)
    (a wider prior) do not."""
    assert _model_c_z_scores(10).max() <= 4.5
    assert _model_c_z_scores(10, sigma_w=3.0, kappa_prior=(0.0, 3.0)).max() > 4.5

def _logp_b(m, mu, kappa) -> float:
    """Model B's log-likelihood of its draws at (mu, kappa) (one instance)."""
    point = {"mu_simplex__": m.rvs_to_transforms[m["mu"]].forward(np.asarray(mu)[None]).eval(),
             "kappa_log__": np.log([kappa])}
    return float(m.compile_logp(vars=[m["phi"]])(point))


def test_model_b_scores_floored_draws_by_the_probability_of_their_censoring():
    """Three classes: draws with a component at 0 (or below 1e-6) score the Beta CDF masses of
    the Dirichlet's stick-breaking fractions (scipy, component by component); a draw away from
    the boundary scores the Dirichlet density."""
    from scipy import stats

    phi = np.array([[0.2, 0.3, 0.5],        # observed: the Dirichlet density
                    [0.0, 0.4, 0.6],        # V0 = 0: P(V0 <= c), then V1 = 0.4 observed
                    [3e-7, 0.5, 0.5 - 3e-7],  # the same with a component below the floor
                    [0.3, 0.7, 0.0],        # V1 = 1: P(V1 >= 1 - c), nothing after
                    [1.0, 0.0, 0.0]])       # V0 = 1: P(V0 >= 1 - c), V1 not observed
    mu, kappa = np.array([0.2, 0.3, 0.5]), 4.0
    a = kappa * mu
    c = 1e-6
    want = (stats.dirichlet(a).logpdf(phi[0])
            + stats.beta(a[0], a[1] + a[2]).logcdf(c) + stats.beta(a[1], a[2]).logpdf(0.4)
            + stats.beta(a[0], a[1] + a[2]).logcdf(c) + stats.beta(a[1], a[2]).logpdf(
                0.5 / (1 - 3e-7)) - np.log(1 - 3e-7)
            + stats.beta(a[0], a[1] + a[2]).logpdf(0.3) + stats.beta(a[1], a[2]).logsf(1 - c)
            + stats.beta(a[0], a[1] + a[2]).logsf(1 - c))
    got = _logp_b(model(phi, variant="b"), mu, kappa)
    assert got == pytest.approx(want, rel=1e-9)


def test_model_c_scores_floored_targets_by_the_beta_cdf_and_others_by_the_dirichlet():
    """Two classes: a target with a probability below 1e-6 (or exactly 0 or 1) contributes
    log P(T <= 1e-6) of its Beta law (scipy); with no target near the boundary the likelihood is
    the Dirichlet density (three classes), whatever the weights."""
    from scipy import stats

    rng = np.random.default_rng(21)
    h = rng.normal(size=(40, 2))
    p1 = np.concatenate([[0.0, 1.0, 4e-7, 1 - 4e-7], rng.uniform(0.01, 0.99, 36)])
    targets = np.column_stack([1 - p1, p1])
    for t, k in ((targets, 2), (rng.dirichlet([2.0, 3.0, 4.0], size=40), 3)):
        m = model(h, t, variant="c")
        point = {"w_eta": rng.normal(0, 0.5, (3, k - 1)), "w_kappa": rng.normal(0, 0.5, 3)}
        got = float(m.compile_logp(vars=[m["target"]])(point))
        design = np.column_stack([np.ones(40), h])
        eta = np.column_stack([np.zeros(40), design @ point["w_eta"]])
        alpha = np.exp(design @ point["w_kappa"])[:, None] * special.softmax(eta, axis=1)
        if k == 3:
            want = sum(stats.dirichlet(a).logpdf(x) for a, x in zip(alpha, t, strict=True))
        else:
            beta = stats.beta(alpha[:, 1], alpha[:, 0])  # law of p1
            want = np.where(p1 <= 1e-6, beta.logcdf(1e-6),
                            np.where(p1 >= 1 - 1e-6, beta.logsf(1 - 1e-6), beta.logpdf(p1)))
            want = want.sum()
        assert got == pytest.approx(want, rel=1e-9), k


@pytest.mark.parametrize(("a0", "a1"), [(400.0, 2.0), (3e-3, 2e7), (50.0, 4e7), (0.7, 3.0)])
def test_censored_mass_is_exact_where_betainc_underflows_and_for_huge_concentrations(a0, a1):
    """log P(T0 <= 1e-6) under Beta(a0, a1) against mpmath (50 digits), where scipy's betainc
    underflows (a0 = 400: about 1e-2400) and where the other class's strength exceeds
    1 / (2 * 1e-6); its gradient in the unconstrained (mu, kappa) equals central differences."""
    import mpmath

    mpmath.mp.dps = 50
    want = float(mpmath.log(mpmath.betainc(a0, a1, 0, mpmath.mpf("1e-6"), regularized=True)))
    m = model(np.array([[0.0, 1.0]]), variant="b")  # one draw, t0 = 0: censored
    got = _logp_b(m, np.array([a0, a1]) / (a0 + a1), a0 + a1)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    point = {"mu_simplex__": m.rvs_to_transforms[m["mu"]].forward(
        np.array([[a0, a1]]) / (a0 + a1)).eval(), "kappa_log__": np.log([a0 + a1])}
    logp, grad = m.compile_logp(), m.compile_dlogp()(point)  # prior and likelihood
    for i, name in enumerate(["mu_simplex__", "kappa_log__"]):
        step = {**point, name: point[name] + 1e-5}
        back = {**point, name: point[name] - 1e-5}
        assert grad[i] == pytest.approx((logp(step) - logp(back)) / 2e-5, rel=1e-5, abs=1e-5)
