"""``_warn.warn``: a warning is shown at the first frame outside the package, however deep in it the warning was
raised."""
import sys
import warnings

import pytest

from gpssm_np import _warn

# two functions whose code is the package's (compiled under a file name in its folder), the inner one warning
DEEP = compile("def inner():\n    warn('deep', UserWarning)\n\n\ndef outer():\n    inner()\n",
               _warn.PACKAGE_DIR + "deep_module.py", "exec")


def package_functions():
    namespace = {"warn": _warn.warn}
    exec(DEEP, namespace)
    return namespace


def test_a_warning_raised_two_package_frames_deep_names_the_callers_line():
    outer = package_functions()["outer"]
    with pytest.warns(UserWarning, match="deep") as caught:
        outer()
        line = sys._getframe().f_lineno - 1  # the line of the call above
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_where_every_frame_is_the_packages_the_outermost_frame_is_named(monkeypatch):
    monkeypatch.setattr(_warn, "PACKAGE_DIR", "")  # every file is the package's
    frame = sys._getframe()
    while frame.f_back is not None:
        frame = frame.f_back
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        package_functions()["outer"]()
    assert [w.filename for w in caught] == [frame.f_code.co_filename]
