# Two commands for a newcomer: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean postgres

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py

lint: $(STAMP)
	$(BIN)/ruff check src tests examples benchmarks
	$(BIN)/ruff format --check src tests examples benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy --strict src tests examples benchmarks

unit: $(STAMP) postgres
	$(BIN)/pytest -q

# The ledger's tests start a throwaway PostgreSQL server from Debian's postgresql package.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo "installing PostgreSQL (apt-get) for the ledger's tests"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends postgresql; }

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_client.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
