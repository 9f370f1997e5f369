"""Each case's state across nights (new, passing, flaky, failing, broken, fixed), from the ``--prob-history`` folder.

The rule is :mod:`pytest_probability.maths.states` (pure, shared with the
history page); this package reads the folder's newest nights, decides every
case's state tonight and reaches every output through its facet (the JSON
``rows[].history`` and ``states``, a line under the table, the table's
column, the ``probability.case.state`` gauges). It imports the core, never
another feature.
"""
