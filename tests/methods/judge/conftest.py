"""Simulated judge data shared by the judge tests, through the ``sim`` fixture.

Simulated replicates draw the sufficient statistics directly: a random split of N i.i.d. items
into m labelled and n unlabelled ones gives a multinomial 2x2 table and an independent binomial
count of judge positives, so thousands of replicates cost one vectorised call.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from bayeval.methods.judge.fast import Counts

# m = 200, theta = .3, q0 = .8, q1 = .7; 627 of 1800 unlabelled judged 1
RUNNING_EXAMPLE = Counts(36, 14, 29, 121, t1=627, t0=1173)


def simulate(theta, q0, q1, m, n, size, rng) -> Counts:
    """``size`` replicates of the counts of m labelled and n unlabelled items."""
    cells = [theta * q1, theta * (1 - q1), (1 - theta) * (1 - q0), (1 - theta) * q0]
    table = rng.multinomial(m, cells, size=size)
    t1 = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0), size=size)
    return Counts(*table.T, t1=t1, t0=n - t1)


def usable(c: Counts) -> np.ndarray:
    """The paper's code keeps replicates with >= 2 labelled items of each class; the EIF and the
    MLE also need both judge labels among them, Rogan–Gladen a nonzero kappa."""
    m1, m0 = c.n11 + c.n10, c.n01 + c.n00
    c1, c0 = c.n11 + c.n01, c.n10 + c.n00
    keep = (np.minimum(m1, m0) >= 2) & (np.minimum(c1, c0) >= 1)
    return keep & (c.n11 * c.n00 != c.n10 * c.n01)


def subset(c: Counts, keep) -> Counts:
    return Counts(*(np.asarray(a)[keep] for a in c))


def items(c: Counts):
    """Item-level arrays (y, yhat, yhat_unlabeled) with the given counts."""
    y = np.repeat([1, 1, 0, 0], [c.n11, c.n10, c.n01, c.n00])
    yhat = np.repeat([1, 0, 1, 0], [c.n11, c.n10, c.n01, c.n00])
    return y, yhat, np.repeat([1, 0], [c.t1, c.t0])


def expected_counts(theta, q0, q1, m, n) -> Counts:
    """Counts equal to their expectations: estimators then return population values."""
    p = theta * q1 + (1 - theta) * (1 - q0)
    return Counts(m * theta * q1, m * theta * (1 - q1), m * (1 - theta) * (1 - q0),
                  m * (1 - theta) * q0, n * p, n * (1 - p))


def random_parameters(size, rng, kappa_positive=True):
    theta, q0, q1 = rng.uniform(0.05, 0.95, (3, size))
    if kappa_positive:
        keep = q0 + q1 > 1.02
        theta, q0, q1 = theta[keep], q0[keep], q1[keep]
    return theta, q0, q1


@pytest.fixture(scope="session")
def sim():
    """The simulators above and the running example ``RUNNING_EXAMPLE``."""
    return SimpleNamespace(RUNNING_EXAMPLE=RUNNING_EXAMPLE, simulate=simulate, usable=usable,
                           subset=subset, items=items, expected_counts=expected_counts,
                           random_parameters=random_parameters)
