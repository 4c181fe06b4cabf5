"""Sphinx directives of the fedrisk documentation, generating content at build time.

* ``command-output``: runs ``riskcalc ARGS`` in-process and shows the command and its output;
* ``script-output``: runs a Python script of the repository and shows its output;
* ``methods-table``: the method registry (``riskcalc.METHODS``) as a table;
* ``paper-index``: the papers (``riskcalc.papers.PAPERS``): how outputs cite them, title,
  venue and the text file;
* ``markdown-include``: a Markdown file of the repository (e.g. ``paper_checks/REPORT.md``),
  whole or one ``## section``, converted by ``mdreport``;

and it keeps the API pages' lists out of the navigation tree (``navigation_without_api_lists``),
drawing the sidebar once for all the pages outside it (``shared_sidebars``).

The figure gallery is sphinx-gallery's (``docs/gallery``, configured in ``conf.py``).
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import posixpath
import shlex
import subprocess
import sys

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

import mdreport

ROOT = pathlib.Path(__file__).resolve().parents[2]


class CommandOutput(SphinxDirective):
    """``.. command-output:: predict ftfa --gamma 2 ...`` (the arguments after ``riskcalc``)."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        from riskcalc.cli import main

        args = shlex.split(self.arguments[0])
        out, err = io.StringIO(), io.StringIO()
        # Paths in the arguments are relative to the repository root.
        with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            status = main(args)
        if status != 0:
            raise self.error(f"riskcalc {self.arguments[0]} exited with {status}: "
                             f"{err.getvalue().strip()}")
        text = f"$ riskcalc {self.arguments[0]}\n{out.getvalue().rstrip()}"
        return [nodes.literal_block(text, text)]


class ScriptOutput(SphinxDirective):
    """``.. script-output:: docs/examples/x.py`` (path from the repository root), run in a
    fresh interpreter; a failing script fails the build."""

    required_arguments = 1

    def run(self):
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
        run = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise self.error(f"{self.arguments[0]} failed: {run.stderr.strip()[-2000:]}")
        text = f"$ python {self.arguments[0]}\n{run.stdout.rstrip()}"
        return [nodes.literal_block(text, text)]


class MethodsTable(SphinxDirective):
    """The built-in methods with their parameters and the result their limit comes from."""

    def run(self):
        import riskcalc
        from riskcalc.linear.methods import BUILTIN

        lines = [".. list-table::", "   :header-rows: 1", "",
                 "   * - name", "     - method", "     - parameters", "     - limit from"]
        for name in (n for n in riskcalc.METHODS if n in BUILTIN):
            m = riskcalc.METHODS[name]
            lines += [f"   * - ``{name}``", f"     - {m.title}",
                      "     - " + ", ".join(f"``{p}``" for p in ("gamma", "sigma")
                                            + m.parameters),
                      f"     - {mdreport.escape(m.reference)}"]
        return self.parse(lines)

    def parse(self, lines):
        node = nodes.container()
        self.state.nested_parse(StringList(lines, "methods-table"), self.content_offset, node)
        return node.children


class PaperIndex(MethodsTable):
    """The papers of ``riskcalc.papers.PAPERS`` as a table."""

    def run(self):
        from riskcalc.papers import PAPERS

        lines = [".. list-table::", "   :header-rows: 1", "",
                 "   * - paper", "     - cited as", "     - title", "     - venue",
                 "     - text file"]
        for p in PAPERS.values():
            lines += [f"   * - {p.id}", f"     - {mdreport.escape(p.short)}",
                      f"     - *{mdreport.escape(p.title)}*", f"     - {mdreport.escape(p.venue)}",
                      f"     - ``{p.file}``"]
        return self.parse(lines)


