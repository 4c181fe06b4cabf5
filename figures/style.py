"""One style for every figure: colour-blind-safe palette, labelled axes, legends outside the data.

Palette: Okabe & Ito (2008), distinguishable under the common colour-vision deficiencies, with
a distinct marker per series so that nothing depends on colour alone. Theory is a line,
simulation a marker with its 95% interval as an error bar (a path over rounds: a line with a
shaded 95% band), a reference value a dashed horizontal line. Legends go below the panels so
they never cover data.
"""

from __future__ import annotations

from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")  # non-interactive: figures are files, never windows

import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

# pyplot is imported where a figure is drawn: at import it was ~0.3 s of CPU (a fifth) of
# ``riskcalc figures --list``, which draws nothing (fuzz42 misc F6).

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
             "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

RC = {
    "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
    "grid.linewidth": 0.5, "axes.spines.top": False, "axes.spines.right": False,
    "lines.linewidth": 1.6, "lines.markersize": 4.5, "errorbar.capsize": 2,
    "legend.frameon": False, "savefig.bbox": "tight", "figure.dpi": 100,
    "pdf.fonttype": 42,
}


@contextmanager
def context():
    """The rcParams of every figure."""
    from matplotlib import pyplot as plt

    with plt.rc_context(RC):
        yield


def save(fig, paths: dict, dpi: float = 150) -> None:
    """Write ``fig`` to ``paths`` (format -> path; the PNG at ``dpi``, the PDF at the figure's
    dpi), cropped to the drawn content plus ``savefig.pad_inches`` (``savefig.bbox`` "tight").

    ``savefig`` alone lays the figure out (constrained layout) and draws it with drawing
    disabled before it draws it for real, for each format. Here the layout and the tight box
    are computed once, by the renderer ``savefig`` would use for the PNG (Agg at ``dpi``: the
    PNG is the same to the byte), and frozen, so each format only draws. The PDF takes the
    PNG's layout (text measured by Agg at ``dpi`` instead of by the PDF backend: the same
    positions to a fraction of a pixel). Measured on the 23 quick figures, CPU seconds of the
    writing alone: PNG and PDF 38.0 -> 27.4, PNG alone 14.0 -> 12.9. The figure keeps no
    layout engine afterwards.
    """
    shown = fig.dpi
    fig.set_dpi(dpi)
    try:
        renderer = fig.canvas.get_renderer()        # Agg (this module's backend)
        engine = fig.get_layout_engine()
        if engine is not None:                      # a figure made without ``figure``
            engine.execute(fig)
        box = fig.get_tightbbox(renderer).padded(matplotlib.rcParams["savefig.pad_inches"])
    finally:
        fig.set_dpi(shown)
    fig.set_layout_engine(None)
    # The PDF without its CreationDate: the same figure and seed are the same bytes (as the
    # PNG, CSV and caption are), not a new file at every build.
    extra = {"png": {"dpi": dpi}, "pdf": {"metadata": {"CreationDate": None}}}
    for fmt, path in paths.items():
        fig.savefig(path, bbox_inches=box, **extra.get(fmt, {}))


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 3.2, height: float = 2.6,
           sharey: bool = False):
    """A figure of ``nrows x ncols`` panels, each ``width x height`` inches (axes array 2-d)."""
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows + 0.5),
                             squeeze=False, sharey=sharey, layout="constrained")
    return fig, axes


class Colors:
    """Series label -> (colour, marker), assigned in order of first use across the figure.

    ``same`` maps a label to another whose colour and marker it shares (e.g. a series' own
    M -> infinity limit drawn as a dashed reference line).
    """

    def __init__(self, labels=(), same=None):
        self._map = {}
        self._same = dict(same or {})
        for lab in labels:
            self[lab]

    def __getitem__(self, label):
        if label in self._same:
            return self[self._same[label]]
        if label not in self._map:
            i = len(self._map)
            self._map[label] = (OKABE_ITO[i % len(OKABE_ITO)], MARKERS[i % len(MARKERS)])
        return self._map[label]


def draw_panel(ax, table, panel: str, colors: Colors, *, logx=False, logy=False) -> None:
    """Draw every row of ``panel`` from the table (the CSV is what is drawn)."""
    # The panel's rows grouped in one pass, in table order (a select per series and kind
    # scanned the whole table each time: quadratic in the rows, 1 s of the 23 quick figures).
    groups = {}
    for r in table.rows:
        if r["panel"] == panel:
            groups.setdefault((r["series"], r["kind"]), []).append(r)
    for label in table.series():
        color, marker = colors[label]
        for kind in ("theory", "reference", "path", "simulation", "optimum"):
            rows = groups.get((label, kind))
            if not rows:
                continue
            x = np.array([r["x"] for r in rows])
            y = np.array([r["y"] for r in rows])
            if kind == "theory":
                ax.plot(x, y, color=color, zorder=2)
            elif kind == "reference":
                ax.axhline(y[0], color=color, ls="--", lw=1.2, zorder=1)
            elif kind == "optimum":
                ax.plot(x, y, ls="none", marker="*", ms=11, color=color, mec="black",
                        mew=0.6, zorder=4)
            elif kind == "path":
                lo = np.array([r["y_lo"] for r in rows])
                hi = np.array([r["y_hi"] for r in rows])
                ax.plot(x, y, color=color, zorder=2)
                if np.isfinite(lo).any():
                    ax.fill_between(x, lo, hi, color=color, alpha=0.2, lw=0, zorder=1)
            else:
                lo = np.array([r["y_lo"] for r in rows])
                hi = np.array([r["y_hi"] for r in rows])
                err = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
                has_err = np.isfinite(err).all()
                ax.errorbar(x, y, yerr=err if has_err else None, fmt=marker, color=color,
                            mfc="white" if (label, "theory") in groups else color,
                            mew=1.2, elinewidth=1.0, zorder=3, ls="none")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")


def legend(fig, table, colors: Colors, *, ncol: int | None = None, kinds=True) -> None:
    """One legend for the whole figure, below the panels: a handle per series (line for
    theory, marker for simulation), plus how to read lines and markers."""
    handles = []
    for label in table.series():
        color, marker = colors[label]
        kinds_of = {r["kind"] for r in table.rows if r["series"] == label} - {"optimum"}
        line = ("-" if kinds_of & {"theory", "path"} else
                "--" if "reference" in kinds_of else "none")
        mk = marker if "simulation" in kinds_of else None
        handles.append(Line2D([], [], color=color, ls=line, marker=mk,
                              mfc="white" if "theory" in kinds_of else color, label=label))
    all_kinds = {r["kind"] for r in table.rows}
    if kinds and {"theory", "simulation"} <= all_kinds:
        handles.append(Line2D([], [], color="0.4", ls="-", label="line: theory (riskcalc)"))
        handles.append(Line2D([], [], color="0.4", ls="none", marker="o", mfc="white",
                              label="marker: simulation, 95% CI"))
    optima = {r["x_name"] for r in table.rows if r["kind"] == "optimum"}
    if optima:
        name = {"lam": "λ*", "alpha": "α*"}.get(next(iter(optima)), "optimum")
        handles.append(Line2D([], [], color="0.4", ls="none", marker="*", ms=10, mec="black",
                              mew=0.6, label=f"star: {name}, minimum of the limit"))
    fig.legend(handles=handles, loc="outside lower center",
               ncol=ncol or min(len(handles), 4))


def label_panels(axes, titles) -> None:
    """Panel letters and titles: "(a) title"."""
    for i, (ax, t) in enumerate(zip(np.ravel(axes), titles)):
        ax.set_title(f"({chr(97 + i)}) {t}", loc="left")
