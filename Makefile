# Two commands for a newcomer: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# What is installed into .venv: the package alone (all `make demo` needs), or with the dev tools.
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev

# Bytecode is written as each module is first imported, even where PYTHONDONTWRITEBYTECODE is set
# (many CI images): else every process of the checks and the suite compiles paysdk, its tests...
# again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test setup matrix matrix-prepare matrix-full lint typecheck unit docs docs-check docs-serve dist bench clean postgres

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# pip itself is brought up to date only here, where it installs paysdk editable (PEP 660, which
# the pip of Python 3.10.0 predates); for the dev tools it installs only uv (4 s saved).
$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# uv installs the dev tools several times faster than pip; the dev extra then pins uv itself.
# --compile-bytecode: this venv lasts, and the suite's workers start at once, each importing
# Django, SQLAlchemy... that a lazy compile would compile in every one of them at the same time.
# (The matrix's environments, new each run, compile only what their processes import.)
$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	touch $@ $(RUNTIME_STAMP)

# The demo imports paysdk and the standard library only: no dev toolchain to wait for.
demo: $(RUNTIME_STAMP)
	$(BIN)/python examples/quickstart.py

# ruff, the layering contracts of pyproject.toml's [tool.importlinter] (docs/design.md), and the
# sync code generated from its async source (scripts/unasync.py) being up to date.
lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests examples benchmarks scripts
	$(BIN)/ruff format --check src tests examples benchmarks scripts
	$(BIN)/lint-imports
	$(BIN)/python scripts/unasync.py --check

# pyright finds the packages to check against through the `python` first on PATH.
PYRIGHT := PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pyright

# mypy's cache is the user's, as pip's and uv's are, so that a new clone (CI's) checks only what
# differs from the last check anywhere on the machine: about 5 CPU-seconds instead of 30. mypy
# checks each cached module's hash, and writes each file of its cache whole (os.replace).
MYPY_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/paysdk/mypy
export MYPY_CACHE_DIR

typecheck: $(DEV_STAMP)
	$(BIN)/mypy --strict src tests examples benchmarks scripts
	$(PYRIGHT)
	$(PYRIGHT) --verifytypes paysdk --ignoreexternal

# The suite on every core, each file on one worker, the serial tier one test at a time on a
# worker of its own (scripts/suite.py; tests/tiers.py says which test is in which tier).
# `make unit TIER=smoke` runs one tier alone: all (the default), full, smoke, once or serial.
TIER ?= all

unit: $(DEV_STAMP) postgres
	$(BIN)/python scripts/suite.py --tier $(TIER)

# The documentation site, into site/; --strict turns broken links and references into errors.
# Its search works opened from disk (site/index.html) as well as served. A public callable whose
# docstring leaves out an argument or its Returns is a warning (scripts/griffe_sections.py), so
# a failed build. Not --quiet: it hides the warnings from --strict too, and the build passes.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The pages as headless Chromium renders them (scripts/docs_check.py):
# no raw reStructuredText, no private name, no table name broken over two lines, no code line
# wrapped (long lines scroll); screenshots in .docs-check/. The browser is Debian's chromium, which apt-get installs where
# it is missing on Debian or Ubuntu; elsewhere set CHROMIUM to a Chromium or Chrome binary.
docs-check: docs
	$(BIN)/python scripts/docs_check.py --install site

# The site at http://127.0.0.1:8100, rebuilt as the pages change; this machine only. Not 8000,
# mkdocs's own default, which the Flask example and most frameworks' dev servers take (the
# Django and FastAPI examples take 8001 and 8002): `make docs-serve DOCS_PORT=N` for another.
DOCS_PORT ?= 8100

docs-serve: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

# The ledger's tests start a throwaway PostgreSQL server, a throwaway PgBouncer in front of it,
# and workers with their clocks moved by libfaketime. scripts/find_postgres.py finds them (PATH,
# pg_config --bindir, Debian's and Homebrew's directories); missing ones it installs with apt-get
# on Debian or Ubuntu, and elsewhere it says what to install (brew, dnf) and fails.
postgres:
	@$(PYTHON) scripts/find_postgres.py --install >/dev/null

# What would be uploaded: a wheel and an sdist in dist/, checked as PyPI will render them. uv, not
# pip, installs the build backend into build's isolated environments: 13-16 s instead of 40.
dist: $(DEV_STAMP)
	rm -rf dist
	$(BIN)/python -m build --installer uv --outdir dist . > /dev/null
	$(BIN)/twine check --strict dist/*

setup: $(DEV_STAMP) postgres

# Setup, then the suite; beside it, one after another, the checks that need no suite (their
# output shown after the suite's); then a table of how long each took (scripts/steps.py).
# docs-check builds the site first (make docs), so the site is built once.
test:
	@$(PYTHON) scripts/steps.py setup unit --beside lint typecheck docs-check dist

# The support window's two ends run the full suite: Python 3.10 at the lowest declared versions
# and 3.15 at the newest; the Pythons between them run the smoke tier (scripts/matrix.py).
# `make test` is the 3.11 job. CI runs it after `make test`.
matrix: $(DEV_STAMP) postgres
	$(BIN)/python scripts/matrix.py

# The sid chroot of the 3.14 and 3.15 jobs alone, left for `make matrix` to use: .ci/run builds
# it beside `make test`, since it mostly waits on downloads.
matrix-prepare: $(DEV_STAMP) postgres
	$(BIN)/python scripts/matrix.py --prepare

# Every job runs the full suite, with 3.10 at the newest versions too: for a release, by hand.
matrix-full: $(DEV_STAMP) postgres
	$(BIN)/python scripts/matrix.py --full

bench: $(DEV_STAMP)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .matrix dist build site .docs-check .pytest_cache .mypy_cache .ruff_cache
