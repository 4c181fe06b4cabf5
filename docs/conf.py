"""Sphinx configuration of the fedrisk documentation (``sphinx-build -W -b html docs OUT``)."""

import gc
import os
import pathlib
import sys
import warnings

import matplotlib

matplotlib.use("Agg")

# numpydoc's signature pass reads the raw docstrings and warns about the ERRATA sections that
# errata_into_notes (below) keeps in the rendered pages.
warnings.filterwarnings("ignore", message="Unknown section Errata")

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE / "_ext")]

from riskcalc import __version__  # noqa: E402  (after the path above)

project = "fedrisk"
author = "the fedrisk developers"
copyright = "2026, the fedrisk developers"
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "fedrisk_docs",
]

# The gallery: docs/gallery/*/plot_*.py, executed at build time (every quick figure), with
# downloadable .py and .ipynb. FEDRISK_GALLERY=PATTERN executes only the examples whose path
# matches the regular expression (the test suite runs the theory-only p003-region; the
# others then show their code without a picture).
sphinx_gallery_conf = {
    "examples_dirs": "gallery",
    "gallery_dirs": "auto_gallery",
    "filename_pattern": os.environ.get("FEDRISK_GALLERY", r"/plot_"),
    "within_subsection_order": "FileNameSortKey",
    # The examples call figures/ code that can change while the example files do not:
    # always rerun rather than trust the checksums of the example files.
    "run_stale_examples": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "reset_modules": ("matplotlib",),
}

templates_path = ["_templates"]
exclude_patterns = ["_build", "examples", "gallery"]
autosummary_generate = True
autosummary_imported_members = False
# A page's table of contents without an entry per documented object: only alabaster's unused
# local-toc sidebar would show them (the HTML is identical without), and every page rendered
# its table anew (get_doc_context, ~0.5 s of CPU).
toc_object_entries = False
autodoc_default_options = {"member-order": "bysource"}
# No PEP 484 type comments in the sources (annotations only): autodoc would otherwise parse the
# source of every documented function again, looking for one (~2,400 parses).
autodoc_use_type_comments = False
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
html_theme = "alabaster"
# Wide enough for the code blocks and tables (alabaster's default 940 px cuts them off).
html_theme_options = {"page_width": "1180px", "body_max_width": "none"}
html_static_path = []


def errata_into_notes(app, what, name, obj, options, lines):
    """Keep the ERRATA sections of the docstrings (``riskcalc.minimax``): numpydoc knows no such
    section and would drop it, so it becomes a paragraph of the Notes section."""
    for i in range(len(lines) - 1):
        if lines[i].strip().upper() == "ERRATA" and set(lines[i + 1].strip()) == {"-"}:
            has_notes = any(line.strip() == "Notes" for line in lines[:i])
            lines[i:i + 2] = ([] if has_notes else ["Notes", "-----"]) + ["**Errata.**", ""]
            return


def numpydoc_template_once():
    """numpydoc's ``get_doc_object`` compiles its docstring template anew for every docstring
    (a fresh jinja environment per call: some 4,300 compilations, ~7 s of CPU in this build).
    ``numpydoc.numpydoc`` calls it through a module global that its ``setup`` offers to replace
    (parameter ``get_doc_object_``); the replacement lets numpydoc compile the template on the
    first call per builder (None for the signature pass), then hands that template to
    numpydoc's own ``docscrape.get_doc_object`` with its Sphinx classes: the same output."""
    import numpydoc.numpydoc
    from numpydoc import docscrape, docscrape_sphinx

    original, templates = docscrape_sphinx.get_doc_object, {}
    if getattr(numpydoc.numpydoc, "get_doc_object", None) is not original:
        return      # another numpydoc layout: keep its own (slower) path

    def get_doc_object(obj, what=None, doc=None, config=None, builder=None):
        config = {} if config is None else config
        if templates.get(id(builder)) is None:
            # A numpydoc that does not leave its template in config keeps its own path.
            out = original(obj, what, doc, config=config, builder=builder)
            templates[id(builder)] = config.get("template")
            return out
        config["template"] = templates[id(builder)]
        return docscrape.get_doc_object(obj, what, doc, config=config,
                                        class_doc=docscrape_sphinx.SphinxClassDoc,
                                        func_doc=docscrape_sphinx.SphinxFunctionDoc,
                                        obj_doc=docscrape_sphinx.SphinxObjDoc)

    numpydoc.numpydoc.get_doc_object = get_doc_object