class MarkdownInclude(SphinxDirective):
    """``.. markdown-include:: paper_checks/REPORT.md`` (path from the repository root)."""

    required_arguments = 1
    option_spec = {"section": directives.unchanged}

    def run(self):
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        text = path.read_text()
        if "section" in self.options:
            text = mdreport.section(text, self.options["section"])
        self.state_machine.insert_input(mdreport.convert(text), str(path))
        return []


def navigation_without_api_lists(app, doctree):
    """The sidebar of every page (alabaster's ``toctree()``) resolves the whole navigation tree
    down to the current page: below "API reference" and "Every module", whose entries are
    autosummary's lists of the 350 generated pages, all of them, on each page. The sidebar
    shows the Reference entries one level deep (``:maxdepth: 1`` in index.rst), so none of that
    is drawn; it only marked the entry above a generated page as ``current``, a class
    alabaster's style does not use (about 3 s of the build's CPU for the sidebars; the pages'
    hidden autosummary lists were resolved in full too). Each document's entry in the
    navigation tree (``env.tocs``) drops those lists' toctree nodes once Sphinx has collected
    it; the links between pages (``env.toctree_includes``: previous, next, every page
    included) are kept, and the HTML only loses that class on the generated pages."""
    from sphinx.ext.autosummary import autosummary_toc

    lists = [node["includefiles"] for toc in doctree.findall(autosummary_toc)
             for node in toc.findall(addnodes.toctree)]
    entry = app.env.tocs.get(app.env.docname) if lists else None
    for node in [] if entry is None else list(entry.findall(addnodes.toctree)):
        if node["includefiles"] in lists:
            parent = node.parent
            parent.remove(node)
            if isinstance(parent, nodes.bullet_list) and not parent.children \
                    and parent.parent is not None:
                parent.parent.remove(parent)


def shared_sidebars(app, pagename, templatename, context, doctree):
    """A page the navigation tree does not reach (the 350 generated API pages, see
    ``navigation_without_api_lists``) has no entry of the sidebar's tree marked ``current``
    and no branch opened for it, so Sphinx's sidebar (``toctree()``) differs between two such
    pages only by its links, relative to the page's directory. It is drawn once per directory
    and arguments and reused (about 2 s of the build's CPU): the same HTML."""
    toctree, env = context.get("toctree"), app.env
    if toctree is None or pagename in reached(env):
        return
    directory = posixpath.dirname(app.builder.get_target_uri(pagename))
    drawn = env.fedrisk_sidebars

    def shared(**kwargs):
        key = (directory, tuple(sorted(kwargs.items())))
        if key not in drawn:
            drawn[key] = toctree(**kwargs)
        return drawn[key]

    context["toctree"] = shared


def reached(env):
    """The documents the navigation tree (``env.tocs``) reaches from the root document, hidden
    toctrees included (a page some sidebar opens is never shared), computed once per build."""
    if getattr(env, "fedrisk_reached", None) is None:
        env.fedrisk_reached, env.fedrisk_sidebars = set(), {}
        todo = [env.config.root_doc]
        while todo:
            doc = todo.pop()
            if doc in env.fedrisk_reached or doc not in env.tocs:
                continue
            env.fedrisk_reached.add(doc)
            todo += [ref for node in env.tocs[doc].findall(addnodes.toctree)
                     for _, ref in node["entries"]]
    return env.fedrisk_reached


def forget_sidebars(app, builder):
    """A new build (``write-started``) computes its own tree and sidebars."""
    app.env.fedrisk_reached = app.env.fedrisk_sidebars = None


def setup(app):
    # After Sphinx's own collector of the navigation tree (priority 500).
    app.connect("doctree-read", navigation_without_api_lists, priority=600)
    app.connect("write-started", forget_sidebars)
    app.connect("html-page-context", shared_sidebars)
    app.add_directive("command-output", CommandOutput)
    app.add_directive("script-output", ScriptOutput)
    app.add_directive("methods-table", MethodsTable)
    app.add_directive("paper-index", PaperIndex)
    app.add_directive("markdown-include", MarkdownInclude)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
