#!/usr/bin/env python3
"""Summarises fire-lag runs (results.jsonl, one line per run) by N: the median of the runs and their
range (min..max), as a table on stdout and a TSV for the plot.

  fire_lag_summary.py results.jsonl summary.tsv
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by_n = defaultdict(list)
    for r in runs:
        by_n[r["n"]].append(r)
    cols = ["p50_ms", "p99_ms", "max_ms", "on_time_pct", "within_50ms_pct", "missed", "duplicates",
            "admin_cpu_pct", "admin_rss_mb", "executor_cpu_pct", "postgres_cpu_pct"]
    print("N       runs  " + "  ".join(f"{c:>22}" for c in cols))
    with open(sys.argv[2], "w") as tsv:
        tsv.write("# n runs " + " ".join(f"{c}_med {c}_min {c}_max" for c in cols) + "\n")
        for n in sorted(by_n):
            rs = by_n[n]
            cells, fields = [], [str(n), str(len(rs))]
            for c in cols:
                v = [r[c] for r in rs if r[c] is not None]
                med, lo, hi = statistics.median(v), min(v), max(v)
                fields += [f"{med:g}", f"{lo:g}", f"{hi:g}"]
                cells.append(f"{med:g}" if lo == hi else f"{med:g} ({lo:g}..{hi:g})")
            tsv.write(" ".join(fields) + "\n")
            loads = ", ".join(r.get("load_start", "?").split(" ")[0] for r in rs)
            print(f"{n:<8}{len(rs):<6}" + "  ".join(f"{c:>22}" for c in cells) + f"  load(1 min) {loads}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
