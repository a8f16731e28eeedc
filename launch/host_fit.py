"""The fit behind launch/pytorch_host.py's host rows: a phase's host time over several block stacks as
launches x cost per class (least squares), pure Python (no torch, no numpy), so that it is tested on the
CPU machine (tests/launch/host_fit_test.py) and can be re-run over a saved --details file.

Classes, as the predictor charges them (src/program/host_costs.hpp): "gemm" (a GEMM launch), "attention"
(one fused attention call: F.scaled_dot_product_attention with its autograd node, whatever kernels it
launches) and "kernel" (any other kernel). The fit tries, in order:
  1. the three classes;
  2. gemm and kernel, with each attention call counted as a GEMM launch (the host rows before the
     attention class; attention then costs what a GEMM launch does);
  3. one figure for every class: the phase's time over its launches and calls.
A fit is taken when its normal equations are well conditioned and every figure is positive; the row's
"fit" text says which one was taken and its largest residual.
"""

CLASSES = ("gemm", "attention", "kernel")
# Normal equations whose determinant is below this share of the product of their diagonal (Hadamard's
# ratio: 1 for orthogonal columns, 0 for dependent ones) give no stable figures.
MIN_CONDITION = 1e-9


def solve(matrix, rhs):
    """x with matrix x = rhs, by Gaussian elimination with partial pivoting (matrix small and square)."""
    n = len(rhs)
    a = [list(row) + [b] for row, b in zip(matrix, rhs)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def determinant(matrix):
    n = len(matrix)
    a = [list(row) for row in matrix]
    det = 1.0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if a[pivot][col] == 0:
            return 0.0
        if pivot != col:
            a[col], a[pivot] = a[pivot], a[col]
            det = -det
        det *= a[col][col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n):
                a[r][c] -= f * a[col][c]
    return det


def least_squares(columns, ys):
    """Costs per column (lists of counts, one entry per stack) minimising the squared residuals, or None
    when the columns are (nearly) dependent or a cost is not positive."""
    normal = [[sum(p * q for p, q in zip(ci, cj)) for cj in columns] for ci in columns]
    diagonal = 1.0
    for i, row in enumerate(normal):
        diagonal *= row[i]
    if diagonal <= 0 or determinant(normal) <= MIN_CONDITION * diagonal:
        return None
    costs = solve(normal, [sum(c * y for c, y in zip(col, ys)) for col in columns])
    return costs if all(c > 0 for c in costs) else None


def largest_residual(columns, costs, ys):
    worst = 0.0
    for i, y in enumerate(ys):
        if y > 0:
            predicted = sum(col[i] * c for col, c in zip(columns, costs))
            worst = max(worst, abs(y - predicted) / y)
    return worst


def fit_phase(rows, collective_s):
    """Host seconds per launch of each class for one phase, from rows of (host_s, counts) (one row per
    stack; counts by class: gemm, attention, kernel, collective), after the collectives' host time at
    collective_s each. None when the phase launched nothing."""
    # A stack that launched nothing in the phase (the attention chain has no optimizer) says nothing of it.
    rows = [(host_s, counts) for host_s, counts in rows if any(counts.get(c, 0) for c in CLASSES)]
    ys = [host_s - counts.get("collective", 0) * collective_s for host_s, counts in rows]
    count = {c: [counts.get(c, 0) for _, counts in rows] for c in CLASSES}
    calls = sum(sum(v) for v in count.values())
    if calls == 0:
        return None
    if any(count["attention"]):
        costs = least_squares([count[c] for c in CLASSES], ys)
        if costs is not None:
            worst = largest_residual([count[c] for c in CLASSES], costs, ys)
            return {**dict(zip(CLASSES, costs)), "fit": f"fitted (gemm, attention, kernel), largest residual "
                                                        f"{100 * worst:.1f}%"}
    as_gemm = [g + a for g, a in zip(count["gemm"], count["attention"])]
    costs = least_squares([as_gemm, count["kernel"]], ys)
    if costs is not None:
        worst = largest_residual([as_gemm, count["kernel"]], costs, ys)
        why = " (attention taken as a GEMM launch: the three-class fit was unstable or negative)" if any(
            count["attention"]) else ""
        return {"gemm": costs[0], "attention": costs[0], "kernel": costs[1],
                "fit": f"fitted (gemm, kernel), largest residual {100 * worst:.1f}%{why}"}
    mean = sum(ys) / calls
    return {**dict.fromkeys(CLASSES, mean), "fit": "one figure for every class (the fit was unstable or negative)"}
