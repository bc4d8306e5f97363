"""The oracle of analysis/tests/inference_scipy.rs: SciPy's k-sample Anderson-Darling test
(Scholz and Stephens 1987, midranks) on two samples read as JSON from stdin,
{"a": [...], "b": [...], "permutations": N}. Prints {"statistic": A2akN, "p_permutation": p}:
the raw statistic, recovered from SciPy's standardised one with the variance formula of
Scholz and Stephens, and SciPy's p-value by permuting single observations.
"""
import json
import math
import sys

import numpy as np
from scipy import stats

req = json.load(sys.stdin)
a, b = np.array(req["a"]), np.array(req["b"])
res = stats.anderson_ksamp([a, b], midrank=True)
# scipy reports (A2akN - (k - 1)) / sigma_N; sigma_N depends on the sample sizes only.
k, n = 2, np.array([len(a), len(b)], dtype=float)
N = n.sum()
H = (1.0 / n).sum()
hs_cs = (1.0 / np.arange(N - 1, 1, -1)).cumsum()
h = hs_cs[-1] + 1
g = (hs_cs / np.arange(2, N)).sum()
A = (4 * g - 6) * (k - 1) + (10 - 6 * g) * H
B = (2 * g - 4) * k**2 + 8 * h * k + (2 * g - 14 * h - 4) * H - 8 * h + 4 * g - 6
C = (6 * h + 2 * g - 2) * k**2 + (4 * h - 4 * g + 6) * k + (2 * h - 6) * H + 4 * h
D = (2 * h + 6) * k**2 - 4 * h * k
sigmasq = (A * N**3 + B * N**2 + C * N + D) / ((N - 1.0) * (N - 2.0) * (N - 3.0))
raw = res.statistic * math.sqrt(sigmasq) + (k - 1)
perm = stats.anderson_ksamp(
    [a, b], midrank=True,
    method=stats.PermutationMethod(n_resamples=req["permutations"], random_state=1),
)
json.dump({"statistic": raw, "p_permutation": float(perm.pvalue)}, sys.stdout)
