#!/usr/bin/env python3
"""Summarises fire-lag runs (results.jsonl, one line per run) by series and N: the median of the runs and
their range (min..max), as tables on stdout and a TSV for the plot (bench/tools/fire_lag.gp).

  fire_lag_summary.py results.jsonl summary.tsv [--baseline earlier.jsonl] [--baseline-label NAME]

A series is one setting of the run: executor (cronwheel = cronwheel-executor, stub = xxl-stub --minimal),
number of admins, pg_stat_statements on or off. Lines of runs older than those settings count as
cronwheel, 1 admin, pg_stat_statements off. After the table of each series, the comparisons the run
allows, each measured in the same run: cronwheel-executor against the stub at each N, K admins against
one, pg_stat_statements on against off; with --baseline, this run against the saved one (for the series
both have; the label defaults to the baseline's file name).

summary.tsv: a first line "# series S", then S blocks separated by two blank lines, one per series (this
run's first, then the baseline's); each block starts with a header line whose first field is the series'
title in double quotes, then one line per N: n runs, and the median, min and max of each column below.
"""
import argparse
import json
import math
import os
import statistics
import sys
from collections import defaultdict

COLS = ["p50_ms", "p99_ms", "max_ms", "on_time_pct", "within_50ms_pct", "missed", "duplicates",
        "admin_cpu_pct", "admin_rss_mb", "executor_cpu_pct", "postgres_cpu_pct",
        "admin_cpu_us_per_fire", "executor_cpu_us_per_fire", "postgres_cpu_us_per_fire"]
DB_COLS = ["calls_per_fire", "exec_us_per_fire", "rows_per_fire", "wal_bytes_per_fire", "blks_dirtied_per_fire"]
KIND = {"cronwheel": "cronwheel-executor", "stub": "xxl-stub --minimal"}


def load(path):
    runs = []
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            r.setdefault("executor", "cronwheel")
            r.setdefault("admins", 1)
            r.setdefault("pgss", 0)
            runs.append(r)
    return runs


def key(r):
    return (r["executor"], r["admins"], r["pgss"])


def title(k, show_pgss):
    t = f"{KIND.get(k[0], k[0])}, {k[1]} admin{'s' if k[1] != 1 else ''}"
    if show_pgss:
        t += ", pg_stat_statements " + ("on" if k[2] else "off")
    return t


def num(v):
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def med(rs, col):
    v = [r[col] for r in rs if num(r.get(col))]
    return (statistics.median(v), min(v), max(v)) if v else (math.nan, math.nan, math.nan)


def cell(t):
    m, lo, hi = t
    if math.isnan(m):
        return "-"
    return f"{m:g}" if lo == hi else f"{m:g} ({lo:g}..{hi:g})"


def g(v):
    return f"{v:g}" if num(v) else "-"


def ratio(a, b):
    return f"{a / b:.2f}" if num(a) and num(b) and b else "-"


def by_n(runs):
    out = defaultdict(list)
    for r in runs:
        out[r["n"]].append(r)
    return out


def series_table(k, runs, show_pgss):
    print(f"== {title(k, show_pgss)}")
    print("N       runs  " + "  ".join(f"{c:>22}" for c in COLS))
    for n, rs in sorted(by_n(runs).items()):
        loads = ", ".join(str(r.get("load_start", "?")).split(" ")[0] for r in rs)
        print(f"{n:<8}{len(rs):<6}" + "  ".join(f"{cell(med(rs, c)):>22}" for c in COLS) + f"  load(1 min) {loads}")
    db = [(n, rs) for n, rs in sorted(by_n(runs).items()) if any(r.get("db_per_fire") for r in rs)]
    if db:
        print("  database per fire (pg_stat_statements, median of runs):")
        print("  N       " + "  ".join(f"{c:>22}" for c in DB_COLS))
        for n, rs in db:
            rows = [r["db_per_fire"] for r in rs if r.get("db_per_fire")]
            print(f"  {n:<8}" + "  ".join(f"{cell(med(rows, c)):>22}" for c in DB_COLS))


