"""The figure framework: registry, build context, tidy data table, caption, and file writer.

A figure is a module of this package that decorates one function with ``@register(ID, ...)``;
the function takes a ``Context`` and returns an ``Output`` (a matplotlib figure, the ``Table``
it was drawn from, and a ``Caption``). ``build`` writes ``ID.png``, ``ID.pdf``, ``ID.csv`` and
``ID.txt`` (the caption) into the output directory (``formats``: the PNG or the PDF alone; an
earlier build's other image is removed unless its CSV and caption were the same).

Every plotted number comes from the table (figures draw with ``figures.style.draw_panel``,
which reads the table), so the CSV is exactly the data behind the picture. Simulations run
through ``montecarlo.runner.tasks.run_tasks`` with a JSON-lines cache per figure (``Context.run``):
a task is keyed by all its parameters and its seed, so a re-run with the same settings only
redraws, and a changed parameter recomputes only the tasks it touches.
"""

from __future__ import annotations

import csv
import importlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from figures import install
from figures.install import IMAGE_FORMATS
from riskcalc._validate import flag, one_of, path, positive_int
from montecarlo.runner.seeding import check_seed
from montecarlo.runner.tasks import run_tasks

# Figure modules, imported on first use of the registry (listing order of ``--list``).
MODULES = (
    "p003_thm1_ftfa", "p003_thm2_rtfa", "p003_cor31_local", "p003_thm3_maml",
    "p003_thm4_pfedme", "p003_region", "p003_optimal", "p003_maml_clients",
    "p003_finite_steps", "p003_finite_clients", "p000_fig1", "p004_fig1a", "p004_fig1d",
    "p004_fig2", "p004_fig3", "p004_fig5", "p001_fig2", "p000_logistic_theory",
    "p000_fig1_theory", "p004_rounds_drift", "p004_rounds_lam", "p004_fig2_theory",
    "p004_fig3_theory",
)

FIGURES: dict[str, "FigureSpec"] = {}

COLUMNS = ("panel", "series", "kind", "x_name", "x", "y_name", "y", "y_se", "y_lo", "y_hi",
           "reps")
# The columns a row may have no value in, empty in the CSV then: the error columns of a theory
# row, the x of a reference row (a horizontal line).
OPTIONAL = ("x", "y_se", "y_lo", "y_hi")
# How each kind of row is drawn (figures.style): a line, points with 95% error bars, a
# simulated mean along a path with a shaded 95% band, a horizontal reference line, or a
# distinguished point of the theory (a star: e.g. the minimum at the optimal lam*).
KINDS = ("theory", "simulation", "path", "reference", "optimum")


@dataclass(frozen=True)
class FigureSpec:
    """A registered figure: its id, paper, title, source reference and builder function."""

    id: str
    paper: str
    title: str
    source: str
    make: object


def register(fig_id: str, *, paper: str, title: str, source: str):
    """Decorator registering ``make(ctx) -> Output`` as figure ``fig_id``."""
    def deco(fn):
        if fig_id in FIGURES:
            raise RuntimeError(f"figure id {fig_id!r} registered twice")
        FIGURES[fig_id] = FigureSpec(fig_id, paper, title, source, fn)
        return fn
    return deco


def load_all() -> dict:
    """Import every figure module (registering it) and return the registry."""
    for name in MODULES:
        importlib.import_module(f"figures.{name}")
    return FIGURES


def get_figure(fig_id: str) -> FigureSpec:
    """The registered figure ``fig_id`` (ValueError listing the ids otherwise)."""
    load_all()
    if not one_of(fig_id, FIGURES):
        raise ValueError(f"unknown figure {fig_id!r}; known: {', '.join(FIGURES)} "
                         "(riskcalc figures --list)")
    return FIGURES[fig_id]


@dataclass
class Context:
    """What a figure builder may depend on besides its own constants.

    Attributes
    ----------
    fig_id : str
    quick : bool
        Smaller grids, dimensions and replicate counts (the CI mode); the caption states
        whichever values were used.
    seed : int
        Experiment seed (``montecarlo.runner.seeding``).
    cache_dir : Path or None
        Directory of the per-figure JSON-lines caches; None disables caching.
    n_jobs : int
        Worker processes of ``run_tasks``.
    progress : bool
        Progress bars on stderr.
    """

    fig_id: str
    quick: bool = False
    seed: int = 0
    cache_dir: Path | None = None
    n_jobs: int = 1
    progress: bool = False

    def pick(self, quick, full):
        """``quick`` in quick mode, ``full`` otherwise."""
        return quick if self.quick else full

    def cache(self, name: str | None = None):
        """The cache file ``name`` (default: this figure's; figures drawing the same
        experiment share one by name). None when caching is off."""
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{name or self.fig_id}{'-quick' if self.quick else ''}.jsonl"

    def run(self, fn, tasks, desc: str = "") -> list:
        """``montecarlo.runner.tasks.run_tasks`` with this figure's cache, workers and progress bar."""
        return run_tasks(fn, tasks, cache=self.cache(), n_jobs=self.n_jobs,
                         progress=self.progress, desc=f"{self.fig_id} {desc}".strip())

    def preset(self, name: str, overrides: dict, reps: int, trajectory: bool = False) -> list:
        """Rows of ``montecarlo.experiments.presets_run.run_preset`` (cached under the preset's
        name, so figures of one experiment share its runs)."""
        from montecarlo.experiments.presets_run import run_preset

        return run_preset(name, overrides, reps=reps, seed=self.seed, trajectory=trajectory,
                          n_jobs=self.n_jobs, cache=self.cache(name), progress=self.progress)


