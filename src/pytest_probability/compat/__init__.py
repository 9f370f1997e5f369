"""The one place per dependency that uses what it does not publish: each name with the public interface it lacks.

``xdist.py``: pytest-xdist's controller and scheduler internals (its event
queue after an interrupt, a crashed worker's pending items). Each function
degrades to what the plugin did without it when the name is gone, and
``tests/unit/test_compat.py`` fails with a clear message when a supported
version lacks it.
"""
