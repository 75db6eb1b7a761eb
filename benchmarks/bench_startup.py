"""Start-up: ``import bayeval`` and the first call of each fast path in a fresh interpreter.

Each measurement runs in its own ``python`` process (nothing imported or compiled before), best
of three: the import alone (targets: at most 1.5 s), and for every method the wall time of its
first call on 100,000 rows after ``import bayeval`` (target: at most 2 s), each beside the
interpreter's own start (``python -c pass``). The calls:

* ``labelled``: labels and predictions of 100,000 rows, the default metrics;
* ``cbpe``: 100,000 analysis scores and a 10,000-row labelled reference, the default
  calibration (chosen on held-out folds) and its posterior;
* ``pemi``: 100,000 scores with 30 % of the labels missing, the default Platt map and its
  posterior;
* ``judge``: 2,000 human labels and 100,000 judge verdicts, the default (EIF) estimator;
* ``bounds``: 100,000 items, four labelling functions, the default Dawid-Skene label model;
* ``mvu``: 100,000 rows of four Gaussian features with 30 % missing, a fitted logistic model
  (its coefficients as scikit-learn's attributes), Gaussian imputation fitted on 2,000 complete
  rows, exact hard confidence.
"""

from __future__ import annotations

import subprocess
import sys

from benchmarks.timing import best_time

REPEATS = 3
N = 100_000
IMPORT_TARGET, CALL_TARGET = 1.5, 2.0

DATA = f"""
import numpy as np
rng = np.random.default_rng(0)
n = {N}
s = rng.beta(2, 2, n)
y = (rng.random(n) < s).astype(float)
"""

CALLS = {
    "labelled": "be.labelled(labels=y, y_pred=(s >= 0.5).astype(int))",
    "cbpe": "be.cbpe(s, reference=(s[:10_000], y[:10_000]))",
    "pemi": "y[rng.random(n) < 0.3] = np.nan\nbe.pemi(s, y)",
    "judge": ("v = np.where(rng.random(n) < 0.8, y, 1 - y)\n"
              "be.judge(y[:2000], v[:2000], v[2000:])"),
    "bounds": ("votes = np.where(rng.random((n, 4)) < 0.75, y[:, None], 1 - y[:, None])\n"
               "votes[rng.random((n, 4)) < 0.2] = -1\n"
               "be.bounds((s >= 0.5).astype(int), votes.astype(int))"),
    "mvu": ("x = rng.standard_normal((n, 4))\n"
            "train = rng.standard_normal((2000, 4))\n"
            "x[rng.random((n, 4)) < 0.3] = np.nan\n"
            "class Linear:  # a fitted logistic model, scikit-learn's attributes\n"
            "    coef_, intercept_ = np.array([[1.0, -0.5, 0.8, 0.3]]), np.zeros(1)\n"
            "    classes_ = np.array([0, 1])\n"
            "    def predict_proba(self, z):\n"
            "        p = 1 / (1 + np.exp(-(z @ self.coef_[0] + self.intercept_[0])))\n"
            "        return np.column_stack([1 - p, p])\n"
            "be.mvu(Linear(), x, train=train)"),
}


def _fresh(code: str) -> float:
    """Seconds printed by ``code`` in a fresh interpreter (best of :data:`REPEATS`)."""
    out = []
    for _ in range(REPEATS):
        done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True)
        out.append(float(done.stdout.strip().splitlines()[-1]))
    return min(out)


def _interpreter() -> float:
    return best_time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True),
                     REPEATS)[0]


def row(case: str, ours_s: float, peer_s: float, target: str, ok: bool, note: str) -> dict:
    return {"benchmark": "startup", "case": case, "ours_s": ours_s,
            "peer": "python -c pass", "peer_s": peer_s, "target": target, "ok": ok,
            "note": note}


def run() -> list[dict]:
    bare = _interpreter()
    timed_import = ("import time\nstart = time.perf_counter()\nimport bayeval\n"
                    "print(time.perf_counter() - start)")
    imported = _fresh(timed_import)
    heavy = subprocess.run(
        [sys.executable, "-c", "import sys, bayeval; print(sorted(m for m in ('arviz', "
         "'matplotlib', 'pymc', 'pytensor', 'sklearn', 'scipy.stats') if m in sys.modules))"],
        check=True, capture_output=True, text=True).stdout.strip()
    rows = [row("import bayeval", imported, bare, f"<= {IMPORT_TARGET} s",
                imported <= IMPORT_TARGET, f"heavy modules loaded by the import: {heavy}")]
    for name, call in CALLS.items():
        code = (f"{DATA}\nimport bayeval as be\nimport time\nstart = time.perf_counter()\n"
                f"{call}\nprint(time.perf_counter() - start)")
        first = _fresh(code)
        rows.append(row(f"first {name} call, {N:,} rows, fresh process", first, bare,
                        f"<= {CALL_TARGET} s", first <= CALL_TARGET,
                        "after import bayeval; imports on first use and any compilation "
                        "included"))
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
