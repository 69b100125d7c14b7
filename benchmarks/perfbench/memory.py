"""Memory: the peak RSS of a subprocess running the full 50-seed text
``navigate`` (task defaults: ``omcd``; 5 epochs, 1 with ``--quick``), beside
a subprocess that runs a single episode (the fixed cost of importing the
package and Inspect).

A subprocess, because this process's own peak holds every earlier
measurement. The peak is the child's own VmHWM from ``/proc``; where /proc
is missing, ``os.wait4``'s ru_maxrss, which on Linux also counts the pages
the child inherited from this (large) process at spawn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SEEDS = 50

#: The child: one navigate run, then its wall time, episodes and VmHWM as JSON.
CHILD = r"""
import json, sys, time
from inspect_ai import eval as inspect_eval
from spatialstale_evals.navigate import navigate
epochs, limit, log_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start = time.perf_counter()
(log,) = inspect_eval(
    navigate(regime="L2", strategy="omcd", modality="text", epochs=epochs),
    model="spatialstale/observer", log_dir=log_dir, display="none", limit=limit or None,
)
assert log.status == "success", log.error
hwm = None
try:  # this process's own high-water mark (ru_maxrss would also count the parent's pages at spawn)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024 / 1e6
except OSError:
    pass
print(json.dumps({"seconds": time.perf_counter() - start, "episodes": len(log.samples), "vm_hwm_mb": hwm}))
"""


def run_child(epochs: int, limit: int, log_dir: Path) -> dict[str, Any]:
    """Run ``CHILD`` (``limit`` 0: every seed); its report plus the peak RSS."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(epochs), str(limit), str(log_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child run failed ({proc.returncode}): {err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["ru_maxrss_mb"] = usage.ru_maxrss * 1024 / 1e6  # Linux: KiB
    result["peak_rss_mb"] = result["vm_hwm_mb"] or result["ru_maxrss_mb"]
    return result


def measure_memory(epochs: int, tmp: Path) -> dict[str, Any]:
    one = run_child(1, 1, tmp / "rss-one")
    full = run_child(epochs, 0, tmp / "rss-full")
    return {"single_episode": one, "full": {**full, "epochs": epochs, "seeds": SEEDS}}
