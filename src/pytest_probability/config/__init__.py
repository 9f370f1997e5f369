"""Configuration: the options and ini keys, the ``probability`` marker, and what each case asks for.

:mod:`.options` declares the options (at every start-up: pytest needs every
option before any feature is wired, so the features' options are declared
here too, in one place that ``--help`` reads in order); :mod:`.settings`
reads and validates them once, at configure, into the frozen ``Settings``
every stage and feature reads; :mod:`.marker` parses the marker's keywords;
:mod:`.spec` turns a case's keywords and the settings into its
:class:`~.spec.CaseSpec`; :mod:`.retry` is the ``--prob-retry`` policy and
:mod:`.price_file` the ``--prob-prices`` file; :mod:`.values` holds the
parsers they share and the one way to read an option or its ini key. May
import the model, the maths and the leaves; no stage.
"""
