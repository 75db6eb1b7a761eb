# bayeval: the two commands of the README (make demo, make test) and the maintainers' ones.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
comma := ,
export PYTENSOR_FLAGS ?= compiledir=$(CURDIR)/.cache/pytensor
export MPLBACKEND ?= Agg
export OPENBLAS_NUM_THREADS ?= 1
export NO_MKDOCS_2_WARNING ?= 1

.PHONY: demo test bench docs notebooks lint clean venv

# Find a Python >= 3.12: $(PYTHON) if given, pyenv's, then python3.13/3.12/python3 on PATH.
$(PY):
	@set -e; \
	cands="$(PYTHON) $$(command -v pyenv >/dev/null && ls -d $$(pyenv root)/versions/3.1[2-9]*/bin/python 2>/dev/null) python3.13 python3.12 python3"; \
	for c in $$cands; do \
	  if command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    echo "creating $(VENV) with $$($$c --version)"; $$c -m venv $(VENV); exit 0; fi; \
	done; \
	echo "error: bayeval needs Python >= 3.12 and none was found." >&2; \
	echo "Install one (e.g. 'pyenv install 3.12' or your system's python3.12 package)," >&2; \
	echo "or point to it with 'make PYTHON=/path/to/python3.12 demo'." >&2; \
	exit 1

# $(call install,extras): the package in editable mode with those extras, by uv when it can be
# had (the venv's, on PATH, or pip-installed into the venv): it resolves the same versions as pip
# and installs them in seconds, compiled to bytecode as pip does. uv reads its own settings
# (UV_INDEX_URL, uv.toml), not pip's: where it cannot install them (e.g. an index that only
# pip.conf names), pip does.
define install
	@set -e; uv=$(VENV)/bin/uv; \
	if [ ! -x "$$uv" ]; then uv=$$(command -v uv || true); fi; \
	if [ -z "$$uv" ] && $(PY) -m pip install --quiet uv >/dev/null 2>&1; then uv=$(VENV)/bin/uv; fi; \
	if [ -n "$$uv" ]; then \
	  echo "$$uv pip install --compile-bytecode --python $(PY) -e '.[$(1)]'"; \
	  "$$uv" pip install --quiet --compile-bytecode --python $(PY) -e '.[$(1)]' && exit 0; \
	  echo "uv could not install the package; installing it with pip"; \
	fi; \
	echo "$(PY) -m pip install -e '.[$(1)]'"; \
	$(PY) -m pip install --quiet --upgrade pip; \
	$(PY) -m pip install --quiet -e '.[$(1)]'
endef

$(STAMP): $(PY) pyproject.toml
	$(call install,dev$(comma)scale)
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bayeval demo

# the docs extra too: tests/test_docs.py builds pages of the site and looks at them; nutpie's
# for the tests of sample_kwargs={"nuts_sampler": "nutpie"}
test: $(STAMP)
	$(call install,dev$(comma)scale$(comma)docs$(comma)nutpie)
	$(PY) -m pytest -n 2 --dist loadgroup --durations=20

# The fuzz suite (tests/fuzz) with the long budget and a new seed per round, for FUZZ_SECONDS
# (default 10 minutes); it stops at the first failure and says how many examples ran.
FUZZ_SECONDS ?= 600
fuzz: $(STAMP)
	@set -o pipefail; end=$$(( $$(date +%s) + $(FUZZ_SECONDS) )); rounds=0; examples=0; \
	while [ $$(date +%s) -lt $$end ]; do \
	  out=$$(BAYEVAL_FUZZ=long $(PY) -m pytest -q -p no:cacheprovider tests/fuzz \
	         --hypothesis-show-statistics 2>&1) || { echo "$$out"; exit 1; }; \
	  rounds=$$((rounds + 1)); \
	  n=$$(echo "$$out" | grep -o '[0-9]* passing,' | awk '{s += $$1} END {print s + 0}'); \
	  examples=$$((examples + n)); echo "fuzz round $$rounds: $$n examples passed"; \
	done; \
	echo "fuzz: $$examples examples in $$rounds rounds, no failure"

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The timed benchmarks (docs/benchmarks.md), then the simulation-based calibration of the
# catalogued models (docs/models.md's table and its rank histograms).
bench: $(STAMP)
	$(call install,dev$(comma)bench$(comma)nutpie)
	$(PY) -m benchmarks
	$(PY) -m benchmarks.sbc

clean:
	rm -rf $(VENV) .cache .pytest_cache build dist *.egg-info

docs: $(STAMP)
	$(call install,dev$(comma)docs)
	$(VENV)/bin/mkdocs build --strict

# The notebooks run top to bottom and are stored with their outputs, which the docs show (the
# docs build does not run them; tests/test_notebooks.py checks that they still run).
notebooks: $(STAMP)
	$(call install,dev$(comma)docs)
	MPLBACKEND=module://matplotlib_inline.backend_inline \
	  $(VENV)/bin/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.timeout=600 notebooks/*.ipynb
