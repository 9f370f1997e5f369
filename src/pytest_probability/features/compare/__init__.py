"""Comparisons: a session against baseline reports (``--prob-baseline``, ``--prob-history``) and A/B arms (``compare=``).

The settings, the baseline reader, the pairing and its statistics, the
``[baseline]`` and ``[compare:ARM]`` verdict kinds, ``--prob-plan``, the
history folder, and their part of every output. Imports the core only; its
maths (``maths.twostats``, ``maths.ab_planning``) and the baseline are
imported once something is compared.
"""
