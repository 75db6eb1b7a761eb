"""The ``bayeval`` command."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

import bayeval as be
from bayeval import datasets


def demo(args: argparse.Namespace) -> int:
    """Evaluate a classifier trained on scikit-learn's breast-cancer data, fast path and model."""
    data = datasets.breast_cancer(random_seed=args.seed)
    print(f"bayeval {be.__version__} demo: logistic regression on the breast-cancer data, "
          f"{data.labels.size} held-out rows, {int(data.labels.sum())} malignant.\n")
    ev = be.labelled(data.scores, data.labels, method="both", random_seed=args.seed)
    with pd.option_context("display.width", 120, "display.max_columns", 20,
                           "display.precision", 4):
        print(ev.summary("closed_form")[["mean", "sd", "lower", "upper", "successes", "trials"]])
        print()
        print(ev.summary()[["mean", "sd", "lower", "upper", "ess_bulk", "r_hat"]])
        print()
        check, diag = ev.check(), ev.diagnostics()
        print(check.caption)
        print(diag.caption)
    return 0 if check.attrs["passed"] and diag.attrs["ok"] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bayeval", description=be.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"bayeval {be.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="run an evaluation on embedded data and print it")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
