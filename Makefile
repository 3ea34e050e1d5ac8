# sesstool — developer entry points. `make` lists them.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help venv demo test test-deep lint typecheck check bench bench-memory fuzz goldens clean interop mutate \
	codex-fixtures claude-lane claude-fixtures browser-lane codex-lane bench-codex bench-claude bench-fleet test-fleet

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

$(STAMP): pyproject.toml requirements-dev.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)  ## create .venv and install sesstool with its dev tools

DEMO_STAMP := $(VENV)/.demo-installed

# the demo needs sesstool and its runtime dependencies only (no linters, no test tools)
$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	@touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)  ## install sesstool alone (runtime dependencies only) and inspect a bundled crashed log
	$(BIN)/sesstool inspect fixtures/dsh/crash-dangling-call/session.jsonl

# make test runs pytest in two worker processes (pytest-xdist), CI's two cores; each test file
# runs whole on one worker (--dist loadfile: module and package fixtures are made once), the
# files handed out in collection order (tests/adversarial's long memory tests first, not last).
# docs/ci.md "This project's own test suite": why, and the isolation rules a test must follow.
# TEST_WORKERS=0 runs serially in one process.
TEST_WORKERS ?= 2
XDIST        := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The package is byte-compiled before the tests, as an installed copy is (pip compiles on install,
# and bench/run.py does the same): the suite starts sesstool in a child process some thousands of
# times, and where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as on this project's CI
# machines) each child compiled every module it imports, ~0.1 s a child (docs/ci.md).
test: $(STAMP)  ## lint, type-check and run the whole test suite (two pytest workers)
	$(BIN)/ruff check sesstool tests bench fuzz mutation
	$(BIN)/mypy
	$(BIN)/python -m compileall -q sesstool
	$(BIN)/pytest -q $(XDIST)

DEEP_FACTOR ?= 20

test-deep: $(STAMP)  ## the test suite with random seeds and DEEP_FACTOR x the Hypothesis examples (not in CI)
	SESSTOOL_HYPOTHESIS_PROFILE=deep SESSTOOL_DEEP_FACTOR=$(DEEP_FACTOR) nice $(BIN)/pytest -q $(XDIST)

lint: $(STAMP)  ## ruff
	$(BIN)/ruff check sesstool tests bench fuzz mutation
	$(BIN)/ruff format --check sesstool tests bench fuzz mutation

typecheck: $(STAMP)  ## mypy --strict
	$(BIN)/mypy

bench: $(STAMP)  ## generate large logs and measure throughput and memory (dsh, then Codex beside it)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/codex.py

bench-memory: $(STAMP)  ## peak RSS and time of every command and format at 100 MiB and 1 GiB, side by side
	$(BIN)/python bench/memory.py

bench-codex: $(STAMP)  ## only the Codex part of make bench: 100 MiB and 1 GiB rollouts, validate vs bare orjson
	$(BIN)/python bench/codex.py

bench-fleet: $(STAMP)  ## fleet throughput: 10,000 small and 20 large logs, one process vs LocalCluster
	$(BIN)/python bench/fleet.py

# serial: the fleet lane is one file (one worker would run it all) with its own 2-worker cluster
test-fleet: $(STAMP)  ## only the fleet lane (Dask + moto S3 on loopback; also part of make test)
	$(BIN)/pytest -q -m fleet

# serial, like the lanes, make mutate and mutation/covmap.py below: they write into the
# repository (goldens), or were not measured under workers (lanes), or need one process (covmap)
goldens: $(STAMP)  ## refresh golden outputs (read the diff before committing!)
	SESSTOOL_UPDATE_GOLDENS=1 $(BIN)/pytest -q tests/golden tests/rules tests/test_readme.py tests/cli/test_repair.py tests/cli/test_fork.py tests/cli/test_inspect_roots.py tests/cli/test_not_a_log.py tests/mini tests/migrate tests/claude tests/dialects/codex/test_inspect_timeline.py tests/core/test_repair_plan.py

interop: $(STAMP)  ## differential tests against the published dsh packages (Node 22 from npm)
	bash tests/interop/setup.sh >/dev/null || test $$? -eq 10
	SESSTOOL_INTEROP=1 $(BIN)/pytest -q tests/interop

CHROMIUM ?= /usr/bin/chromium
PLAYWRIGHT := playwright==1.65.2

browser-lane: $(STAMP)  ## the report pages in headless Chromium (installs Debian's chromium as root, Playwright into .venv)
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { \
	  [ "$$(id -u)" = 0 ] || { echo "browser-lane: $(CHROMIUM) is missing; as root: apt-get install chromium" >&2; exit 1; }; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null; }
	$(BIN)/pip install --quiet $(PLAYWRIGHT)
	SESSTOOL_BROWSER=1 SESSTOOL_CHROMIUM=$(CHROMIUM) $(BIN)/pytest -q tests/report/test_browser.py

claude-lane: $(STAMP)  ## judge the Claude dialect by the real Claude Code CLI (npm, private netns, mock API)
	bash tests/claude_lane/setup.sh >/dev/null
	SESSTOOL_CLAUDE_LANE=1 unshare -n $(BIN)/pytest -q -p no:cacheprovider tests/claude_lane

bench-claude: $(STAMP)  ## Claude transcripts of 100 MiB and 1 GiB: validate time and peak memory
	$(BIN)/python bench/claude_memory.py

claude-fixtures: $(STAMP)  ## re-record fixtures/claude/ with the real CLI (then: make goldens, read the diff)
	$(BIN)/python tests/claude_lane/record_fixtures.py

codex-lane: $(STAMP)  ## judge sesstool by the real Codex CLI 0.171.0 (npm; unshare -n, loopback only)
	bash tests/codex_cli/setup.sh >/dev/null || test $$? -eq 10
	SESSTOOL_CODEX=1 unshare -n $(BIN)/pytest -q -p no:cacheprovider tests/codex_cli

codex-fixtures: $(STAMP)  ## re-record fixtures/codex with the real Codex CLI (npm; unshare -n)
	$(BIN)/python -m tests.codex_cli.generate

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info test-artifacts

MODULE ?=
BUDGET ?= 30

mutate: $(STAMP)  ## mutation testing of mutation/modules.toml (MODULE=path for one; BUDGET minutes each; not in CI)
	nice $(BIN)/python -m mutation.run --budget-minutes $(BUDGET) $(if $(MODULE),--module $(MODULE))

FUZZ_SECONDS ?= 600

fuzz: $(STAMP)  ## atheris: readers+scanner, decoders, seq-range/packed-row decoders under 512 MB (FUZZ_SECONDS each; not in CI)
	$(BIN)/pip install --quiet atheris==3.0.0
	mkdir -p fuzz/corpus
	cp -n fixtures/fuzz/seed/* fuzz/corpus/ 2>/dev/null || true
	$(BIN)/python fuzz/fuzz_readers.py fuzz/corpus -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10
	mkdir -p fuzz/corpus-decoder
	cp -n fixtures/fuzz/seed/* fuzz/corpus-decoder/ 2>/dev/null || true
	$(BIN)/python fuzz/fuzz_decoder.py fuzz/corpus-decoder -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10
	mkdir -p fuzz/corpus-rows
	cp -n fixtures/fuzz/seed/* fuzz/corpus-rows/ 2>/dev/null || true
	$(BIN)/python fuzz/fuzz_rows.py fuzz/corpus-rows -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=512 -malloc_limit_mb=512 -timeout=30
