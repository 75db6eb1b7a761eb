"""One module per method: its fast path, its PyMC model builder(s) and its entry function."""

from bayeval.methods import bounds, cbpe, judge, label_models, labelled, mvu, pemi

__all__ = ["bounds", "cbpe", "judge", "label_models", "labelled", "mvu", "pemi"]