def stem_each_word_once():
    """The search index stems every word of every page anew (the pure-Python snowball stemmer,
    memoized by Sphinx per page only): about 70,000 calls, ~1.3 s of CPU in this build, for a few
    thousand distinct words. The stem of a word depends on the word alone, so each is stemmed
    once per build process: the same index."""
    from sphinx.search.en import SearchEnglish

    original = SearchEnglish.stem
    if getattr(original, "stems", None) is not None:
        return
    stems = {}

    def stem(self, word):
        if word not in stems:
            stems[word] = original(self, word)
        return stems[word]

    stem.stems = stems
    SearchEnglish.stem = stem


def definitions_on_demand():
    """Sphinx's source analysis (``sphinx.pycode``) reads each documented module twice: its
    syntax tree for the attribute comments and the order of definitions (which autodoc and
    autosummary use), then its tokens for the line ranges of every definition
    (``ModuleAnalyzer.find_tags``), which only ``literalinclude :pyobject:`` and
    ``sphinx.ext.viewcode`` read - neither is used here. The token pass of the 332 modules
    (pure-Python tokenizing: 2.6 s of CPU alone, against 1.1 s for the syntax trees) runs when
    ``find_tags`` is first asked instead: the same pages, and the same line ranges for a page
    that asks for them."""
    from sphinx.pycode import ModuleAnalyzer, parser

    if getattr(parser.Parser.parse, "on_demand", False):
        return
    needed = ("parse_comments", "parse_definition")
    if not all(hasattr(parser.Parser, name) for name in needed) \
            or not hasattr(parser, "DefinitionFinder") or not hasattr(parser, "filter_whitespace"):
        return      # another Sphinx layout: keep its own (slower) path
    found = ModuleAnalyzer.find_tags

    def parse(self):
        self.parse_comments()

    def find_tags(self):
        self.analyze()
        if not getattr(self, "definitions_found", False):
            finder = parser.DefinitionFinder(parser.filter_whitespace(self.code).splitlines(True))
            finder.parse()
            self.tags, self.definitions_found = finder.definitions, True
        return found(self)

    parse.on_demand = True
    parser.Parser.parse = parse
    ModuleAnalyzer.find_tags = find_tags


def skip_lookups_that_cannot_match(app, builder):
    """The Python domain resolves a reference not found by its full name by a "fuzzy" search:
    every object name ending in ``.NAME``. The type annotations of the signatures make 5,615
    such searches (``float``, ``int``, ``str``, ``numpy.ndarray``...: names documented nowhere
    here), each scanning all of the objects, and none finds anything. Every name the domain
    would accept, exact or fuzzy, ends in the last dotted part of ``NAME``; when no documented
    object ends so, the answer is no object, given here without the search. Connected once
    reading is over (``write-started``), when the objects no longer change: the same links."""
    domain = app.env.get_domain("py")
    find_obj, objects = getattr(domain, "find_obj", None), getattr(domain, "objects", None)
    if find_obj is None or not isinstance(objects, dict):
        return      # another Sphinx layout: keep its own search
    last_parts = {name.rpartition(".")[2] for name in objects}

    def find(env, modname, classname, name, type, searchmode=0):
        if name.removesuffix("()").rpartition(".")[2] not in last_parts:
            return []
        return find_obj(env, modname, classname, name, type, searchmode)

    domain.find_obj = find


def no_debug_records(app):
    """Sphinx's logger accepts every debug message and leaves the choice to its handlers, which
    drop all below the build's verbosity (``-v``: above INFO only when given): each of the
    37,000 events emitted logs one, about 1 s of CPU in records no one reads. The logger now
    drops them at the handlers' own level: the same messages printed."""
    import logging

    from sphinx.util.logging import NAMESPACE, VERBOSITY_MAP

    logging.getLogger(NAMESPACE).setLevel(VERBOSITY_MAP[max(app.verbosity, 0)])


def fewer_garbage_collections():
    """The build allocates millions of small objects (docutils nodes with links to their
    parents: reference cycles), and Python's cycle collector, at its default thresholds
    (700, 10, 10), ran 8,248 times: 9.7 s of this build's 44 s of CPU (measured with
    ``gc.callbacks``). A collection every 50,000 net allocations instead (20 of those per
    older generation) leaves most objects to die by reference counting before a scan: 4.0 s
    of collection, the garbage still bounded (peak resident 368 -> 403 MB). The collector's
    time is all that changes: the same pages."""
    gc.set_threshold(50_000, 20, 20)


def setup(app):
    # Before numpydoc's own handler (priority 500).
    app.connect("autodoc-process-docstring", errata_into_notes, priority=400)
    numpydoc_template_once()
    stem_each_word_once()
    definitions_on_demand()
    fewer_garbage_collections()
    no_debug_records(app)
    app.connect("write-started", skip_lookups_that_cannot_match)
