# callbluff: `make demo` and `make test` work on a fresh machine (they install what they need).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.callbluff-setup-stamp

.PHONY: setup demo test test-fast mutation bench clean

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/callbluff demo

test: setup
	$(PY) -m pytest -q

# Unit tests only: no real-data (`shared`, marked automatically by tests/conftest.py) or `slow` tests.
test-fast: setup
	$(PY) -m pytest -q -m "not slow and not shared"

# Mutation testing with mutmut ([tool.mutmut] in pyproject.toml): mutates metrics/, engine/metrics_rows.py,
# seeding.py, targets/base.py and targets/cache.py and runs the fast tests that pin them, niced, 2 children.
# Not part of `make test`. Results are kept in mutants/ (a re-run only redoes what changed); list the
# survivors with `.venv/bin/mutmut results`, inspect one with `.venv/bin/mutmut show NAME`.
mutation: setup
	nice -n 10 $(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut export-cicd-stats
	@$(PY) -c 'import json; s = json.load(open("mutants/mutmut-cicd-stats.json")); \
	print("mutation score: {killed} killed / {survived} survived / {total} mutants ({no_tests} not covered, " \
	      "{timeout} timeouts, {suspicious} suspicious, {skipped} skipped)".format(**s))'

# Every figure of benchmarks/RESULTS.md (issue 15), one benchmark at a time (~30 min on 2 idle CPUs), then the
# results file. The peer comparison has its own environment and command (benchmarks/peers/README.md).
bench: setup
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/attack_throughput.py
	$(PY) benchmarks/peak_memory.py
	$(PY) benchmarks/ray_scaling.py
	-$(PY) benchmarks/dpaeg_candidates.py
	-if [ -f benchmarks/addonesent.py ]; then $(PY) benchmarks/addonesent.py; fi
	-$(PY) benchmarks/report_size.py
	$(PY) benchmarks/collect.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
