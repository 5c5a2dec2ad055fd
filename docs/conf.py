"""Sphinx configuration of the minilazy documentation: the course, the spec and the API.

Build it with warnings as errors, as ``nox -s docs`` does::

    python -m sphinx -W -b html docs docs/_build/html

The tutorials (``docs/tutorials`` is a link to the repository's ``tutorials/``) are MyST
notebooks that MyST-NB executes at every build; a cell that fails fails the build.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

# Document the installed minilazy; fall back to the checkout's src/ only when none is importable
# (the notebook kernels inherit PYTHONPATH, so the tutorials then run against it too).
if importlib.util.find_spec("minilazy") is None:
    SRC = str(ROOT / "src")
    sys.path.insert(0, SRC)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
# Quiet the debugger's "frozen modules" notice that every notebook kernel would print.
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
# The tutorials compile and time their own programs: none comes from an earlier build's
# persistent compile cache (the kernels inherit this; tutorial 3 turns it on in a temp dir).
os.environ.setdefault("MINILAZY_CACHE_DIR", "")

import minilazy  # noqa: E402  (after the path set-up above)

project = "minilazy"
author = "the minilazy authors"
copyright = "the minilazy authors"  # noqa: A001  (Sphinx's name for it)
release = version = minilazy.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "minilazy_docs",
]

root_doc = "index"
exclude_patterns = [
    "_build",
    "_generated",  # pages other tools write, pulled in by the generated-include directive
    "tutorials/solutions",  # instructors only: never part of the student site
    "mywork",  # a student's skeleton, if made inside the docs tree
    "Thumbs.db",
    ".DS_Store",
]
templates_path = ["_templates"]

# -- MyST and notebook execution ----------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"  # every build runs every tutorial: the course can never go stale
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True  # and says why, in the build log
nb_execution_timeout = 300  # seconds per notebook (they take a few)
# Tutorial 12 runs PyTorch (the torch extra); without it the page shows its code, and says so.
nb_execution_excludepatterns = [] if importlib.util.find_spec("torch") else [
    "tutorials/12_how_pytorch_xla_works.md"]
nb_merge_streams = True

# -- API reference -----------------------------------------------------------------------------
autosummary_generate = True
# Graph/graph and Metrics/metrics would share a file name on case-insensitive file systems.
autosummary_filename_map = {"minilazy.Graph": "minilazy.Graph-class",
                            "minilazy.Metrics": "minilazy.Metrics-class"}
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # dataclass fields: a field list, not duplicate attribute entries

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"minilazy {release}"
html_theme_options = {
    "description": "LazyTensor, small and complete: record eager code, compile it with XLA.",
    "fixed_sidebar": True,
    "page_width": "1140px",  # room for 100-column code and IR text (in the smaller code font)
    "sidebar_width": "240px",
}
html_static_path = ["_static"]
html_css_files = ["minilazy.css"]
