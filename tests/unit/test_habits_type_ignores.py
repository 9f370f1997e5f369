"""The package's ``# type: ignore`` comments (issue 45, part 5): at most 10, each with its error code and a reason.

mypy checks the whole package (``[tool.mypy]`` in pyproject.toml; docs/developer-guide.md, "Running the
tests"), and a ``# type: ignore`` is where it does not. A bare one hides every error of its line, so each
names the code it silences (``# type: ignore[union-attr]``) and says why, after it. They are read with
:mod:`tokenize`, so only comments count: the words in a string or a docstring are not an ignore.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).resolve().parent
#: At most this many in the package (22 before mypy checked all of it; none since).
LIMIT = 10

#: ``type: ignore`` anywhere in a comment (mypy reads one after another comment too), then its codes and the
#: rest of the comment (the reason).
_IGNORE = re.compile(r"type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)")


def ignores(source: str, name: str = "<source>") -> list[tuple[str, int, str | None, str]]:
    """(file, line, the codes or None, the reason) of each ``# type: ignore`` comment in ``source``."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _IGNORE.search(token.string)
        if match is not None:
            codes = match["codes"][1:-1].strip() if match["codes"] else None
            reason = match["rest"].strip(" \t#-:")
            found.append((name, token.start[0], codes or None, reason))
    return found


def package_ignores() -> list[tuple[str, int, str | None, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += ignores(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    return found


def test_the_package_has_at_most_ten_type_ignores() -> None:
    found = package_ignores()
    listed = "\n".join(f"{name}:{line}: [{codes}] {reason}" for name, line, codes, reason in found)
    assert len(found) <= LIMIT, f"{len(found)} `# type: ignore` comments, more than {LIMIT}:\n{listed}"


def test_each_type_ignore_names_its_code_and_says_why() -> None:
    bare = [f"{name}:{line}" for name, line, codes, _ in package_ignores() if codes is None]
    unexplained = [f"{name}:{line}" for name, line, codes, reason in package_ignores() if codes and not reason]
    assert bare == [], f"a `# type: ignore` without its error code ([code]): {bare}"
    assert unexplained == [], f"a `# type: ignore[code]` without a reason after it: {unexplained}"


def test_only_comments_count() -> None:
    source = '''"""A docstring that says # type: ignore."""
x = "# type: ignore"  # type: ignore[assignment]  # the stub is wrong
y = f(x)  # noqa: E501  # type: ignore
z = g(x)  #type:ignore[union-attr,arg-type]
'''
    assert ignores(source) == [
        ("<source>", 2, "assignment", "the stub is wrong"),
        ("<source>", 3, None, ""),
        ("<source>", 4, "union-attr,arg-type", ""),
    ]
