"""Sphinx helpers of the minilazy docs: pages filled by other tools, and an API coverage check.

``generated-include``
    Include a file that some other step writes (the conformance matrix, the benchmark tables
    and plot), or, while that file does not exist, show the directive's own content as a note
    (nothing at all when the directive has no content). Either way the page builds without a
    warning, and Sphinx re-reads it at every build, so a file that appears or changes shows up::

        ```{generated-include} ../benchmarks/results/results.md
        Run `nox -s benchmarks` to measure and write the tables.
        ```

    The path is relative to the page (or to the docs folder when it starts with ``/``) and may
    lie outside the docs folder. A ``.md`` file is parsed as MyST Markdown, headings included
    (keep it free of a top-level ``#`` title: the page has one; images in it resolve relative to
    the page, so include a plot as its own ``generated-include``); a ``.svg``, ``.png``, ``.jpg``
    or ``.gif`` file becomes an image.

API coverage
    Every name in ``minilazy.__all__`` must be documented somewhere as ``minilazy.<name>``; a
    name that is not is reported as a warning, which ``-W`` turns into a failed build. A new
    public function therefore cannot land without its page.
"""

from __future__ import annotations

import os
import re
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)
IMAGES = (".svg", ".png", ".jpg", ".jpeg", ".gif")
HEADING = re.compile(r"^(#{1,6})(\s|$)")


class GeneratedInclude(SphinxDirective):
    """``generated-include PATH``: PATH's Markdown if it exists, else this directive's content."""

    required_arguments = 1
    has_content = True

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0], self.env.docname)
        # Depend on the file even while it is missing: the page is then re-read at every build.
        self.env.note_dependency(path)
        if not os.path.isfile(path):
            if not self.content:
                return []
            note = nodes.note()
            note += nodes.paragraph(text=f"Not generated yet: {rel} does not exist in this build.")
            self.state.nested_parse(self.content, self.content_offset, note)
            return [note]
        if path.lower().endswith(IMAGES):
            return [nodes.image(uri=self.arguments[0], alt=os.path.basename(path))]
        with open(path, encoding="utf-8") as f:
            lines = relevel(f.read().splitlines())
        container = nodes.container(classes=["generated-include"])
        self.state.nested_parse(StringList(lines, source=path), 0, container, match_titles=True)
        return list(container.children)


def relevel(lines: list[str], top: int = 2) -> list[str]:
    """Shift Markdown headings so that the highest becomes level ``top`` (``##``).

    The including page has the ``#`` title, and MyST warns when a level is skipped, so the
    generated file's own choice of levels must not matter. Lines in code fences are left alone.

    Example:
        >>> relevel(["### A", "text", "#### B", "```", "# not a heading", "```"])
        ['## A', 'text', '### B', '```', '# not a heading', '```']
    """
    headings: list[tuple[int, int]] = []  # (line number, level)
    fence = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
        elif stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif (match := HEADING.match(line)) is not None:
            headings.append((i, len(match.group(1))))
    if not headings:
        return lines
    shift = top - min(level for _, level in headings)
    out = list(lines)
    for i, level in headings:
        out[i] = "#" * min(6, level + shift) + lines[i][level:]
    return out


def _check_api_coverage(app: Sphinx, env: BuildEnvironment) -> None:
    import minilazy

    documented = set(env.get_domain("py").objects)
    for name in minilazy.__all__:
        if f"minilazy.{name}" not in documented:
            logger.warning("minilazy.%s is public (in __all__) but documented nowhere: add it to "
                           "docs/api.md", name, type="minilazy", subtype="api")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive and the coverage check."""
    app.add_directive("generated-include", GeneratedInclude)
    app.connect("env-check-consistency", _check_api_coverage)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
