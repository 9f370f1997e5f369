"""Measures: what a case's runs are measured by, each with its own statistics behind one interface.

The pass fraction (:mod:`.fraction`) and each named score (:mod:`.score`)
are measures (:mod:`.measure`): a key, its values from a row, its interval,
its pair test and pooled test, and its text. Gates, comparisons and every
output are written once over measures. Pure and pytest-free; imports the
model and the maths only.
"""
