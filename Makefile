# `make test` and `make train` set everything up themselves (a virtual environment in
# .venv, then the project and its dependencies) on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch is pinned first: a bare `torch` requirement pulls a CUDA build of several GB,
# while torch==2.13.0 is the CPU build (override TORCH for another platform).
TORCH ?= torch==2.13.0

.PHONY: test lint bench train clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[dev,train,bench]"
	touch $@

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# Random-play steps/s at 3-6 players beside PettingZoo's connect_four_v3, in one run;
# the last line is the 4-player ratio.
bench: $(STAMP)
	$(PY) tools/aec_throughput.py dragonstones_env:env:num_players=3 dragonstones_env:env:num_players=5 \
		dragonstones_env:env:num_players=6 dragonstones_env:env:num_players=4

train:
	@echo "make train arrives with the training issue (#5); nothing to train yet." >&2
	@exit 1

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
