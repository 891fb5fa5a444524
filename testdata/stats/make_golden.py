#!/usr/bin/python3
"""Writes golden.json: reference values for analysis/stats from SciPy.

Run with Debian's python3-scipy (/usr/bin/python3 make_golden.py); the SciPy
version is recorded in the output. Vectors cover ties, zeros, n = 1, n = 2
and n >= 60. Holm, Benjamini-Hochberg, Wilson and kappa have no SciPy 1.10
function: they are computed here from their textbook formulas with NumPy and
SciPy's normal quantile, independently of the Go code.
"""
import json, math, sys, warnings
import numpy as np
import scipy
from scipy import stats

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261130)
out = {"scipy": scipy.__version__, "numpy": np.__version__, "cases": {}}
C = out["cases"]

def f(x):
    x = float(x)
    return None if math.isnan(x) else ("inf" if math.isinf(x) else x)

# --- Wilcoxon signed-rank (zero_method='wilcox', correction=False) ---
W = {
    "exact_no_ties_n8": [1.8, -0.6, 2.3, 4.1, -1.2, 0.7, 3.3, 5.0],
    "exact_ties_n10": [1, 2, 2, -3, 3, 3, 4, -1, 5, 6],
    "zeros_n12": [0, 1, -2, 3, 0, 4, 5, -6, 7, 8, 0, 2],
    "n1": [2.5],
    "n2": [1.0, -3.0],
    "approx_ties_n60": list(np.round(rng.normal(0.3, 1, 60), 1)),
    "language_gains_n18": list(np.round(rng.normal(0.05, 0.04, 18), 3)),
}
for name, d in W.items():
    d = [float(v) for v in d]
    for mode in ["auto", "exact", "approx"]:
        try:
            r = stats.wilcoxon(d, zero_method="wilcox", correction=False, mode=mode)
            C[f"wilcoxon/{name}/{mode}"] = {"d": d, "T": f(r.statistic), "p": f(r.pvalue)}
        except ValueError as e:
            C[f"wilcoxon/{name}/{mode}"] = {"d": d, "error": str(e)}

# --- correlations ---
X = {
    "n2": ([1.0, 2.0], [3.0, 1.0]),
    "n10": ([0.42, 0.55, 0.61, 0.38, 0.70, 0.66, 0.52, 0.47, 0.73, 0.58], [31, 24, 22, 35, 18, 20, 27, 29, 15, 25]),
    "ties12": ([1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 7, 8], [2, 1, 3, 3, 5, 4, 6, 6, 7, 9, 8, 8]),
    "n60": (list(rng.normal(0, 1, 60)), None),
    "perfect40": (list(range(40)), list(range(40))),
    "near40": (list(range(40)), list(range(39)) + [38.5]),
}
x60 = np.array(X["n60"][0]); X["n60"] = (list(x60), list(0.4 * x60 + rng.normal(0, 1, 60)))
X["near40"] = (list(range(40)), [float(v) for v in range(40)]); X["near40"][1][0], X["near40"][1][1] = 1.0, 0.0
for name, (x, y) in X.items():
    x = [float(v) for v in x]; y = [float(v) for v in y]
    r = stats.pearsonr(x, y); s = stats.spearmanr(x, y); k = stats.kendalltau(x, y)
    C[f"corr/{name}"] = {"x": x, "y": y, "pearson": [f(r[0]), f(r[1])], "spearman": [f(s.correlation), f(s.pvalue)], "kendall": [f(k.correlation), f(k.pvalue)]}

# --- McNemar (exact binomial and chi-square) ---
for b, c in [(0, 0), (1, 0), (10, 2), (30, 45), (3, 3), (120, 80), (0, 7)]:
    n = b + c
    exact = 1.0 if n == 0 else stats.binomtest(min(b, c), n, 0.5).pvalue
    chi = {}
    for corr in [True, False]:
        if n == 0:
            chi[str(corr)] = [0.0, 1.0]
        else:
            d = abs(b - c) - (1 if corr else 0)
            d = max(d, 0)
            st = d * d / n
            chi[str(corr)] = [st, f(stats.chi2.sf(st, 1))]
    C[f"mcnemar/{b}_{c}"] = {"b": b, "c": c, "exact": f(exact), "chi2": chi}

# --- Fisher exact and two-proportion z ---
# The second line: tables whose probability ties another table's or the
# mode's (equal margins), where a too-tight tolerance drops the tie.
for t in [(3, 1, 1, 3), (10, 0, 2, 8), (0, 5, 0, 5), (12, 5, 29, 2), (355, 145, 208, 292), (1, 0, 0, 0), (114, 386, 259, 241),
          (3, 23, 0, 8), (37, 21, 41, 17), (0, 55, 21, 34), (5, 5, 5, 5), (4, 6, 6, 4), (2, 8, 8, 2), (30, 20, 20, 30), (7, 3, 3, 7), (60, 40, 40, 60)]:
    a, b, c, d = t
    orr, p = stats.fisher_exact([[a, b], [c, d]])
    C[f"fisher/{a}_{b}_{c}_{d}"] = {"table": t, "odds": f(orr), "p": f(p)}
