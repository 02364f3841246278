"""Warnings attributed to the user's code: :func:`warn`.

A warning raised deep in a fit (the default fit's stages call the floor, which calls the LGSSM's order choice) is
shown by Python at the frame ``stacklevel`` names; a fixed ``stacklevel``, counted for one call path, names a line of
the package on any longer one. :func:`warn` names the first frame outside the package instead: the user's line,
which says which of their calls warned (a ``warnings`` filter by module then matches the user's module).
"""
import os
import sys
import warnings

#: The package's folder: frames of files under it are the package's.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` shown at the first frame, going outwards from the caller, whose file is
    not in the package (the outermost frame where every frame is the package's)."""
    frame, level = sys._getframe(1), 2  # stacklevel 2: the caller of this function
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
