"""Test configuration: the repository root on sys.path (for models/), a headless backend."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: no oversubscription

import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTENSOR_FLAGS", f"compiledir={ROOT / '.cache' / 'pytensor'}")


# shared by the plot and report tests: the breast-cancer classifier evaluated with all labels
@pytest.fixture(scope="module")
def data():
    from bayeval import datasets

    return datasets.breast_cancer()


@pytest.fixture(scope="module")
def exact(data):
    import bayeval as be

    return be.labelled(data.scores, data.labels)


@pytest.fixture(scope="module")
def both(data):
    import bayeval as be

    return be.labelled(data.scores, data.labels, method="both", random_seed=5,
                       sample_kwargs={"draws": 300, "tune": 300})
