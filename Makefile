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

# The main job on the bundled catalog: validate it, check catalog/ is current, build the
# search index, rank the catalog against a bundled profile, and measure strategy
# selection's hit rate on the labelled profiles (printed; committed results untouched).
run: setup
	$(BIN)/kbopt lint
	$(BIN)/kbopt catalog --check
	$(BIN)/kbopt index rebuild
	$(BIN)/kbopt recommend benchmarks/profiles/mla-decode-triton-16-heads.md --language triton
	$(BIN)/python scripts/hit_rate.py --no-write --min-top3 0.9

lint: setup
	$(BIN)/ruff check kbopt tests kernels
	$(BIN)/ruff format --check kbopt tests
	$(BIN)/mypy
	$(BIN)/kbopt lint
	$(BIN)/kbopt catalog --check
	$(BIN)/kbopt devlog --check --all

format: setup
	$(BIN)/ruff format kbopt tests
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

# Speed of search/recommend on 10,000 synthetic entries, and site build times: these write
# results/ files (with machine, versions, date and command). The GPU benchmark of the
# kernels runs on a CUDA machine: python -m kernels.mla_decode.bench
bench: setup
	$(BIN)/python scripts/bench_search.py
	$(BIN)/python scripts/bench_site.py

clean:
	rm -rf $(VENV) .kbopt-cache _build docs/generated .pytest_cache .mypy_cache .ruff_cache
