"""Writes ppi_py_mean.json: ppi_py 0.2.3's numbers for the mean (point estimate, intervals,
p-values, power) on fixed random inputs, with and without sampling weights.

Run where ppi_py is installed (``pip install ppi-python==0.2.3``):
``python tests/methods/judge/data/make_ppi_py_fixture.py``. The inputs are stored beside the
numbers, so the test does not depend on how the random numbers were drawn.
"""

import json
import pathlib
import warnings

import numpy as np


def case(rng, n, big_n, binary):
    y = rng.normal(size=n)
    yhat = rng.uniform(0.2, 1.0) * y + rng.normal(size=n)
    yhat_u = 1.2 * rng.normal(size=big_n) + 0.1
    if binary:
        y, yhat, yhat_u = ((a > 0).astype(float) for a in (y, yhat, yhat_u))
    return y, yhat, yhat_u, rng.uniform(0.2, 3.0, n), rng.uniform(0.5, 2.0, big_n)


def main():
    import ppi_py  # only here: the test suite imports this module without ppi_py
    from ppi_py.ppi_power_analysis import ppi_mean_power

    rng = np.random.default_rng(20261220)
    cases = []
    for k in range(6):
        y, yhat, yhat_u, w, w_u = case(rng, int(rng.integers(30, 80)), 200, k % 2 == 1)
        out = {"Y": y.tolist(), "Yhat": yhat.tolist(), "Yhat_unlabeled": yhat_u.tolist(),
               "w": w.tolist(), "w_unlabeled": w_u.tolist(), "results": []}
        for lam in (None, 1.0, 0.3):
            for weighted in (False, True):
                kw = {"lam": lam, "w": w if weighted else None,
                      "w_unlabeled": w_u if weighted else None}
                row = {"lam": lam, "weighted": weighted,
                       "point": float(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, **kw)[0])}
                for alt in ("two-sided", "larger", "smaller"):
                    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, alternative=alt,
                                                **kw)
                    row[f"ci_{alt}"] = [float(np.ravel(lo)[0]), float(np.ravel(hi)[0])]
                    row[f"pval_{alt}"] = float(np.ravel(ppi_py.ppi_mean_pval(
                        y, yhat, yhat_u, null=0.1, alternative=alt, **kw))[0])
                out["results"].append(row)
        out["power"] = []
        for kw in ({"budget": 500}, {"effective_n": 300}, {"budget": 500, "n_max": 1000},
                   {"effective_n": 300, "n_max": 700}, {"budget": 2000, "n_max": 1000}):
            for weighted in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = ppi_mean_power(y, yhat, 1.0, 0.02, w=w if weighted else None, **kw)
                out["power"].append({"kwargs": kw, "weighted": weighted,
                                     **{k: float(v) for k, v in res.items()}})
        cases.append(out)
    path = pathlib.Path(__file__).with_name("ppi_py_mean.json")
    path.write_text(json.dumps({"ppi_py": ppi_py.__version__ if hasattr(ppi_py, "__version__")
                                else "0.2.3", "cases": cases}))


if __name__ == "__main__":
    main()
