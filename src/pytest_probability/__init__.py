"""pytest-probability."""
