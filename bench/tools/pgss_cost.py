#!/usr/bin/env python3
"""The database's cost per fire, from pg_stat_statements over a benchmark's window (bench_pgss_csv: the
statistics are reset when the window starts and read when it ends).

  pgss_cost.py STATEMENTS.csv FIRES [--top 12]

FIRES is the number of fires delivered in the window. Per statement and in total: statements (calls) per
fire, execution time in µs per fire, rows per fire, WAL bytes and WAL records per fire, shared blocks
dirtied per fire. Planning time is not included (pg_stat_statements.track_planning is off by default).
The benchmark's own statements (reading or resetting pg_stat_statements) are left out; everything else
the admins ran in the window is in, including work that is not per fire (registry, monitors, heartbeats):
at a steady rate it is part of what a fire costs.
"""
import argparse
import csv
import sys

FIELDS = ("calls", "total_exec_time", "rows", "wal_bytes", "wal_records", "shared_blks_dirtied")


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            q = r.get("query", "")
            if "pg_stat_statements" in q:
                continue
            rows.append({"query": q, **{k: float(r.get(k) or 0) for k in FIELDS}})
    return rows


def per_fire(row, fires):
    f = max(1, fires)
    return {
        "calls_per_fire": row["calls"] / f,
        "exec_us_per_fire": row["total_exec_time"] * 1000.0 / f,
        "rows_per_fire": row["rows"] / f,
        "wal_bytes_per_fire": row["wal_bytes"] / f,
        "wal_records_per_fire": row["wal_records"] / f,
        "blks_dirtied_per_fire": row["shared_blks_dirtied"] / f,
    }


def cost(path, fires, top=12):
    """{"fires", "total": per-fire totals, "statements": the `top` statements by execution time, each
    with its query (cut to 140 characters), its window totals and per-fire figures}."""
    rows = load(path)
    tot = {k: sum(r[k] for r in rows) for k in FIELDS}
    rows.sort(key=lambda r: r["total_exec_time"], reverse=True)
    statements = []
    for r in rows[:top]:
        statements.append({"query": r["query"][:140], "calls": int(r["calls"]),
                           "exec_ms": round(r["total_exec_time"], 1),
                           **{k: round(v, 3) for k, v in per_fire(r, fires).items()}})
    total = {k: round(v, 3) for k, v in per_fire(tot, fires).items()}
    total["distinct_statements"] = len(rows)
    return {"fires": fires, "total": total, "statements": statements}


def lines(c):
    """The report's lines for a cost() result."""
    t = c["total"]
    out = [f"  database per fire ({c['fires']} fires delivered in the window; pg_stat_statements): "
           f"{t['calls_per_fire']:.2f} statements, {t['exec_us_per_fire']:.0f} µs execution, "
           f"{t['rows_per_fire']:.2f} rows, {t['wal_bytes_per_fire']:.0f} WAL bytes in "
           f"{t['wal_records_per_fire']:.2f} records, {t['blks_dirtied_per_fire']:.3f} blocks dirtied"]
    out.append(f"    {'calls/fire':>10} {'µs/fire':>8} {'rows/fire':>9} {'WAL B/fire':>10} {'dirtied/fire':>12}  statement")
    for s in c["statements"]:
        out.append(f"    {s['calls_per_fire']:>10.3f} {s['exec_us_per_fire']:>8.1f} {s['rows_per_fire']:>9.3f} "
                   f"{s['wal_bytes_per_fire']:>10.1f} {s['blks_dirtied_per_fire']:>12.4f}  {s['query'][:100]}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("fires", type=int)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    print("\n".join(lines(cost(a.csv, a.fires, a.top))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