class Table:
    """Tidy rows ``COLUMNS``: one row per plotted point (see ``KINDS``)."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, panel: str, series: str, kind: str, x_name: str, x, y_name: str, y, *,
            se=None, lo=None, hi=None, reps=None) -> None:
        """Append points; ``x``, ``y`` and the optional arrays broadcast together."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        nan = np.nan
        cols = np.broadcast_arrays(*(np.asarray(v if v is not None else nan, dtype=float)
                                     for v in (x, y, se, lo, hi)))
        for xv, yv, sv, lv, hv in zip(*(np.atleast_1d(c) for c in cols)):
            self.rows.append({"panel": panel, "series": series, "kind": kind,
                              "x_name": x_name, "x": float(xv), "y_name": y_name,
                              "y": float(yv), "y_se": float(sv), "y_lo": float(lv),
                              "y_hi": float(hv), "reps": "" if reps is None else int(reps)})

    def select(self, **where) -> list[dict]:
        return [r for r in self.rows if all(r[k] == v for k, v in where.items())]

    def series(self) -> list[str]:
        """Series labels in order of first appearance."""
        return list(dict.fromkeys(r["series"] for r in self.rows))

    def panels(self) -> list[str]:
        return list(dict.fromkeys(r["panel"] for r in self.rows))

    def write(self, path) -> None:
        """The rows as CSV, numbers to 10 digits; a column without a value (``y_se``, ``y_lo``,
        ``y_hi`` of a theory row, or of one replicate; ``x`` of a reference line) is an empty
        cell, as ``reps`` (it was ``nan``, which reads as an estimate that failed)."""
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            for r in self.rows:
                w.writerow({k: ("" if k in OPTIONAL and v != v else
                                f"{v:.10g}" if isinstance(v, float) else v)
                            for k, v in r.items()})


def fmt(v) -> str:
    """A parameter value as the caption prints it."""
    if isinstance(v, (list, tuple, np.ndarray)):
        vals = list(np.ravel(v))
        if len(vals) > 6:
            return f"{fmt(vals[0])} to {fmt(vals[-1])} ({len(vals)} values)"
        return "{" + ", ".join(fmt(x) for x in vals) + "}"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return str(v)


@dataclass
class Caption:
    """What a reader needs to reproduce the figure.

    Attributes
    ----------
    title : str
        One line: paper, figure/theorem, what is plotted.
    text : str
        What the figure shows and how to read it (markers, lines, error bars).
    params : dict
        Every parameter, name -> value (the seed is added by ``build``).
    notes : list of str
        Choices the paper leaves open, errata, substitutions.
    """

    title: str
    text: str
    params: dict
    notes: list = field(default_factory=list)

    def render(self, fig: FigureSpec, table: Table, quick: bool) -> str:
        lines = [f"{fig.id}: {self.title}", "", self.text, "",
                 "Series: " + "; ".join(table.series()) + ".",
                 "Parameters: " + "; ".join(f"{k} = {fmt(v)}" for k, v in self.params.items())
                 + ".",
                 f"Mode: {'quick (reduced grids and replicates)' if quick else 'full'}.",
                 f"Source: {fig.source}."]
        lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


@dataclass
class Output:
    """What a figure builder returns (``text``: the rendered caption, set by ``draw``)."""

    figure: object
    table: Table
    caption: Caption
    text: str = ""


@dataclass
class Built:
    """Files written for one figure and its wall-clock build time."""

    id: str
    files: dict
    seconds: float
    output: Output


def draw(fig_id: str, *, quick: bool = False, seed: int = 0, cache_dir=None, n_jobs: int = 1,
         progress: bool = False) -> Output:
    """Draw figure ``fig_id`` in the figures' style and return it, the figure left open (what
    the documentation's gallery shows; ``build`` writes the files).

    Parameters
    ----------
    fig_id : str
        A registered id (``riskcalc figures --list``).
    quick : bool
        Reduced grids and replicates.
    seed : int
        Experiment seed (stated in the caption).
    cache_dir : path-like, optional
        Directory of the simulation caches (None: no caching).
    n_jobs, progress
        Passed to ``run_tasks``.

    Returns
    -------
    Output
        The matplotlib figure, the table it was drawn from and the caption, whose ``text``
        attribute is then the rendered caption (with the seed).
    """
    from figures import style

    spec = get_figure(fig_id)
    seed = check_seed(seed)
    quick, progress = flag("quick", quick), flag("progress", progress)
    # Checked here, not where a simulation first runs: a theory figure took n_jobs=0, and a
    # simulated one refused it as "jobs" after its theory lines were drawn.
    n_jobs = positive_int("n_jobs", n_jobs)
    cache_dir = None if cache_dir is None else folder("cache_dir", cache_dir)
    ctx = Context(fig_id, quick=quick, seed=seed, cache_dir=cache_dir,
                  n_jobs=n_jobs, progress=progress)
    with style.context():
        result = spec.make(ctx)
    result.caption.params["seed"] = seed
    result.text = result.caption.render(spec, result.table, quick)
    return result


