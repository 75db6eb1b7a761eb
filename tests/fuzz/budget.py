"""The fuzz suite's budget: a few examples per test in the test suite, many under ``make fuzz``.

``BAYEVAL_FUZZ=long`` (set by ``make fuzz``) selects the long budget with a fresh random seed
per run; otherwise every test runs a fixed, derandomized handful of examples, so that the
suite's time and outcome are the same on every run.
"""

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("BAYEVAL_FUZZ") == "long"


def budget(examples: int, long: int = 150) -> settings:
    """Settings of a fuzz test: ``examples`` in the test suite, ``long`` under ``make fuzz``."""
    return settings(max_examples=long if LONG else examples, deadline=None,
                    derandomize=not LONG, database=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))