def compare_executors(groups):
    pairs = [(k, (("stub",) + k[1:])) for k in groups if k[0] == "cronwheel" and (("stub",) + k[1:]) in groups]
    for kc, ks in pairs:
        print(f"== cronwheel-executor against xxl-stub --minimal ({kc[1]} admin(s), pg_stat_statements "
              f"{'on' if kc[2] else 'off'}): lag and the executor's CPU per fire, same run")
        print(f"{'N':<8}{'p50 cw/stub ms':>18}{'p99 cw/stub ms':>20}{'p99 ratio':>10}{'on time cw/stub %':>20}"
              f"{'exec µs/fire cw/stub':>24}{'ratio':>7}{'admin µs/fire cw/stub':>24}")
        nc, ns = by_n(groups[kc]), by_n(groups[ks])
        for n in sorted(set(nc) & set(ns)):
            c = {x: med(nc[n], x)[0] for x in COLS}
            s = {x: med(ns[n], x)[0] for x in COLS}
            print(f"{n:<8}{c['p50_ms']:>9g}/{s['p50_ms']:<8g}{c['p99_ms']:>11g}/{s['p99_ms']:<8g}"
                  f"{ratio(c['p99_ms'], s['p99_ms']):>10}{c['on_time_pct']:>11.1f}/{s['on_time_pct']:<8.1f}"
                  f"{c['executor_cpu_us_per_fire']:>15g}/{s['executor_cpu_us_per_fire']:<8g}"
                  f"{ratio(c['executor_cpu_us_per_fire'], s['executor_cpu_us_per_fire']):>7}"
                  f"{c['admin_cpu_us_per_fire']:>15g}/{s['admin_cpu_us_per_fire']:<8g}")


def compare_admins(groups):
    for (kind, k, ss), runs in sorted(groups.items()):
        one = groups.get((kind, 1, ss))
        if k == 1 or one is None:
            continue
        print(f"== {k} admins against 1 ({KIND.get(kind, kind)}, pg_stat_statements {'on' if ss else 'off'}), "
              "same run; per admin: median of runs")
        n1, nk = by_n(one), by_n(runs)
        for n in sorted(set(n1) & set(nk)):
            a = {x: med(n1[n], x)[0] for x in COLS}
            b = {x: med(nk[n], x)[0] for x in COLS}
            share = med(nk[n], "all_admins_seconds_pct")[0]
            print(f"N={n}: lag p50 {g(b['p50_ms'])} ms (1 admin {g(a['p50_ms'])}), p99 {g(b['p99_ms'])} ms "
                  f"(1 admin {g(a['p99_ms'])}; ratio {ratio(b['p99_ms'], a['p99_ms'])}); missed {g(b['missed'])} "
                  f"({g(a['missed'])}); admins' CPU {g(b['admin_cpu_pct'])}% ({g(a['admin_cpu_pct'])}%), "
                  f"{g(b['admin_cpu_us_per_fire'])} µs/fire ({g(a['admin_cpu_us_per_fire'])}); PostgreSQL "
                  f"{g(b['postgres_cpu_us_per_fire'])} µs/fire ({g(a['postgres_cpu_us_per_fire'])}); "
                  f"seconds in which every admin owned fires: {g(share)}%")
            print(f"  {'admin':<8}{'scans/s':>9}{'scan p50 ms':>13}{'scan p99 ms':>13}{'lock wait ms':>14}"
                  f"{'lock p99 ms':>13}{'partitions':>12}{'written/s':>11}{'sent/s':>9}{'CPU %':>8}")
            for detail_runs, label in ((n1[n], "1 admin"), (nk[n], None)):
                names = [d["name"] for d in detail_runs[0].get("admin_detail") or []]
                for name in names:
                    ds = [d for r in detail_runs for d in r.get("admin_detail") or [] if d["name"] == name]

                    def m(c):
                        v = med(ds, c)[0]
                        return "-" if math.isnan(v) else f"{v:g}"
                    parts = f"{m('partitions_held_start')}->{m('partitions_held_end')}"
                    print(f"  {(label or name):<8}{m('scans_per_s'):>9}{m('scan_p50_ms'):>13}{m('scan_p99_ms'):>13}"
                          f"{m('lock_wait_mean_ms'):>14}{m('lock_wait_p99_ms'):>13}{parts:>12}"
                          f"{m('fires_written_per_s'):>11}{m('fires_sent_per_s'):>9}{m('cpu_pct'):>8}")


