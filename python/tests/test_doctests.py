"""The examples in the package's docstrings run (the extension module's classes are
compiled, so pytest's --doctest-modules does not find them: they are collected here)."""

import doctest
import inspect

import numpy
import pytest

import ostledb
import ostledb._errors


def docstrings():
    seen = {}
    for module in (ostledb, ostledb._errors):
        seen[module.__name__] = module.__doc__
    for name in ostledb.__all__:
        obj = getattr(ostledb, name)
        seen[f"ostledb.{name}"] = obj.__doc__
        if inspect.isclass(obj):
            for attr in vars(obj):
                doc = getattr(getattr(obj, attr), "__doc__", None)
                if doc and not attr.startswith("__"):
                    seen[f"ostledb.{name}.{attr}"] = doc
    return {k: v for k, v in seen.items() if v and ">>>" in v}


def test_there_are_examples():
    assert len(docstrings()) >= 15


@pytest.mark.parametrize("name", sorted(docstrings()))
def test_docstring_examples_run(name, db44_path):
    doc = docstrings()[name]
    globs = {"ostledb": ostledb, "np": numpy, "DB": str(db44_path)}
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
