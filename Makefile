# callbluff: `make demo` and `make test` work on a fresh machine (they install what they need).
# `make demo` waits only for the core set-up (scripts/setup.sh); `make test` adds the extras (`setup.sh --full`:
# Chromium, the test tools, Ray, the local LLM grader with its llama-cpp-python build).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.callbluff-setup-stamp
STAMP_FULL := $(VENV)/.callbluff-setup-full-stamp

.PHONY: setup setup-full demo test test-fast mutation bench wheel-check clean

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

$(STAMP_FULL): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV) --full
	touch $(STAMP) $(STAMP_FULL)

setup: $(STAMP)

setup-full: $(STAMP_FULL)

demo: setup
	$(VENV)/bin/callbluff demo

# Two test processes (pytest-xdist; TEST_WORKERS=0 runs them in one), each taking tests from the other's queue when
# its own is done (worksteal: the slow real-data files do not end up behind each other on one worker).
TEST_WORKERS ?= 2
test: setup-full
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# The path of a user without this Makefile: build callbluff's wheel, install it into a new virtualenv, then
# `callbluff prepare` and `callbluff demo --limit 5` there (scripts/wheel_check.sh).
wheel-check: setup
	bash scripts/wheel_check.sh

# Unit tests only: no real-data (`shared`, marked automatically by tests/conftest.py) or `slow` tests.
test-fast: setup-full
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not slow and not shared"

# Mutation testing with mutmut ([tool.mutmut] in pyproject.toml): mutates metrics/, engine/metrics_rows.py,
# seeding.py, targets/base.py and targets/cache.py and runs the fast tests that pin them, niced, 2 children.
# Not part of `make test`. Results are kept in mutants/ (a re-run only redoes what changed); list the
# survivors with `.venv/bin/mutmut results`, inspect one with `.venv/bin/mutmut show NAME`.
mutation: setup-full
	nice -n 10 $(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut export-cicd-stats
	@$(PY) -c 'import json; s = json.load(open("mutants/mutmut-cicd-stats.json")); \
	print("mutation score: {killed} killed / {survived} survived / {total} mutants ({no_tests} not covered, " \
	      "{timeout} timeouts, {suspicious} suspicious, {skipped} skipped)".format(**s))'

# Every figure of benchmarks/RESULTS.md, one benchmark at a time (~60 min on 2 idle CPUs), then the results
# file. The peers (nlpaug, TextAttack, CheckList) run in their own environment, benchmarks/.peers-venv, which
# benchmarks/peers/setup.sh makes (idempotent; never a callbluff dependency); a failure there leaves the rest.
bench: setup-full
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/attack_throughput.py
	$(PY) benchmarks/essay_attacks.py
	$(PY) benchmarks/peak_memory.py
	$(PY) benchmarks/ray_scaling.py
	-$(PY) benchmarks/dpaeg_candidates.py
	-$(PY) benchmarks/addonesent.py --fluency structural --lm-questions 100 --any 10 --any-budget 1200 \
		--any-objective margin --any-candidates 10 --any-top-k 50
	-$(PY) benchmarks/report_size.py
	-bash benchmarks/peers/setup.sh && $(PY) benchmarks/peers/run.py
	$(PY) benchmarks/collect.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
