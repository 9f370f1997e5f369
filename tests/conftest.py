"""Shared fixtures of the test suite.

Plugin behaviour is tested end to end with ``pytester``; tests that depend on
process state (OpenTelemetry, xdist) run pytest in a subprocess.
"""

pytest_plugins = ["otlp_fixtures"]
