"""``python -m benchmarks.sbc``: the full SBC run (see the package's docstring)."""

from benchmarks.sbc import main

main()
