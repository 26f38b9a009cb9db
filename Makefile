# Athar: `make run` serves the app on SQLite with demo data; `make test` runs the suite.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := .venv
PY        := $(VENV)/bin/python
DATA_DIR  := $(or $(ATHAR_DATA_DIR),var)
PG_URL    ?= postgres://postgres@127.0.0.1:5432/athar
JOBS      ?= auto
# `make run PORT=8101` serves there; security keys accept that origin (ATHAR_PORT).
PORT      ?= 8000
export ATHAR_DATA_DIR := $(DATA_DIR)

.PHONY: help run test lint shape types migrations-check browser-deps pdf-deps map-data test-sqlite test-postgres messages clean

help:
	@echo "make run    - the app on SQLite with demo data at http://127.0.0.1:$(PORT) (PORT=8000 by default)"
	@echo "make test   - ruff, import layers, mypy, migrations check, pytest on SQLite and (when reachable) PostgreSQL"

# The virtualenv is rebuilt whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	@PYTHON=$${PYTHON:-$$(tools/find-python)} || exit 1; \
	  echo "Using $$PYTHON ($$($$PYTHON --version))"; \
	  [ -x $(PY) ] || $$PYTHON -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=25.1"
	$(PY) -m pip install --quiet -e . --group dev
	@touch $@

# The app and a task worker (browser batch uploads, the checkpoint schedule); Ctrl-C stops both.
run: $(VENV)/.installed pdf-deps
	@mkdir -p $(DATA_DIR)
	$(PY) manage.py migrate --no-input
	$(PY) manage.py seed_demo
	$(PY) manage.py resume_batches
	$(PY) manage.py checkpoint_schedule
	@$(PY) manage.py db_worker --interval 1 & worker=$$!; \
	  trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	  ATHAR_DEMO_MODE=1 ATHAR_PORT=$(PORT) $(PY) manage.py runserver 127.0.0.1:$(PORT)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The layers of pyproject.toml's [tool.importlinter]: no app imports one above it.
shape: $(VENV)/.installed
	$(VENV)/bin/lint-imports

# mypy with django-stubs over the product code ([tool.mypy] in pyproject.toml).
types: $(VENV)/.installed
	$(VENV)/bin/mypy

migrations-check: $(VENV)/.installed
	DATABASE_URL=sqlite:///:memory: $(PY) manage.py makemigrations --check --dry-run

test-sqlite: $(VENV)/.installed
	DATABASE_URL=sqlite:///:memory: ATHAR_TEST_EXPECT_VENDOR=sqlite \
	  $(PY) -m pytest -n $(JOBS) -p no:cacheprovider

# PostgreSQL runs when reachable; REQUIRE_POSTGRES=1 turns "unreachable" into a failure.
test-postgres: $(VENV)/.installed
	@if $(PY) tools/db_reachable.py "$(PG_URL)"; then \
	  echo "PostgreSQL reachable: running the suite on it"; \
	  DATABASE_URL="$(PG_URL)" ATHAR_TEST_EXPECT_VENDOR=postgresql \
	    $(PY) -m pytest -n $(JOBS) -p no:cacheprovider; \
	elif [ "$(REQUIRE_POSTGRES)" = "1" ]; then \
	  echo "REQUIRE_POSTGRES=1 but PostgreSQL at $(PG_URL) is unreachable" >&2; exit 1; \
	else \
	  echo "PostgreSQL not reachable at $(PG_URL): skipping the PostgreSQL run"; \
	fi

# Browser tests drive Debian's chromium (Playwright never downloads a browser here) and
# check pages with axe-core from the npm registry (tools/axe, pinned by its lock file).
browser-deps:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian chromium for the browser tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; \
	  else echo "chromium is not installed: the browser tests will be skipped"; fi; }
	@[ -f tools/axe/node_modules/axe-core/axe.min.js ] || \
	  (cd tools/axe && npm ci --silent --no-audit --no-fund)

# The case map's outlines: Natural Earth countries (public domain) from the npm registry
# (tools/world-atlas, pinned by its lock file), cut to Syria and its neighbours into
# places/boundaries/levant.json, which is committed: the app never fetches a map.
map-data: $(VENV)/.installed
	@[ -f tools/world-atlas/node_modules/world-atlas/countries-50m.json ] || \
	  (cd tools/world-atlas && npm ci --silent --no-audit --no-fund)
	$(PY) tools/extract_boundaries.py

# The custody report (WeasyPrint) shapes Arabic with a font installed here, never fetched;
# HarfBuzz's subsetter makes its fonts small; pdftotext (poppler) reads reports in tests.
PDF_DEBS := fonts-hosny-amiri libharfbuzz-subset0 poppler-utils
pdf-deps:
	@missing=$$(for p in $(PDF_DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done | paste -sd ' '); \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      echo "installing $$missing for the custody report"; \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; \
	    else echo "not installed: $$missing (the custody report needs them)"; fi; \
	  fi

test: lint shape types migrations-check browser-deps pdf-deps test-sqlite test-postgres

# Extract strings, fill in the Arabic table of tools/translate_ar.py, compile; commit both.
messages: $(VENV)/.installed
	$(PY) manage.py makemessages -l ar --no-obsolete --ignore ".venv/*" --ignore "var/*" \
	  --ignore "tests/*" --ignore "tools/*"
	$(PY) tools/translate_ar.py
	$(PY) manage.py compilemessages -l ar --ignore ".venv/*"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
