"""How a test id a person copies names a report's test cases.

JUnit reports name a test case by `classname` and `name`, and each runner fills them its own way:

- pytest: classname `tests.test_calc.TestDiv` (the file's path with dots, then the classes), name
  `test_zero` or `test_div[6-3-2]`; people copy the node id `tests/test_calc.py::TestDiv::test_zero`.
- Maven Surefire: classname `com.acme.CalcTest`, name `divides` (JUnit 5 may add `()`); people
  write `com.acme.CalcTest.divides` or `com.acme.CalcTest#divides`.
- go-junit-report: classname the package `github.com/acme/calc`, name `TestDiv/by_zero`; people
  copy `TestDiv/by_zero` from `go test`'s output.
- jest-junit: classname and name both `Calc divides by zero` (the describe blocks and the title);
  Jest prints `Calc › divides by zero`.
- GitLab's parsed test report keeps the classname and name of the JUnit file it read.

So every test case has one key, its classname and name joined by a dot, and a test id is turned
into the same form: a pytest node id's file becomes dotted and loses `.py`, `::` and `#` become
dots, a trailing `()` goes, and Jest's ` › ` a space. A test id with no separator (`TestDiv/by_zero`,
`Calc divides by zero`) is matched against names alone. A parametrised test's brackets are kept as
they are, dots and all.
"""

from __future__ import annotations

_JEST_SEPARATOR = " \u203a "
# The endings that make a name more than itself: parameters (`[...]`) or JUnit 5's `()`.
_SPECIAL_ENDINGS = ("]", ")")


def _split_params(text: str) -> tuple[str, str]:
    """`test_div[6-3-2]` as (`test_div`, `[6-3-2]`): parameters are compared as written."""
    if text.endswith("]") and "[" in text:
        index = text.index("[")
        return text[:index], text[index:]
    return text, ""


def _dotted(base: str) -> str:
    if base.endswith("()"):
        base = base[:-2]
    if "::" in base:
        first, rest = base.split("::", 1)
        if first.endswith(".py"):
            first = first[:-3].replace("/", ".")
        base = f"{first}.{rest.replace('::', '.')}"
    return base.replace("#", ".")


def case_key(classname: str, name: str) -> str:
    """A test case's key: its classname and name joined by a dot (its name alone without a classname)."""
    if not name.endswith(_SPECIAL_ENDINGS):
        # Neither parameters nor a trailing (): most names, kept as they are (a report's hot path).
        return f"{classname}.{name}" if classname else name
    name_base, params = _split_params(name)
    if name_base.endswith("()"):
        name_base = name_base[:-2]
    return f"{classname}.{name_base}{params}" if classname else f"{name_base}{params}"


def named_key(test_id: str) -> str:
    """The key a test id as people write it stands for (`case_key`'s form)."""
    base, params = _split_params(test_id.strip().replace(_JEST_SEPARATOR, " "))
    return _dotted(base) + params


def is_bare_name(test_id: str) -> bool:
    """Whether a test id names a test by its name alone (no file, class or package before it):
    then it is matched against test cases' names."""
    base, _ = _split_params(test_id.strip())
    return "::" not in base and "#" not in base and "." not in base


def bare_name(name: str) -> str:
    """A test case's name as a bare test id is compared with it (Jest's separator a space)."""
    if not name.endswith(_SPECIAL_ENDINGS) and _JEST_SEPARATOR not in name:
        return name
    base, params = _split_params(name.replace(_JEST_SEPARATOR, " "))
    return (base[:-2] if base.endswith("()") else base) + params