for k1, n1, k2, n2 in [(259, 500, 114, 500), (50, 100, 50, 100), (0, 10, 3, 10), (208, 500, 355, 500)]:
    p1, p2, pool = k1 / n1, k2 / n2, (k1 + k2) / (n1 + n2)
    se = math.sqrt(pool * (1 - pool) * (1 / n1 + 1 / n2))
    z = (p1 - p2) / se
    C[f"twoprop/{k1}_{n1}_{k2}_{n2}"] = {"k1": k1, "n1": n1, "k2": k2, "n2": n2, "z": z, "p": f(2 * stats.norm.sf(abs(z)))}

# --- Wilson (formula with SciPy's normal quantile) ---
for k, n in [(0, 10), (10, 10), (5, 10), (355, 500), (1, 1), (0, 1), (257, 2619)]:
    z = stats.norm.ppf(0.975)
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    C[f"wilson/{k}_{n}"] = {"k": k, "n": n, "lo": max(0.0, centre - half), "hi": min(1.0, centre + half)}

# --- Holm and Benjamini-Hochberg (formulas) ---
for name, p in {"six": [0.01, 0.04, 0.03, 0.005, 0.2, 0.04], "one": [0.3], "ties60": list(np.round(rng.uniform(0, 0.2, 60), 3))}.items():
    p = np.array(p, dtype=float); m = len(p); o = np.argsort(p, kind="stable")
    holm = np.empty(m); run = 0.0
    for j, i in enumerate(o):
        run = max(run, min(1.0, (m - j) * p[i])); holm[i] = run
    bh = np.empty(m); run = 1.0
    for j in range(m - 1, -1, -1):
        i = o[j]; run = min(run, min(1.0, m * p[i] / (j + 1))); bh[i] = run
    C[f"adjust/{name}"] = {"p": list(p), "holm": list(holm), "bh": list(bh)}

# --- exact paired permutation (sign flips of the mean difference) ---
for name, (x, y) in {
    "n8": ([1, 1, 0, 1, 1, 0, 1, 1], [0, 1, 0, 0, 1, 0, 0, 1]),
    "n10": ([0.9, 0.4, 0.6, 0.8, 0.3, 0.7, 0.5, 0.6, 0.2, 0.9], [0.5, 0.4, 0.2, 0.9, 0.1, 0.3, 0.5, 0.2, 0.4, 0.6]),
    "n12ties": ([1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1], [0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0]),
}.items():
    x = np.array(x, float); y = np.array(y, float)
    r = stats.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis), permutation_type="samples",
                               n_resamples=np.inf, alternative="two-sided", vectorized=True)
    C[f"perm/{name}"] = {"d": list(x - y), "mean": f(r.statistic), "p": f(r.pvalue)}

# --- exact independent-samples permutation (difference of means) ---
for name, (x, y) in {
    "ia11_dr4": ([0.12, 0.05, 0.20, -0.02, 0.08, 0.15, 0.03, 0.10, 0.07, 0.01, 0.09], [0.02, -0.05, 0.04, 0.00]),
    "n3_n3": ([1.0, 2.0, 3.0], [1.5, 2.5, 4.0]),
    "ties": ([0.1, 0.1, 0.2, 0.0], [0.1, 0.0, 0.0]),
}.items():
    x = np.array(x, float); y = np.array(y, float)
    r = stats.permutation_test((x, y), lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis),
                               permutation_type="independent", n_resamples=np.inf, alternative="two-sided", vectorized=True)
    C[f"perm2/{name}"] = {"a": list(x), "b": list(y), "diff": f(r.statistic), "p": f(r.pvalue)}

# --- Cohen's kappa (formula) ---
a = ["c", "c", "w", "w", "c", "a", "c", "w", "c", "c", "w", "a"]
b = ["c", "w", "w", "w", "c", "a", "c", "c", "c", "c", "w", "w"]
po = sum(i == j for i, j in zip(a, b)) / len(a)
pe = sum((a.count(k) / len(a)) * (b.count(k) / len(b)) for k in set(a))
C["kappa/12"] = {"a": a, "b": b, "kappa": (po - pe) / (1 - pe), "agree": po}

json.dump(out, open(sys.argv[1] if len(sys.argv) > 1 else "golden.json", "w"), indent=1)
print("wrote", len(C), "cases with scipy", scipy.__version__)
