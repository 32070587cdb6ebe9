# The two commands a new user needs: `make run` (serve the console on the embedded default) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export VERITY_DATA_DIR ?= ./data
PORT ?= 8000

.PHONY: run try-production test install install-test browser sandbox lint typecheck tiny-model constraints

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch==2.13.0 resolves to the CPU build where one lies on disk (see README); vLLM comes with the `gpu` extra.
$(VENV)/.installed-run: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[web,worker]'
	touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[web,worker,test]'
	touch $@ $(VENV)/.installed-run

install: $(VENV)/.installed-run
install-test: $(VENV)/.installed-test

# Debian's chromium drives the browser tests; nothing is downloaded by the test tool itself.
browser:
	@command -v chromium >/dev/null || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# The custom-metric sandbox walls each metric off with bubblewrap (README: "The custom-metric sandbox").
sandbox:
	@if ! command -v bwrap >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get install -y -q bubblewrap || (apt-get update -q && apt-get install -y -q bubblewrap); \
		else echo "Custom metrics need bubblewrap: install it (Debian: apt-get install bubblewrap); see README.md."; fi; \
	fi

tiny-model: install
	@test -f $(VERITY_DATA_DIR)/models/tiny-math/config.json || $(BIN)/verity tiny-model build

run: install sandbox tiny-model
	$(BIN)/verity migrate
	$(BIN)/verity serve --port $(PORT)

# The production layout on this machine, for a try (README: "Several processes"): PostgreSQL and Redis must run.
try-production: install-test sandbox tiny-model
	$(BIN)/verity try-production --port $(PORT)

# After upgrading packages in .venv and a green `make test`: record the versions it passed with.
constraints:
	$(BIN)/pip freeze --exclude-editable | grep -v -i '^torch==' > constraints.body
	(sed -n '/^#/p' constraints.txt; cat constraints.body) > constraints.txt.new && mv constraints.txt.new constraints.txt
	rm constraints.body

lint: install-test
	$(BIN)/ruff check .

# mypy on domain/ and trainer/, configured in pyproject.toml ([tool.mypy]).
typecheck: install-test
	$(BIN)/mypy

test: install-test browser sandbox lint typecheck
	@command -v bwrap >/dev/null || { echo "make test needs bubblewrap (bwrap) for the sandbox's tests."; exit 1; }
	$(BIN)/pytest -q
