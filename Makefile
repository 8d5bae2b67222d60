# kbopt: every task a developer or CI runs.  `make run` and `make test` set up
# everything they need on a fresh machine (Python 3.11+, no GPU required).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup run test test-fast lint format docs bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first and pinned: an unpinned resolve would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[gpu,agents,docs,dev]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on the bundled catalog: validate it, regenerate and check catalog/.
run: setup
	$(BIN)/kbopt lint
	$(BIN)/kbopt catalog --check
	$(BIN)/kbopt list

lint: setup
	$(BIN)/ruff check kbopt tests kernels
	$(BIN)/ruff format --check kbopt
	$(BIN)/mypy
	$(BIN)/kbopt lint
	$(BIN)/kbopt catalog --check

format: setup
	$(BIN)/ruff format kbopt
	$(BIN)/ruff check --fix kbopt tests kernels

test: setup lint
	$(BIN)/python -m pytest -n 2 -q

test-fast: setup
	$(BIN)/python -m pytest -q -x

# The Sphinx site (SPEC D1): a full build into _build/html; warnings are errors.
# `kbopt site build --incremental` rebuilds only what changed; `kbopt site serve` serves it.
docs: setup
	$(BIN)/kbopt site build -W

.PHONY: site
site: docs

clean:
	rm -rf $(VENV) .kbopt-cache _build .pytest_cache .mypy_cache .ruff_cache
