# Set-up and the two everyday commands of icl-verify. Both create the virtual
# environment on first use, so they work on a fresh machine.
#
#   make test     install (first time) and run the test suite
#   make verify   install (first time) and run the main job
#
# TORCH_SPEC chooses the torch build. The default is the CPU wheel this
# project's machines carry; with a GPU, e.g.
#   make test TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cu124"

PYTHON     ?= python3
VENV       ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.installed

.PHONY: install test test-slow verify lint clean

install: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

verify: $(STAMP)
	$(BIN)/icl-verify derive --all

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
