# Quick start: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo-output

VENV8 ?= .venv-pytest8
STAMP8 := $(VENV8)/.installed

.PHONY: demo test test-fast lint format test-pytest8 test-otel-lowest test-xdist-lowest test-ranges backends stack venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Runs the example benchmarks ten times each, prints the table, writes the
# JSON and HTML reports and an OTLP JSON-lines file. No server needed.
# Some examples fail on purpose, so the session exits 1: the target says so and
# exits 0. Any other status (2 to 5: interrupted, an internal or usage error, no
# tests) is a demo that did not work, and the target fails with it.
DEMO := $(PY) -m pytest examples -p no:cacheprovider -q --tb=no -rN --prob-runs=10 --prob-prices=examples/prices.toml \
	--prob-json=$(DEMO_OUT)/report.json --prob-html=$(DEMO_OUT)/report.html --prob-otel-file=$(DEMO_OUT)/otlp.jsonl

demo: $(STAMP)
	@mkdir -p $(DEMO_OUT)
	@echo '$(DEMO)'
	@status=0; $(DEMO) || status=$$?; \
	echo "JSON report: $(DEMO_OUT)/report.json"; \
	echo "HTML report: $(DEMO_OUT)/report.html"; \
	echo "OTLP file:   $(DEMO_OUT)/otlp.jsonl"; \
	if [ $$status -gt 1 ]; then echo "The demo's session did not complete: exit status $$status." >&2; exit $$status; fi; \
	echo "The examples include failing cases on purpose: the session's exit status was $$status$$([ $$status = 1 ] && echo ' (some tests failed)')."

# ruff's lint and format check ([tool.ruff]), the architecture's contracts ([tool.importlinter]), mypy
# ([tool.mypy]: the whole package, strict on the pure layers), then the whole suite, slow statistical checks
# included, on two cores.
LINT := $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

test: $(STAMP)
	$(LINT)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 tests

# The lint and format check alone; `make format` rewrites what the check would refuse.
lint: $(STAMP)
	$(LINT)

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# Everything but the tests marked slow.
test-fast: $(STAMP)
	$(LINT)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) -m pytest -n 2 -m "not slow" tests

# The plugin's tests again on the lowest pytest pyproject.toml allows (make test runs the newest 9).
PYTEST_LOWEST ?= pytest==8.2.0
$(STAMP8): pyproject.toml
	$(PYTHON) -m venv $(VENV8)
	$(VENV8)/bin/python -m pip install --quiet --upgrade pip
	$(VENV8)/bin/python -m pip install --quiet -e '.[test]' '$(PYTEST_LOWEST)'
	touch $(STAMP8)

test-pytest8: $(STAMP8)
	$(VENV8)/bin/python -m pytest --version
	$(VENV8)/bin/lint-imports
	$(VENV8)/bin/mypy
	$(VENV8)/bin/python -m pytest -n 2 -m "not slow" tests

# deploy/'s programs (the OpenTelemetry Collector, Jaeger v2, Prometheus 3, Alertmanager), built from
# their pinned Go modules into $PROB_BACKENDS_DIR (default ~/.cache/pytest-probability/backends) by
# deploy/build-backends.sh: a no-op when they are up to date. Needs Go and the Go module proxy; the
# tests of tests/deploy that run them skip without them (fail under CI). deploy/README.md, "Without containers".
backends:
	bash deploy/build-backends.sh

# Those programs on 127.0.0.1 with deploy/'s configuration files, without containers; Ctrl-C stops
# them. It prints which URL shows what (deploy/README.md, "Without containers").
stack: backends
	$(PYTHON) deploy/stack.py

# The lowest end of the supported ranges (pyproject.toml; make test runs the newest of everything).
# test-otel-lowest: the OpenTelemetry-facing tests (the export end to end, its unit tests, the compat
# check, tests/deploy) at the lowest opentelemetry-sdk and -exporter-otlp. test-xdist-lowest: the
# sessions under xdist (every test with an xdist, worker, crash or SIGTERM case) and the compat check at
# the lowest pytest-xdist. Each keeps its own virtual environment, rebuilt when pyproject.toml changes.
OTEL_LOWEST ?= 1.45.0
XDIST_LOWEST ?= 3.0.2
VENV_OTEL ?= .venv-otel-lowest
VENV_XDIST ?= .venv-xdist-lowest
OTEL_TESTS := tests/e2e/test_otel_export.py tests/e2e/test_otel_pipeline.py tests/e2e/test_otel_reliability.py \
	tests/e2e/test_otel_signals.py tests/e2e/test_content_capture.py tests/e2e/test_span_usage.py tests/e2e/test_transcripts.py \
	tests/unit/test_otel_options.py tests/unit/test_otel_pipeline_deadline.py tests/unit/test_otel_deferred_sender.py \
	tests/unit/test_otel_resource.py tests/unit/test_otlp_receiver_and_codec.py tests/unit/test_usage_rules.py \
	tests/unit/test_compat.py tests/deploy

$(VENV_OTEL)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV_OTEL)
	$(VENV_OTEL)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_OTEL)/bin/python -m pip install --quiet -e '.[test]' 'opentelemetry-sdk==$(OTEL_LOWEST)' \
		'opentelemetry-exporter-otlp==$(OTEL_LOWEST)' 'opentelemetry-api==$(OTEL_LOWEST)'
	touch $@

test-otel-lowest: $(VENV_OTEL)/.installed
	$(VENV_OTEL)/bin/python -m pip list 2>/dev/null | grep -E '^opentelemetry-(sdk|exporter-otlp) '
	$(VENV_OTEL)/bin/python -m pytest -n 2 $(OTEL_TESTS)

$(VENV_XDIST)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV_XDIST)
	$(VENV_XDIST)/bin/python -m pip install --quiet --upgrade pip
	$(VENV_XDIST)/bin/python -m pip install --quiet -e '.[test]' 'pytest-xdist==$(XDIST_LOWEST)'
	touch $@

test-xdist-lowest: $(VENV_XDIST)/.installed
	$(VENV_XDIST)/bin/python -m pip list 2>/dev/null | grep -E '^pytest-xdist '
	$(VENV_XDIST)/bin/python -m pytest -n 2 -m "not slow" -k "xdist or worker or crash or sigterm or compat" \
		tests/e2e tests/unit/test_compat.py tests/unit/test_in_flight.py

test-ranges: test-pytest8 test-otel-lowest test-xdist-lowest

clean:
	rm -rf $(VENV) $(VENV8) $(VENV_OTEL) $(VENV_XDIST) $(DEMO_OUT) build src/*.egg-info
