# `make test` and `make train` set everything up themselves (a virtual environment in
# .venv, then the project and its dependencies) on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch is pinned first: a bare `torch` requirement pulls a CUDA build of several GB,
# while torch==2.13.0 is the CPU build (override TORCH for another platform).
TORCH ?= torch==2.13.0

.PHONY: test test-rllib cluster-up cluster-down test-libraries test-browser lint bench bench-vector bench-train train panel serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[dev,train,app,openspiel]"
	touch $@

# OPENSPIEL_REQUIRED=1: a missing pyspiel fails tests/test_openspiel.py instead of skipping it
test: $(STAMP)
	OPENSPIEL_REQUIRED=1 $(PY) -m pytest

# Ray RLlib is an optional extra (it pins gymnasium 1.2.x): its own virtual environment,
# and the tests the main run leaves out (tests/rllib: a tiny training run on local Ray).
RLLIB_VENV ?= .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_STAMP := $(RLLIB_VENV)/.installed

$(RLLIB_STAMP): pyproject.toml
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) -m pip install --quiet --upgrade pip
	$(RLLIB_PY) -m pip install --quiet "$(TORCH)"
	# the cluster extra (ray[default]): tests/rllib/test_cluster.py starts nodes as a cluster user does
	$(RLLIB_PY) -m pip install --quiet -e ".[dev,rllib,cluster]"
	touch $@

# (tests/rllib/test_cluster.py: a two-node cluster of tools/ray_cluster.sh, one node killed mid-run)
test-rllib: $(RLLIB_STAMP)
	RLLIB_REQUIRED=1 $(RLLIB_PY) -m pytest -o addopts=-q tests/rllib

# A two-node Ray cluster on this machine's loopback (token auth on; `source` the env file it names
# to reach it); cluster-down stops it. docs/rllib.md, "Running on a cluster".
cluster-up: $(RLLIB_STAMP)
	PYTHON=$(RLLIB_PY) tools/ray_cluster.sh up

cluster-down:
	PYTHON=$(RLLIB_PY) tools/ray_cluster.sh down

# Third-party learners through their own PettingZoo adapters (tests/libraries: Tianshou's PettingZooEnv
# and multi-agent DQN, TorchRL's PettingZooWrapper, examples/tianshou_selfplay.py and
# examples/torchrl_rollout.py at a tiny budget), in their own virtual environment: neither library is a
# dependency. LIBRARIES_REQUIRED=1: a missing library fails instead of leaving its tests out.
LIBRARIES_VENV ?= .venv-libraries
LIBRARIES_PY := $(LIBRARIES_VENV)/bin/python
LIBRARIES_STAMP := $(LIBRARIES_VENV)/.installed
LIBRARIES ?= tianshou==2.0.1 torchrl==0.14.1 tensordict==0.14.3

$(LIBRARIES_STAMP): pyproject.toml
	$(PYTHON) -m venv $(LIBRARIES_VENV)
	$(LIBRARIES_PY) -m pip install --quiet --upgrade pip
	$(LIBRARIES_PY) -m pip install --quiet "$(TORCH)"
	$(LIBRARIES_PY) -m pip install --quiet -e ".[dev]" $(LIBRARIES)
	touch $@

test-libraries: $(LIBRARIES_STAMP)
	LIBRARIES_REQUIRED=1 $(LIBRARIES_PY) -m pytest -o addopts=-q tests/libraries

# The browser test (tests/browser): the web app driven by Playwright in Debian's chromium
# (Playwright's own browser download is not reachable here). chromium is installed with apt
# when missing; BROWSER_REQUIRED=1 turns "no chromium" into a failure instead of a skip.
test-browser: $(STAMP)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed with apt"
	BROWSER_REQUIRED=1 $(PY) -m pytest -o addopts=-q tests/browser

# The browser table on http://127.0.0.1:8000/ (HOST=0.0.0.0 to share it on a network)
HOST ?= 127.0.0.1
PORT ?= 8000
serve: $(STAMP)
	$(VENV)/bin/dragonstones serve --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# Random-play steps/s at 3-6 players beside PettingZoo's connect_four_v3, in one run;
# the last line is the 4-player ratio. Then bench-vector.
bench: $(STAMP)
	$(PY) tools/aec_throughput.py dragonstones_env:env:num_players=3 dragonstones_env:env:num_players=5 \
		dragonstones_env:env:num_players=6 dragonstones_env:env:num_players=4
	$(MAKE) bench-vector

# Learner steps/s of the package's vector env beside SB3's SubprocVecEnv over the Gym env (heuristic
# opponents, random legal learner moves, 2 processes; the vector env also at 32 and 64 tables in them),
# median of 3 runs each after a warm-up; the last line is the ratio at equal tables.
bench-vector: $(STAMP)
	$(PY) -m tools.vector_throughput --tables 2 --workers 2 --more-tables 32 64 --runs 3

# Learner steps/s of make train's config: today's path (one table per process) beside the batched
# collector with 1 and 2 worker processes, with the split (collection, opponents, learner, update).
BENCH_STEPS ?= 32768
bench-train: $(STAMP)
	$(PY) -m training.bench_train --config configs/default.yaml --steps $(BENCH_STEPS) --workers 1 2

# The main job: train with configs/default.yaml (from the shipped heuristic clone, the champion's
# self-play league at a small budget; the result in runs/policies/default), then play the panel at 4 players (k copies against 4 - k
# of each zoo bot, the heuristic and random) and print its robustness figure.
EVAL_GAMES ?= 48
train: $(STAMP)
	$(PY) -m training.train --config configs/default.yaml --overwrite
	$(PY) -m dragonstones_env.evaluation --panel runs/policies/default --players 4 --games $(EVAL_GAMES) --workers 2 \
		--out runs/default/panel

# The panel of one candidate (any policy spec): `make panel CANDIDATE=champion [PANEL_GAMES=1000]`.
CANDIDATE ?= champion
PANEL_GAMES ?= 200
panel: $(STAMP)
	$(PY) -m dragonstones_env.evaluation --panel $(CANDIDATE) --players 3 4 6 --games $(PANEL_GAMES) --workers 2

clean:
	rm -rf $(VENV) $(RLLIB_VENV) $(LIBRARIES_VENV) .pytest_cache .hypothesis
