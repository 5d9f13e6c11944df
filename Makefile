# Set-up and the two everyday commands of icl-verify. Both create the virtual
# environment on first use, so they work on a fresh machine.
#
#   make test     install (first time) and run the test suite
#   make verify   install (first time) and run the main job (all claims, quick preset)
#
# TORCH_SPEC chooses the torch build. The default is the CPU wheel this
# project's machines carry; with a GPU, e.g.
#   make test TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cu124"

PYTHON     ?= python3
VENV       ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.installed
DEV_STAMP  := $(VENV)/.dev-installed

.PHONY: install test verify lint clean docs docs-check

install: $(STAMP)

# The package and torch: all `make verify` needs. The test tools (the `dev` extra: pytest,
# hypothesis, ruff, and the Jupyter kernel the tutorial runs in) come on top for `make test`.
$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(DEV_STAMP)

# On every core: one worker per core, the tests of a module on one worker (its module-scoped
# fixtures, e.g. the registry's smoke run, are made once), the modules dealt out in collection
# order, where the ones marked heavy come first (tests/conftest.py), not by test count.
test: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadscope --no-loadscope-reorder

# The main job: every claim at the quick preset on the CPU; the report lands in
# results/<run-id>/report.md. A claim that disagrees is a finding, not a failure of
# the job: exit status 1 from the run is reported and tolerated; anything else fails.
verify: $(STAMP)
	$(BIN)/icl-verify run --preset quick --device cpu --out results; \
	status=$$?; \
	if [ $$status -eq 1 ]; then echo "verify: some claims disagree; see the report's findings"; \
	elif [ $$status -ne 0 ]; then exit $$status; fi

lint: $(DEV_STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# The documentation site (docs/site, mkdocs.yml) into site/, strict: a broken link or a
# missing page fails. Offline once installed: KaTeX comes from npm into build/katex. The
# gallery (docs/tutorial.py, docs/gallery/) is executed in a Jupyter kernel at the smoke
# preset, about a minute of CPU; build/gallery/ keeps the executed notebooks until a script
# or the package's code changes (docs/site/gallery.py).
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

build/katex/node_modules/katex/dist/katex.min.js:
	mkdir -p build/katex && npm install --silent --no-audit --no-fund --prefix build/katex katex@0.16

docs: $(DOCS_STAMP) build/katex/node_modules/katex/dist/katex.min.js
	$(BIN)/python docs/site/package_links.py
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build --strict --quiet

# The site as a reader sees it: every internal link and image of every page points at a file
# of the site; served locally, opened in headless Chromium (screenshots of the home page,
# claim pages of both papers, the gallery and the API reference at desktop and phone width
# in build/docs-check/, every formula rendered, every image loaded; skipped, saying so,
# when Chromium is not installed).
docs-check: docs
	$(BIN)/python docs/check_site.py site build/docs-check
