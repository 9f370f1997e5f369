"""The nightly where people look: the CI job's summary (Markdown), GitHub annotations and JUnit XML properties.

The summary and the annotations are rendered from the report dict the JSON
and HTML reports write (every facet's fields: gates, the baseline, the
states across nights, quarantine, spend), so they agree with every output;
the merge renders them from the merged report. The JUnit properties are put
on each run's and verdict item's report in the aggregating process, before
pytest's junitxml plugin reads them. It imports the core, never another
feature.
"""
