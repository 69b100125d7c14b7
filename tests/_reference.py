"""Independent reference implementations of the specification's grid rules, for tests:
written from the specification, not from the package, so tests compare two codings."""

from __future__ import annotations

from collections import deque


def bfs_path_exists(grid, src=(0, 0), dst=None):
    """Own 4-connected BFS over non-H cells."""
    h, w = len(grid), len(grid[0])
    dst = (h - 1, w - 1) if dst is None else dst
    if grid[src[0]][src[1]] == "H" or grid[dst[0]][dst[1]] == "H":
        return False
    seen, queue = {src}, deque([src])
    while queue:
        r, c = queue.popleft()
        if (r, c) == dst:
            return True
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < h and 0 <= nc < w and (nr, nc) not in seen and grid[nr][nc] != "H":
                seen.add((nr, nc))
                queue.append((nr, nc))
    return False


def flip(grid, cells):
    rows = [list(r) for r in grid]
    for r, c in cells:
        assert rows[r][c] in "FH", f"flip of non-F/H cell ({r},{c})={rows[r][c]}"
        rows[r][c] = "H" if rows[r][c] == "F" else "F"
    return tuple("".join(r) for r in rows)


def holm(p):
    """Holm's adjustment from its definition: the i-th smallest of the m defined
    p-values becomes max over j <= i of min(1, (m - j + 1) p_(j)); NaN stays NaN."""
    import math

    defined = sorted((v, i) for i, v in enumerate(p) if not math.isnan(v))
    m, out = len(defined), [math.nan] * len(p)
    for k, (_, i) in enumerate(defined):
        out[i] = max(min(1.0, (m - j) * defined[j][0]) for j in range(k + 1))
    return out
