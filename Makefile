# `make run` serves the app on http://127.0.0.1:7860 with the embedded model; `make test` runs every test.
# Both create .venv on first use and install the pinned requirements.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_ENV := HF_HUB_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False

.PHONY: run test bench install clean

$(STAMP): requirements.txt requirements-dev.txt requirements-nodeps.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install -q --no-deps -r requirements-nodeps.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	GRADIO_ANALYTICS_ENABLED=False $(PY) app.py

test: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m lade_core bench --max-new-tokens 128 --window 15 --ngram 5 --guess 15

clean:
	rm -rf $(VENV) .pytest_cache
