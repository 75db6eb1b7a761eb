"""Missing value uncertainty (MVU): would collecting the missing features change the prediction?

:func:`mvu` is the entry function, :func:`model` its PyMC models (``variant="a"``, ``"b"``,
``"c"``); the imputers, Dirichlet fits and DMV are in :mod:`bayeval.methods.mvu.estimators`, the
Gaussian copula imputer of mixed (continuous, integer and categorical) features in
:mod:`bayeval.methods.mvu.copula`, the exact hard confidence in :mod:`bayeval.methods.mvu.fast`,
MVCE and post-hoc scaling in :mod:`bayeval.methods.mvu.calibration`, missingness not at random
in :mod:`bayeval.methods.mvu.mnar` and decisions with a loss matrix in
:mod:`bayeval.methods.mvu.decisions`.
"""

from bayeval.deprecation import renamed_builders
from bayeval.methods.mvu import plots  # noqa: F401 (registers the MVU figure with the display)
from bayeval.methods.mvu.api import mvu
from bayeval.methods.mvu.calibration import consistency, ece, fit_scale, mvce, reliability
from bayeval.methods.mvu.copula import CopulaImputer, FeatureCodec
from bayeval.methods.mvu.estimators import (
    DMV,
    GaussianImputer,
    LinearClassifier,
    alpha_max_variance,
    alpha_scale_probability,
    dirichlet_mle,
    dirichlet_moments,
    mcar_mask,
    sensor_groups,
)
from bayeval.methods.mvu.fast import hard_confidence, soft_confidence, vote_probs
from bayeval.methods.mvu.mnar import MNARGaussianImputer, delta_sensitivity
from bayeval.methods.mvu.models import VARIANTS, dmv_design, model
from bayeval.methods.mvu.result import MVUEvaluation

__all__ = [
    "DMV",
    "CopulaImputer",
    "FeatureCodec",
    "GaussianImputer",
    "LinearClassifier",
    "MNARGaussianImputer",
    "MVUEvaluation",
    "alpha_max_variance",
    "alpha_scale_probability",
    "consistency",
    "delta_sensitivity",
    "dirichlet_mle",
    "dirichlet_moments",
    "dmv_design",
    "ece",
    "fit_scale",
    "hard_confidence",
    "mcar_mask",
    "model",
    "mvce",
    "mvu",
    "reliability",
    "sensor_groups",
    "soft_confidence",
    "vote_probs",
]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
