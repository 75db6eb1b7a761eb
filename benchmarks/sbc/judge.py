"""SBC simulators of the judge's Models A and B (one ``group`` per simulation)."""

from __future__ import annotations

import numpy as np

from bayeval.methods.judge.models import DEFAULT_PRIOR, model


def _judge(variant: str, n_sims: int, rng, m: int = 30, n: int = 300):
    """Prior draws (default priors) and the grouped model of their simulated counts: ``m``
    labelled and ``n`` judge-only items per simulation."""
    truth = {k: rng.beta(*ab, size=n_sims) for k, ab in DEFAULT_PRIOR[variant].items()}
    if variant == "a":
        theta, q1, q0 = truth["theta"], truth["q1"], truth["q0"]
        p = theta * q1 + (1 - theta) * (1 - q0)
        m1 = rng.binomial(m, theta)
        n11, n00 = rng.binomial(m1, q1), rng.binomial(m - m1, q0)
        n10, n01 = m1 - n11, m - m1 - n00
    else:
        p, mu1, mu0 = truth["p"], truth["mu1"], truth["mu0"]
        c1 = rng.binomial(m, p)
        n11, n10 = rng.binomial(c1, mu1), rng.binomial(m - c1, mu0)
        n01, n00 = c1 - n11, m - c1 - n10
    t1 = rng.binomial(n, p)
    return truth, model(n11, n10, n01, n00, t1, n - t1, variant=variant,
                        groups=np.arange(n_sims))


def judge_model_a(n_sims: int, rng):
    r"""Model A: :math:`\theta, q_1, q_0`."""
    return _judge("a", n_sims, rng)


def judge_model_b(n_sims: int, rng):
    r"""Model B: :math:`p, \mu_1, \mu_0`."""
    return _judge("b", n_sims, rng)
