# callbluff: `make demo` and `make test` work on a fresh machine (they install what they need).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.callbluff-setup-stamp

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(VENV)/bin/callbluff demo

test: setup
	$(PY) -m pytest -q

bench: setup
	$(PY) benchmarks/overhead.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
