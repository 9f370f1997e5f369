"""OpenTelemetry export for pytest-probability: OTLP JSON-lines files and OTLP sending."""
