"""Test configuration: the repository root on sys.path (for models/), a headless backend."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: no oversubscription

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTENSOR_FLAGS", f"compiledir={ROOT / '.cache' / 'pytensor'}")
