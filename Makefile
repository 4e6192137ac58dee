# One command runner, used locally and by .ci/run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# torch comes first: on Linux a plain `pip install torch` pulls a multi-GB CUDA build.
# CPU elsewhere:  make install TORCH_INDEX=--index-url=https://download.pytorch.org/whl/cpu
# CUDA:           make install TORCH_SPEC=torch   (PyPI's default Linux build)
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=

.PHONY: install browser lint typecheck test test-fast check serve bench docs clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/memory_system encoder export || echo "ONNX export failed (see above): torch will serve."
	touch $@

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

# The whole suite on every core; a file's tests stay in one worker (its module fixtures: the
# browser, the live server, start once).
test: install browser
	$(BIN)/pytest -n auto --dist loadfile

# For every edit: the fake encoder, the in-memory client in the current protocol era, no child
# processes, no browser (markers: tests/conftest.py and pyproject.toml), on every core (xdist).
# `make test` runs them all. One test, in this process: $(BIN)/pytest tests/path.py::test_name
FAST_TIER := not model and not subprocess and not browser and not slow and not legacy_protocol
test-fast: install
	$(BIN)/pytest -q -p no:cacheprovider -n auto -m "$(FAST_TIER)"

# The dashboard's browser tests drive Debian's Chromium (Playwright's own download is not used).
# Installed here when missing and apt-get is usable as root; otherwise those tests are skipped
# and pytest's summary says so.
browser:
	@[ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the dashboard's browser tests..." >&2; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -qq chromium >/dev/null 2>&1 \
	      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } \
	      || echo "Could not install chromium: the browser tests will be skipped." >&2; \
	  else \
	    echo "No chromium, and apt-get is not usable as root: the browser tests will be skipped." >&2; \
	  fi; }

check: lint typecheck test

# stdout is the JSON-RPC stream: the install step and make's own echo go to stderr.
serve:
	@$(MAKE) --no-print-directory install >&2
	@$(BIN)/memory_system serve mcp

bench: install
	$(BIN)/python -m bench

# docs/cli-reference.md is generated from the commands' --help; a test fails when it is stale.
docs: install
	$(BIN)/python -m memory_system.reference

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
