"""Configuration: the options and ini keys, the ``probability`` marker, and what each case asks for.

:mod:`.options` declares the options (at every start-up); :mod:`.settings`
reads and validates them once, at configure; :mod:`.marker` parses the
marker's keywords; :mod:`.spec` turns a case's keywords and the settings into
its :class:`~.spec.CaseSpec`; :mod:`.compare` holds the comparisons' settings
(read only when comparisons are on) and :mod:`.retry` the ``--prob-retry``
policy; :mod:`.values` holds the parsers they share and the one way to read
an option or its ini key. May import the model, the maths and the leaves; no
stage.
"""
