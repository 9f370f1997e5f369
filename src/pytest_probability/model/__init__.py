"""The data every stage hands on: cases, runs and their records, rows, verdicts, metric series.

Pure and pytest-free, importing only the leaves (``vocabulary``, ``text``).
Each submodule is imported by name (``from pytest_probability.model.run
import RunRecord``): this package's own import loads nothing.
"""
