"""Judge: a rate from a noisy judge that labels everything plus human labels on a few items."""

from bayeval.deprecation import renamed_builders
from bayeval.methods.judge.api import eif_agreement, judge
from bayeval.methods.judge.bradley_terry import bradley_terry
from bayeval.methods.judge.compare import compare_systems
from bayeval.methods.judge.models import VARIANTS, model
from bayeval.methods.judge.planning import labels_needed, plan_budget
from bayeval.methods.judge.pooled import JudgePooled, pool_judges
from bayeval.methods.judge.ppi_py_api import (
    ppi_mean_ci,
    ppi_mean_pointestimate,
    ppi_mean_power,
    ppi_mean_pval,
)
from bayeval.methods.judge.ranking import rank_systems
from bayeval.methods.judge.result import JudgeEvaluation

__all__ = ["JudgeEvaluation", "JudgePooled", "bradley_terry", "compare_systems", "eif_agreement",
           "judge", "labels_needed", "model", "plan_budget", "pool_judges", "ppi_mean_ci",
           "ppi_mean_pointestimate", "ppi_mean_power", "ppi_mean_pval", "rank_systems"]

__getattr__ = renamed_builders(__name__, model, VARIANTS)
