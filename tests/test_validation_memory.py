"""Memory bounds: work that would need more than the limit is refused before it starts, with
the amount needed and the argument named; work within it runs."""

import time

import numpy as np
import pytest

import bayeval as be
from bayeval.validation import check_classes, check_label_draws, memory


def test_the_message_names_the_argument_the_need_and_the_limit():
    with pytest.raises(ValueError, match=r"^draws: 4,000 draws of the labels of 300,000 rows "
                       r"would need 58\.1 GiB of memory, more than the limit of 4\.0 GiB"):
        check_label_draws(4000, 300_000)
    with pytest.raises(ValueError, match=r"^labels: 1,000 x 1,000 arrays .* 7\.5 GiB"):
        check_classes(1000, 1000, "labels", "use fewer classes")


def test_the_limit_is_the_boundary(monkeypatch):
    monkeypatch.setattr(memory, "MEMORY_LIMIT", 52 * 1000)
    check_label_draws(10, 100)  # exactly the limit: accepted
    with pytest.raises(ValueError, match="draws"):
        check_label_draws(10, 101)


def test_cbpe_pymc_refuses_label_draws_beyond_the_limit_at_once():
    """V0's forward draws of every label for ROC-AUC: 4,000 draws x 300,000 rows would need
    58 GiB (measured 52 bytes a cell); refused before the model is built."""
    scores = np.random.default_rng(0).random(300_000)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^draws: .* 58\.1 GiB .* leave roc_auc out"):
        be.cbpe(scores, method="both")
    assert time.perf_counter() - start < 5


def test_cbpe_exact_draws_no_label(monkeypatch):
    monkeypatch.setattr(memory, "MEMORY_LIMIT", 1)  # nothing is checked on this path
    be.cbpe(np.random.default_rng(0).random(50))


def test_labelled_classes_refused_beyond_the_limit():
    """K classes: K x K cells per draw of the exact posterior, twice (cells and metrics); 200
    classes and 20,000 draws need 11.9 GiB."""
    labels = np.arange(200)
    with pytest.raises(ValueError, match=r"^labels: 200 x 200 arrays .* 11\.9 GiB .* fewer draws"):
        be.labelled(labels=labels, y_pred=labels)


def test_mvu_refuses_imputations_beyond_the_limit_and_the_exact_path_needs_none(monkeypatch):
    """A non-linear classifier's MVU pushes (rows x draws) imputations through it: 5,000 draws
    of 200,000 rows of 3 features need 59.6 GiB; a linear classifier's exact path imputes
    nothing and runs under any limit."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    train = rng.normal(size=(200, 3))
    y = (train[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(train, y)
    x = np.tile(train[:1], (200_000, 1))
    x[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"^draws: 5,000 imputations of 200,000 rows of 3 "
                                         r"features would need 59\.6 GiB"):
        be.mvu(forest, x, train=train, draws=5000)
    monkeypatch.setattr(memory, "MEMORY_LIMIT", 1)
    be.mvu(LogisticRegression().fit(train, y), x[:50], train=train)


def test_judge_categories_posterior_refused_beyond_the_limit():
    many = np.arange(300).astype(str)
    with pytest.raises(ValueError, match=r"^y: 300 x 300 arrays .* 13\.4 GiB"):
        be.judge(many[:40], many[:40], many, method="bayes")
