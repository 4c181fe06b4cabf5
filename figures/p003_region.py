"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 1 vs Cor. 3.1: where FTFA beats FedAvg.

FTFA's risk (Thm 1) against FedAvg's r^2 (Cor. 3.1) over gamma and the signal-to-noise ratio
r^2 / sigma^2. For Σ = I the boundary is ``r^2/sigma^2 = gamma / |gamma - 1|`` (least squares
below gamma = 1, min-norm interpolation above). Theory only: every point of the map is a
riskcalc limit; the boundary is checked against simulation in p003-thm1-ftfa.
"""

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from figures.linear import P003, R, TWO_POINT, XLABELS, spectrum_name


SNR_MIN, SNR_MAX = 0.1, 100.0


def boundary(gammas, spectrum):
    """Smallest r²/σ² at which FTFA beats FedAvg, per gamma (inf where it never does).

    FTFA's risk is B + σ² V with B, V independent of σ (Thm 1), so with r = 1 it beats
    FedAvg's r² exactly when r²/σ² > V / (r² - B).
    """
    res = riskcalc.limit("ftfa", gamma=gammas, r=R, sigma=1.0, spectrum=spectrum)
    gap = R ** 2 - res.bias
    with np.errstate(divide="ignore"):
        return np.where(gap > 0, res.variance / gap, np.inf)


@register("p003-region", paper="003", title="region where FTFA beats FedAvg (Thm 1, Cor. 3.1)",
          source=f"{P003}, Thm 1 and Cor. 3.1 (Sec. 3)")
def make(ctx):
    # Avoid gamma = 1 itself, where the ridgeless risk is infinite.
    gammas = np.concatenate([np.linspace(0.05, 0.97, ctx.pick(40, 120)),
                             np.linspace(1.03, 6.0, ctx.pick(60, 200))])
    table = Table()
    fig, axes = style.figure(2, sharey=True, height=2.8)
    colors = style.Colors(["FTFA better", "FedAvg better", "boundary (theory)"])
    panels = []
    for ax, sp in zip(axes[0], (None, TWO_POINT)):
        panel = spectrum_name(sp)
        panels.append(panel)
        snr_star = boundary(gammas, sp)
        table.add(panel, "boundary (theory)", "theory", "gamma", gammas, "snr", snr_star)
        top = np.full_like(gammas, SNR_MAX)
        low = np.minimum(snr_star, SNR_MAX)
        ax.fill_between(gammas, SNR_MIN, low, color=colors["FedAvg better"][0], alpha=0.35,
                        lw=0)
        ax.fill_between(gammas, low, top, color=colors["FTFA better"][0], alpha=0.35, lw=0)
        for side in (gammas < 1, gammas > 1):
            ax.plot(gammas[side], snr_star[side], color="black", lw=1.4)
        ax.set_ylim(SNR_MIN, SNR_MAX)
        ax.set_yscale("log")
        ax.set_xlabel(XLABELS["gamma"])
        ax.axvline(1.0, color="0.5", ls=":", lw=1)
    axes[0, 0].set_ylabel(XLABELS["snr"])
    style.label_panels(axes, panels)
    fig.legend(handles=[Patch(color=colors["FTFA better"][0], alpha=0.35, label="FTFA better"),
                        Patch(color=colors["FedAvg better"][0], alpha=0.35,
                              label="FedAvg better"),
                        Line2D([], [], color="black", label="boundary (theory)")],
               loc="outside lower center", ncol=3)
    return Output(fig, table, Caption(
        "Paper 003: where fine-tuned FedAvg (FTFA) beats FedAvg, over gamma and r²/σ²",
        "Shaded: the sign of FedAvg's risk r² minus FTFA's limiting risk (Thm 1; least "
        "squares for γ < 1). The black line is the smallest r²/σ² at which FTFA wins, "
        "r²/σ² = γ/|γ - 1| for Σ = I; FTFA never wins near γ = 1 (dotted). The CSV holds the "
        "boundary (inf where FTFA never wins).",
        {"r": R, "σ": "r / sqrt(r²/σ²)", "γ grid": "0.05 to 0.97 and 1.03 to 6",
         "γ points": len(gammas), "r²/σ² shown": [SNR_MIN, SNR_MAX],
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
