"""Missing value uncertainty (MVU): would collecting the missing features change the prediction?"""

from bayeval.methods.mvu.api import mvu

__all__ = ["mvu"]
