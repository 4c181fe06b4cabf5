"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 3 (App. C.2): statistical error of FedProx
with the adaptive lam of Thm 1 against GlobalTrain and LocalTrain, over heterogeneity R."""

from figures.core import Caption, Output, register
from figures.p004_common import METHODS, NOTES, P004, caption_params
from figures.p004_fig1a import error_vs_R
from montecarlo.paper004 import adaptive_lambda


@register("p004-fig3", paper="004", title="FedProx with the adaptive lam of Thm 1 vs "
          "GlobalTrain and LocalTrain", source=f"{P004}, Fig. 3 (App. C.2), Thm 1")
def make(ctx):
    fig, table, s = error_vs_R(ctx, methods=METHODS[:2], adaptive=True)
    params = caption_params(s)
    params["adaptive λ values"] = [float(v) for v in adaptive_lambda(s["R"])]
    return Output(fig, table, Caption(
        "Paper 004 Fig. 3: FedProx with the adaptive λ of Thm 1 against R",
        "As p004-fig1a, with only GlobalTrain, LocalTrain and FedProx at the λ Thm 1 "
        "prescribes for each R (listed below).",
        params, notes=list(NOTES)))
