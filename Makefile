# Two entry points, both self-installing into .venv (nothing needs installing by hand):
#   make demo   install ckptdiag with its lab, then run `ckptdiag demo`
#   make test   install ckptdiag with its test tools, then run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# swig and cmake come from PyPI wheels into the venv; the WiredTiger build finds them on PATH
export PATH := $(BIN):$(PATH)

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# swig 4.1.1 exactly: newer swig builds a WiredTiger module that fails to import
# (undefined symbol PyInt_AsLong); cmake and ninja come as wheels with the build.
$(VENV)/.installed-dev: $(BIN)/python pyproject.toml setup.py $(wildcard ckptdiag/*.c ckptdiag/lab/*.c)
	$(BIN)/python -m pip install -q 'swig==4.1.1' cmake ninja
	$(BIN)/python -m pip install -q -e '.[dev,lab]'
	touch $@

demo: $(VENV)/.installed-dev
	$(BIN)/ckptdiag demo

test: $(VENV)/.installed-dev
	# two workers; the lab's engine runs stay together on one of them (tests/conftest.py)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check ckptdiag tests benchmarks
	$(BIN)/ruff format --check ckptdiag tests benchmarks
	$(BIN)/mypy
	# the benchmarks call the package as it is now (they broke silently when it changed); tests/ holds their fixtures
	MYPYPATH=tests $(BIN)/mypy --follow-imports=silent benchmarks

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_sample_cost.py
	$(BIN)/python benchmarks/bench_record_jitter.py

clean:
	rm -rf $(VENV) build *.egg-info
