# `make run` serves the app on http://127.0.0.1:7860 with the embedded model; `make test` runs the tests (about 13
# minutes on 2 idle cores), `make test-soak` the long runs and full matrices they sample (about 30; CI runs both).
# Both create .venv on first use, install the pinned requirements and the project itself (`lade` on the PATH of
# the venv); `make test` also installs the pinned dev tools from npm (TypeScript's checker, axe-core; never shipped)
# and type-checks the browser's renderer first. `make test-fast` lints and runs the tests that need no model, no
# server and no browser (and none of the soak tier), in two worker processes, in an order shuffled per run (`LADE_SHUFFLE=<seed>` repeats one).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
TEST_ENV := HF_HUB_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False

.PHONY: run test test-soak test-fast lint format typecheck contract bench install clean

$(STAMP): requirements.txt requirements-dev.txt requirements-nodeps.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -r requirements-nodeps.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

typecheck: $(NODE_STAMP)
	node_modules/.bin/tsc -p tsconfig.json

# The browser's types, generated from the Python declarations (app/render/contract.py); tests/test_contract.py fails
# when the checked-in files differ.
contract: $(STAMP) $(NODE_STAMP)
	$(PY) -m app.render.contract

run: $(STAMP)
	GRADIO_ANALYTICS_ENABLED=False $(PY) app.py

# Each tier writes its results to out/ (JUnit XML) and prints its 30 slowest tests.
# `make test` runs every test outside the soak tier in two worker processes, a file each at a time, torch on one
# thread in each (the small model's forward gains little from a second thread; two workers keep both cores busy
# while a browser test waits on its page).
test: $(STAMP) $(NODE_STAMP)
	node_modules/.bin/tsc -p tsconfig.json
	$(TEST_ENV) OMP_NUM_THREADS=1 $(PY) -m pytest -q -m "not soak" -n 2 --dist loadfile \
		--junitxml=out/junit-test.xml; status=$$?; \
	$(PY) -m scripts.slowest out/junit-test.xml --top 30; \
	exit $$status

test-soak: $(STAMP) $(NODE_STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -m soak --junitxml=out/junit-soak.xml
	$(PY) -m scripts.slowest out/junit-soak.xml --top 30

test-fast: lint
	$(TEST_ENV) LADE_SHUFFLE=$${LADE_SHUFFLE:-$$(date +%s)} $(PY) -m pytest -q -m "not model and not server and not browser and not soak" \
		--hypothesis-profile=quick -n 2 --dist worksteal

# Lint and format check of both languages (ruff; biome from npm, a dev tool), the layer rules and the JS types.
lint: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	node_modules/.bin/biome check .
	$(VENV)/bin/lint-imports --no-cache
	node_modules/.bin/tsc -p tsconfig.json

format: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check --fix-only -q .
	$(VENV)/bin/ruff format -q .
	node_modules/.bin/biome format --write .

bench: $(STAMP)
	$(PY) -m lade_core bench --max-new-tokens 128 --window 7 --ngram 4 --guess 7

clean:
	rm -rf $(VENV) .pytest_cache node_modules
