"""Load ``tools/lesson_site.py`` (the site's Sphinx extension) in a test."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from lesson_lib.site import ROOT

#: The extension's source file.
LESSON_SITE_PATH = ROOT / "tools" / "lesson_site.py"


def lesson_site() -> ModuleType:
    """``tools/lesson_site.py``, loaded as Sphinx loads it (it is not a package module)."""
    spec = importlib.util.spec_from_file_location("lesson_site", LESSON_SITE_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
