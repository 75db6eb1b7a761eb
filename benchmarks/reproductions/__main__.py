"""``python -m benchmarks.reproductions [NAME ...]``: run the experiments and write the page."""

import sys

from .page import main

sys.exit(main(sys.argv[1:]))
