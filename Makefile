# sesstool — developer entry points. `make` lists them.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv demo test lint typecheck check bench fuzz goldens clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

$(STAMP): pyproject.toml requirements-dev.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)  ## create .venv and install sesstool with its dev tools

demo: $(STAMP)  ## inspect a bundled crashed session log
	$(BIN)/sesstool inspect fixtures/dsh/crash-dangling-call/session.jsonl

test: $(STAMP)  ## lint, type-check and run the whole test suite
	$(BIN)/ruff check sesstool tests bench
	$(BIN)/mypy
	$(BIN)/pytest -q

lint: $(STAMP)  ## ruff
	$(BIN)/ruff check sesstool tests bench
	$(BIN)/ruff format --check sesstool tests bench

typecheck: $(STAMP)  ## mypy --strict
	$(BIN)/mypy

bench: $(STAMP)  ## generate large logs and measure throughput and memory
	$(BIN)/python bench/run.py

goldens: $(STAMP)  ## refresh golden outputs (read the diff before committing!)
	SESSTOOL_UPDATE_GOLDENS=1 $(BIN)/pytest -q tests/golden tests/rules tests/test_readme.py tests/cli/test_repair.py

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