def compare_pgss(groups):
    for (kind, k, ss), runs in sorted(groups.items()):
        off = groups.get((kind, k, 0))
        if ss != 1 or off is None:
            continue
        print(f"== pg_stat_statements on against off ({KIND.get(kind, kind)}, {k} admin(s)), same run: "
              "its overhead")
        n1, n0 = by_n(runs), by_n(off)
        for n in sorted(set(n1) & set(n0)):
            a = {x: med(n1[n], x)[0] for x in COLS}
            b = {x: med(n0[n], x)[0] for x in COLS}
            print(f"N={n}: lag p50 {g(a['p50_ms'])} / {g(b['p50_ms'])} ms, p99 {g(a['p99_ms'])} / {g(b['p99_ms'])} ms "
                  f"(on / off); PostgreSQL CPU {g(a['postgres_cpu_pct'])}% / {g(b['postgres_cpu_pct'])}%, "
                  f"{g(a['postgres_cpu_us_per_fire'])} / {g(b['postgres_cpu_us_per_fire'])} µs per fire "
                  f"(ratio {ratio(a['postgres_cpu_us_per_fire'], b['postgres_cpu_us_per_fire'])}); admin "
                  f"{g(a['admin_cpu_us_per_fire'])} / {g(b['admin_cpu_us_per_fire'])} µs per fire")


def compare_baseline(groups, base_groups, label):
    for k, runs in sorted(groups.items()):
        base = base_groups.get(k)
        if base is None:  # a baseline without pg_stat_statements' setting of this run: same executor/admins
            base = next((v for bk, v in sorted(base_groups.items()) if bk[:2] == k[:2]), None)
        if base is None:
            continue
        print(f"== {title(k, True)} against baseline {label}")
        nb, nr = by_n(base), by_n(runs)
        if not set(nb) & set(nr):
            print(f"no N in common (this run: {sorted(nr)}, the baseline: {sorted(nb)})")
        for n in sorted(set(nb) & set(nr)):
            a = {x: med(nr[n], x)[0] for x in COLS}
            b = {x: med(nb[n], x)[0] for x in COLS}
            print(f"N={n}: lag p50 {g(a['p50_ms'])} ms (baseline {g(b['p50_ms'])}), p99 {g(a['p99_ms'])} ms "
                  f"(baseline {g(b['p99_ms'])}; ratio {ratio(a['p99_ms'], b['p99_ms'])}); missed {g(a['missed'])} "
                  f"({g(b['missed'])}); µs per fire admin {g(a['admin_cpu_us_per_fire'])} "
                  f"({g(b['admin_cpu_us_per_fire'])}), executor {g(a['executor_cpu_us_per_fire'])} "
                  f"({g(b['executor_cpu_us_per_fire'])}), PostgreSQL {g(a['postgres_cpu_us_per_fire'])} "
                  f"({g(b['postgres_cpu_us_per_fire'])}); load {str(nr[n][0].get('load_start', '?')).split(' ')[0]} "
                  f"({str(nb[n][0].get('load_start', '?')).split(' ')[0]})")


def write_block(tsv, name, runs):
    tsv.write(f'"{name}" runs ' + " ".join(f"{c}_med {c}_min {c}_max" for c in COLS) + "\n")
    for n, rs in sorted(by_n(runs).items()):
        fields = [str(n), str(len(rs))]
        for c in COLS:
            fields += ["NaN" if math.isnan(x) else f"{x:g}" for x in med(rs, c)]
        tsv.write(" ".join(fields) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("tsv")
    ap.add_argument("--baseline")
    ap.add_argument("--baseline-label")
    a = ap.parse_args()
    runs = load(a.results)
    if not runs:
        print(f"fire_lag_summary.py: {a.results} holds no run", file=sys.stderr)
        return 1
    groups = defaultdict(list)
    for r in runs:
        groups[key(r)].append(r)
    show_pgss = len({k[2] for k in groups}) > 1
    for k in sorted(groups):
        series_table(k, groups[k], show_pgss)
    compare_executors(groups)
    compare_admins(groups)
    compare_pgss(groups)
    base_groups, label = {}, ""
    if a.baseline:
        label = a.baseline_label or os.path.splitext(os.path.basename(a.baseline))[0]
        for r in load(a.baseline):
            base_groups.setdefault(key(r), []).append(r)
        compare_baseline(groups, base_groups, label)
    # The plot: this run's series, then the baseline's that match one of them by executor and admins
    # (all of the baseline's when none does).
    blocks = [(title(k, show_pgss), groups[k]) for k in sorted(groups)]
    if base_groups:
        mine = {k[:2] for k in groups}
        chosen = [k for k in sorted(base_groups) if k[:2] in mine] or sorted(base_groups)
        base_pgss = len({k[2] for k in chosen}) > 1
        blocks += [(f"{label}: {title(k, base_pgss)}", base_groups[k]) for k in chosen]
    with open(a.tsv, "w") as tsv:
        tsv.write(f"# series {len(blocks)} mine {len(groups)}\n")
        for i, (name, rs) in enumerate(blocks):
            if i:
                tsv.write("\n\n")
            write_block(tsv, name, rs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
