"""The extension tutorial (docs/extending.rst), end to end; run by the docs build."""

import pathlib
import sys

from scipy.optimize import minimize_scalar

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

# [register]
import riskcalc
import montecarlo
import shrunk_ftfa  # noqa: F401  (registers "shrunk_ftfa" on both sides)

res = riskcalc.limit("shrunk_ftfa", gamma=2.0, r=1.0, sigma=0.5, lam=[0.0, 1.0, 4.0])
print("bias    ", res.bias)
print("variance", res.variance)
# [/register]

# [check]
rows = montecarlo.check_method("shrunk_ftfa", reps=30)
for row in rows:
    if row["check"].startswith("simulation"):
        print(f"{row['check']:<20} {row['case']:<18} predicted {row['predicted']:.4f}  "
              f"simulated {row['simulated']:.4f} +- {row['se']:.4f}")
# [/check]

# [optimal]
gamma, r, sigma = 2.0, 1.0, 0.5
fedavg = riskcalc.limit("fedavg", gamma=gamma, r=r, sigma=sigma)
ftfa = riskcalc.limit("ftfa", gamma=gamma, r=r, sigma=sigma)
lam_star = ftfa.variance / (fedavg.bias - ftfa.bias)      # derived in the tutorial
numeric = minimize_scalar(
    lambda lam: riskcalc.limit("shrunk_ftfa", gamma=gamma, r=r, sigma=sigma, lam=lam).risk,
    bounds=(0.0, 10.0), method="bounded", options={"xatol": 1e-10}).x
assert abs(lam_star - numeric) < 1e-6, (lam_star, numeric)
best = riskcalc.limit("shrunk_ftfa", gamma=gamma, r=r, sigma=sigma, lam=lam_star).risk
rtfa = riskcalc.optimal_limit("rtfa", gamma=gamma, r=r, sigma=sigma).risk
print(f"lam* = {lam_star:.6f} (numeric {numeric:.6f}); risk {best:.6f}; "
      f"FedAvg {fedavg.risk:.6f}, FTFA {ftfa.risk:.6f}, RTFA at its lam* {rtfa:.6f}")
assert rtfa < best < min(fedavg.risk, ftfa.risk)
# [/optimal]
