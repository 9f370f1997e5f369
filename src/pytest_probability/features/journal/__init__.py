"""The journal (``--prob-journal``): every finished run appended as it ends, and a killed session resumed from it.

The file format, its writer (a ``RecordLog``: each record durable before its
outcome is shown), the resumed runs' deselection and exit status, and its
part of every output. Imports the core only.
"""