def folder(name: str, value) -> Path:
    """``value`` as the Path of a folder (``riskcalc._validate.path``), not an existing file:
    ValueError naming ``name`` (``build(out_dir=FILE)`` was a FileExistsError from mkdir, as
    ``riskcalc figures --out FILE`` is not)."""
    out = path(name, value, "folder")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{name} {out}: exists and is not a folder (a file or a device); "
                         "give a folder name")
    return out


def image_formats(formats) -> tuple:
    """``formats`` (a sequence of ``IMAGE_FORMATS``, or a comma-separated string) checked, in
    the order of ``IMAGE_FORMATS``; a ValueError naming ``formats`` otherwise."""
    asked = [f.strip() for f in formats.split(",")] if isinstance(formats, str) else formats
    if not isinstance(asked, (list, tuple)) or not asked \
            or not all(isinstance(f, str) and f in IMAGE_FORMATS for f in asked):
        raise ValueError(f"formats: one or more of {', '.join(IMAGE_FORMATS)}, comma-separated; "
                         f"got {formats!r}")
    twice = [f for f in IMAGE_FORMATS if asked.count(f) > 1]
    if twice:       # was merged silently (a value given twice is refused elsewhere)
        raise ValueError(f"formats: {twice[0]} given twice: give each format once; got "
                         f"{formats!r}")
    return tuple(f for f in IMAGE_FORMATS if f in asked)


def build(fig_id: str, out_dir, *, quick: bool = False, seed: int = 0, cache: bool = True,
          cache_dir=None, n_jobs: int = 1, progress: bool = False,
          formats=IMAGE_FORMATS) -> Built:
    """Build figure ``fig_id`` into ``out_dir``: PNG, PDF, CSV and caption (TXT), written as a
    set (staged, then renamed together, or the previous set put back: ``install.install``;
    a directory in the place of one of its files is refused before the drawing). An image of a
    format not asked for, left by an earlier build, stays only if that build wrote the same CSV
    and caption (``install.stale_images``): the folder never holds a picture of other data
    than the CSV beside it.

    Parameters
    ----------
    fig_id : str
        A registered id (``riskcalc figures --list``).
    out_dir : path-like
        Created if missing.
    quick : bool
        Reduced grids and replicates.
    seed : int
        Experiment seed (stated in the caption).
    cache : bool
        Cache simulation tasks (in ``cache_dir``, default ``out_dir/.cache``).
    n_jobs, progress
        Passed to ``run_tasks``.
    formats : sequence of {"png", "pdf"}
        The images to write, at least one (default both; the CSV and the caption always). The
        PDF embeds its fonts (type 42) and costs about 0.5 s a figure, more than the PNG.
    """
    from matplotlib import pyplot as plt

    from figures import style

    formats = image_formats(formats)
    n_jobs = positive_int("n_jobs", n_jobs)     # before the folders are made (draw's check)
    out = folder("out_dir", out_dir)
    if cache_dir is not None and not flag("cache", cache):
        raise ValueError("cache_dir applies with cache=True only (cache=False caches nothing)")
    files = install.set_files(fig_id, out, formats)
    install.check_targets(files, out)    # before the work, not after it
    out.mkdir(parents=True, exist_ok=True)
    cdir = None
    if flag("cache", cache):        # cache="no" cached
        cdir = out / ".cache" if cache_dir is None else folder("cache_dir", cache_dir)
        cdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = draw(fig_id, quick=quick, seed=seed, cache_dir=cdir, n_jobs=n_jobs,
                  progress=progress)
    install.check_targets(files, out)   # again: the drawing may have taken minutes
    staging = Path(tempfile.mkdtemp(prefix=f".{fig_id}.", dir=out))
    try:
        staged = {ext: staging / path.name for ext, path in files.items()}
        with style.context():
            style.save(result.figure, {f: staged[f] for f in formats}, dpi=150)
        result.table.write(staged["csv"])
        staged["txt"].write_text(result.text)
        install.install(staged, files, install.stale_images(files, staged, formats), staging)
    finally:
        plt.close(result.figure)
        shutil.rmtree(staging, ignore_errors=True)
    return Built(fig_id, {k: os.fspath(v) for k, v in files.items()},
                 time.perf_counter() - t0, result)
