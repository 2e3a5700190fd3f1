#!/usr/bin/env python3
# Copyright 2026 The cuhal Authors.
"""Plots a `cuhal trace replay --json` report: reserved and used bytes over the operations.

  python3 bench/traces/plot_replay.py REPORT.json OUT.png

One color per allocator: reserved solid, used dashed; the title names the trace and the backend.
`cuhal trace replay TRACE --plot OUT.png` runs this script on its JSON. The output format follows
OUT's extension (png, svg, pdf, ...). Exit status: 0 on success, 1 for a bad report or an
unwritable output, 2 when matplotlib cannot be imported.
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: plot_replay.py REPORT.json OUT.png", file=sys.stderr)
        return 1
    report_path, out_path = argv[1], argv[2]
    try:
        import matplotlib
        matplotlib.use("Agg")
        # Keep every sample: path simplification drops the one-operation peaks (the used high
        # of a 20,000-operation trace is such a peak).
        matplotlib.rcParams["path.simplify"] = False
        import matplotlib.pyplot as plt
    except ImportError as error:
        print(f"plot_replay.py: matplotlib is missing for {sys.executable} ({error}); "
              "install it with `python3 -m pip install matplotlib`", file=sys.stderr)
        return 2
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
        allocators = report["allocators"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"plot_replay.py: cannot read the report {report_path}: {error}", file=sys.stderr)
        return 1

    mib = 1024.0 * 1024.0
    fig, ax = plt.subplots(figsize=(10, 5.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, entry in enumerate(allocators):
        color = colors[index % len(colors)]
        series = entry.get("series", {})
        ops = series.get("op", [])
        name = entry.get("allocator", f"allocator {index}")
        ax.plot(ops, [b / mib for b in series.get("reserved", [])], color=color, linestyle="-",
                linewidth=1.2, label=f"{name} reserved")
        ax.plot(ops, [b / mib for b in series.get("used", [])], color=color, linestyle="--",
                linewidth=1.0, label=f"{name} used")
    ax.set_xlabel("operation index")
    ax.set_ylabel("MiB")
    ax.set_title(f"{report.get('trace', '?')}: reserved (solid) and used (dashed), "
                 f"{report.get('backend', '?')} backend")
    ax.grid(True, alpha=0.3)
    if allocators:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    try:
        fig.savefig(out_path)
    except (OSError, ValueError) as error:
        print(f"plot_replay.py: cannot write {out_path}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
