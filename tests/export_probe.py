"""Imported only if a ``module:function`` text given as a policy spec were taken for code: the tests
check that it never is (tests/test_export.py)."""

IMPORTED = True


def make():
    raise AssertionError("a policy spec must never call a factory")
