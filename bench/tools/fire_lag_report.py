#!/usr/bin/env python3
"""Figures of one fire-lag run: every scheduled instant of the window against the executor's run trace.

  fire_lag_report.py --trace run-trace.txt --log job_log.csv --jobs jobs.txt --samples samples.csv
                     --t0 MS --seconds S --n N [--label L] [--json-out results.jsonl]
                     [--executor-kind cronwheel|stub] [--pgss 0|1] [--pgss-csv statements.csv]
                     [--admin NAME NODE_ID METRICS_AT_START METRICS_AT_END]...

--log is `id,job_id,scheduled_ms,trigger_type,dispatch_ms,trigger_ms,trigger_code[,owner_node][,skipped]` of the
CRON rows whose scheduled instant is in the window; --jobs the job ids, one a line. The window is
[t0, t0 + S s). The trace has `<logId> <jobId> <received ms>` lines (cronwheel-executor) or the same with
an outcome after them (xxl-stub); lines of invalid requests are ignored.

Lag = the executor's receive time of /run (trace) - the scheduled instant. An instant is
  missed     if no /run for it reached the executor (the reason is split: no row written, row never
             claimed, claimed too late and skipped as a misfire, trigger failed, sent but not in the trace);
  duplicate  for every extra /run of the same (job, instant) beyond the first;
  on time    if its first /run arrived no earlier than the instant and at most ON_TIME_MS after it.
Percentiles are nearest-rank over the first arrival of every instant that arrived.

Per fire: CPU µs of each process (procsample.py; admins one by one and together, the executor, all of
PostgreSQL) and, with --pgss-csv, the database's statements, execution time, rows and WAL (pgss_cost.py),
each divided by the fires delivered in the window: /run requests the executor received inside the
interval the figure covers, whenever they were scheduled (a run that falls behind delivers fewer).

Per admin (--admin, one per admin; its GET /metrics scraped when the window began and ended): scans per
second (cronwheel_scans_total), scan duration p50/p99 and lock wait mean/p99 per scan (the difference of
the cronwheel_scan_duration_seconds and cronwheel_scan_lock_wait_seconds histograms, interpolated inside
buckets), schedule partitions held at start and end, fires per second it wrote (job_log.owner_node of the
window's rows) and sent (cronwheel_fires_total{outcome="sent"}), CPU; and over the admins, the share of the
window's seconds in which every admin owned fires of that second.
"""
import argparse
import csv
import json
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgss_cost  # noqa: E402
import promtext  # noqa: E402

ON_TIME_MS = 100


def pct(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(p / 100.0 * len(sorted_values)) - 1)
    return sorted_values[k]


def cpu_span(samples, name, t0, t1):
    """CPU seconds `name` used between the last sample at or before t0 and the first at or after t1:
    (used seconds, span start ms, span end ms, peak RSS KiB in the window); None without samples."""
    rows = [r for r in samples if r[1] == name]
    if not rows:
        return None
    before = [r for r in rows if r[0] <= t0] or rows[:1]
    after = [r for r in rows if r[0] >= t1] or rows[-1:]
    a, b = before[-1], after[0]
    rss = max((r[3] for r in rows if t0 <= r[0] <= t1), default=0)
    return b[2] - a[2], a[0], b[0], rss


def cpu_over(samples, name, t0, t1):
    """(CPU % of one core over the window, peak RSS KiB)."""
    c = cpu_span(samples, name, t0, t1)
    if c is None:
        return float("nan"), 0
    secs = (c[2] - c[1]) / 1000.0
    return (100.0 * c[0] / secs if secs > 0 else float("nan")), c[3]


def received_between(times, a, b):
    """/run requests received in [a, b] (times sorted)."""
    import bisect
    return bisect.bisect_right(times, b) - bisect.bisect_left(times, a)


def cpu_us_per_fire(samples, name, t0, t1, times):
    c = cpu_span(samples, name, t0, t1)
    if c is None:
        return float("nan")
    fires = received_between(times, c[1], c[2])
    return c[0] * 1e6 / fires if fires else float("nan")


def rnd(v, digits=1):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(v, digits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--t0", type=int, required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--load-start", default="", help="/proc/loadavg (1 5 15 min) when the window began")
    ap.add_argument("--load-end", default="", help="/proc/loadavg when it ended")
    ap.add_argument("--tcp-opens", type=int, default=-1, help="TCP connections opened in the window")
    ap.add_argument("--executor-kind", default="cronwheel", help="cronwheel or stub (xxl-stub --minimal)")
    ap.add_argument("--executor-threads", type=int, default=0, help="the executor's server threads")
    ap.add_argument("--pgss", type=int, default=0, help="1 if pg_stat_statements was loaded")
    ap.add_argument("--pgss-csv", help="the window's statements (bench_pgss_csv)")
    ap.add_argument("--admin", nargs=4, action="append", default=[],
                    metavar=("NAME", "NODE_ID", "METRICS_START", "METRICS_END"))
    ap.add_argument("--run-dir", default="", help="where the run's raw data is (recorded in the JSON)")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    t0, t1 = a.t0, a.t0 + a.seconds * 1000

    jobs = [int(x) for x in open(a.jobs).read().split()]
    rows = {}  # log id -> (job, scheduled, dispatch_ms, trigger_ms, code)
    owner = {}  # log id -> the admin node that wrote it (owner_node)
    by_instant = defaultdict(list)
    with open(a.log) as f:
        for r in csv.DictReader(f):
            lid = int(r["id"])
            # skipped: a misfire the job's rule skipped at its claim (a row of its own, not lost); "t" or "f".
            rec = (int(r["job_id"]), int(r["scheduled_ms"]), int(r["dispatch_ms"]), int(r["trigger_ms"]),
                   int(r["trigger_code"]), r.get("skipped") == "t")
            rows[lid] = rec
            by_instant[(rec[0], rec[1])].append(lid)
            owner[lid] = r.get("owner_node") or ""

    received = defaultdict(list)  # log id -> receive times
    started = defaultdict(list)  # log id -> handler start times (cronwheel-executor's trace: 4th column)
    all_times = []  # every /run received, whenever it was scheduled
    with open(a.trace) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or (len(parts) > 3 and parts[3] == "invalid"):
                continue
            lid = int(parts[0])
            all_times.append(int(parts[2]))
            if lid in rows:
                received[lid].append(int(parts[2]))
                if len(parts) > 3 and parts[3].isdigit() and int(parts[3]) > 0:
                    started[lid].append(int(parts[3]))
    all_times.sort()

    expected = [(j, s) for j in jobs for s in range(t0, t1, 1000)]
    lags, early, dup = [], 0, 0
    missed = {"no_row": 0, "not_claimed": 0, "skipped_late": 0, "trigger_failed": 0, "not_in_trace": 0}
    queue_wait, http = [], []  # scheduled -> trigger start, trigger start -> received
    start_lags = []  # scheduled -> the handler's first start (executors whose trace has it)
    per_second_max = defaultdict(int)
    for inst in expected:
        lids = by_instant.get(inst, [])
        if not lids:
            missed["no_row"] += 1
            continue
        times = sorted(t for lid in lids for t in received[lid])
        if not times:
            rec = rows[lids[0]]
            if rec[5]:
                missed["skipped_late"] += 1  # recorded SKIPPED by the job's misfire rule
            elif rec[2] == 0:
                missed["not_claimed"] += 1
            elif rec[4] == 0:
                missed["skipped_late"] += 1  # claimed more than the misfire threshold late: skipped
            elif rec[4] != 200:
                missed["trigger_failed"] += 1
            else:
                missed["not_in_trace"] += 1
            continue
        dup += len(times) - 1
        starts = sorted(t for lid in lids for t in started[lid])
        if starts:
            start_lags.append(starts[0] - inst[1])
        lag = times[0] - inst[1]
        if lag < 0:
            early += 1
        lags.append(lag)
        rec = rows[lids[0]]
        if rec[3] > 0:
            queue_wait.append(rec[3] - inst[1])
            http.append(times[0] - rec[3])
        per_second_max[inst[1]] = max(per_second_max[inst[1]], lag)
    lags.sort()
    start_lags.sort()
    queue_wait.sort()
    http.sort()
    n_missed = sum(missed.values())
    on_time = sum(1 for x in lags if 0 <= x <= ON_TIME_MS)
    within50 = sum(1 for x in lags if 0 <= x <= 50)

    samples = []
    with open(a.samples) as f:
        for r in csv.DictReader(f):
            samples.append((int(r["ms"]), r["name"], float(r["cpu_s"]), int(r["rss_kb"])))
    admin_names = [x[0] for x in a.admin] or sorted({r[1] for r in samples if r[1].startswith("admin")})
    per_admin_cpu = {name: cpu_over(samples, name, t0, t1) for name in admin_names}
    admin_cpu = sum(c for c, _ in per_admin_cpu.values()) if per_admin_cpu else float("nan")
    admin_rss = sum(r for _, r in per_admin_cpu.values())
    exec_cpu, exec_rss = cpu_over(samples, "executor", t0, t1)
    pg_cpu, _ = cpu_over(samples, "postgres", t0, t1)
    burst = sorted(per_second_max.values())
    delivered = received_between(all_times, t0, t1 - 1)
    us_admin = {name: cpu_us_per_fire(samples, name, t0, t1, all_times) for name in admin_names}
    cpu_us = {
        "admin": sum(us_admin.values()) if us_admin else float("nan"),
        "executor": cpu_us_per_fire(samples, "executor", t0, t1, all_times),
        "postgres": cpu_us_per_fire(samples, "postgres", t0, t1, all_times),
    }
    db = pgss_cost.cost(a.pgss_csv, delivered) if a.pgss_csv and os.path.exists(a.pgss_csv) else None

    # Per admin: scans, lock wait and the fires it owned.
    seconds = a.seconds
    nodes_by_second = defaultdict(set)
    written = defaultdict(int)
    for lid, rec in rows.items():
        nodes_by_second[rec[1]].add(owner.get(lid, ""))
        written[owner.get(lid, "")] += 1
    admins = []
    for name, node, mstart, mend in a.admin:
        st, en = promtext.parse(mstart), promtext.parse(mend)
        dur = promtext.histogram(st, en, "cronwheel_scan_duration_seconds")
        wait = promtext.histogram(st, en, "cronwheel_scan_lock_wait_seconds")
        scans = promtext.delta(st, en, "cronwheel_scans_total")
        sent = promtext.delta(st, en, "cronwheel_fires_total", outcome="sent")
        cpu, rss = per_admin_cpu.get(name, (float("nan"), 0))
        admins.append({
            "name": name, "node": node, "metrics": bool(en),
            "scans_per_s": rnd(scans / seconds if scans is not None else None, 2),
            "scan_p50_ms": rnd(promtext.quantile(dur, 0.5) * 1000), "scan_p99_ms": rnd(promtext.quantile(dur, 0.99) * 1000),
            "lock_wait_mean_ms": rnd(promtext.mean(wait) * 1000, 2),
            "lock_wait_p99_ms": rnd(promtext.quantile(wait, 0.99) * 1000, 2),
            "partitions_held_start": promtext.total(st, "cronwheel_schedule_partitions_held"),
            "partitions_held_end": promtext.total(en, "cronwheel_schedule_partitions_held"),
            "fires_written_per_s": round(written.get(node, 0) / seconds, 1),
            "fires_sent_per_s": rnd(sent / seconds if sent is not None else None),
            "cpu_pct": rnd(cpu), "rss_mb": round(rss / 1024, 1), "cpu_us_per_fire": rnd(us_admin.get(name)),
        })
    window_seconds = range(t0, t1, 1000)
    every_admin = sum(1 for sec in window_seconds
                      if a.admin and all(node in nodes_by_second.get(sec, ()) for _, node, _, _ in a.admin))

    res = {
        "label": a.label, "n": a.n, "executor": a.executor_kind, "admins": max(1, len(a.admin)),
        "pgss": a.pgss, "executor_threads": a.executor_threads, "run_dir": a.run_dir,
        "seconds": a.seconds, "expected": len(expected),
        "arrived": len(lags), "on_time_pct": 100.0 * on_time / len(expected) if expected else 0,
        "within_50ms_pct": 100.0 * within50 / len(expected) if expected else 0,
        "p50_ms": pct(lags, 50), "p90_ms": pct(lags, 90), "p99_ms": pct(lags, 99), "max_ms": lags[-1] if lags else None,
        "early": early, "missed": n_missed, "missed_detail": missed, "duplicates": dup,
        "started": len(start_lags), "start_p50_ms": pct(start_lags, 50), "start_p99_ms": pct(start_lags, 99),
        "start_max_ms": start_lags[-1] if start_lags else None,
        "queue_wait_p50_ms": pct(queue_wait, 50), "queue_wait_p99_ms": pct(queue_wait, 99),
        "http_p50_ms": pct(http, 50), "http_p99_ms": pct(http, 99),
        "burst_end_p50_ms": pct(burst, 50), "burst_end_max_ms": burst[-1] if burst else None,
        "admin_cpu_pct": round(admin_cpu, 1), "admin_rss_mb": round(admin_rss / 1024, 1),
        "executor_cpu_pct": round(exec_cpu, 1), "executor_rss_mb": round(exec_rss / 1024, 1),
        "postgres_cpu_pct": round(pg_cpu, 1),
        "load_start": a.load_start, "load_end": a.load_end, "tcp_opens": a.tcp_opens,
        "delivered_in_window": delivered,
        "admin_cpu_us_per_fire": rnd(cpu_us["admin"]), "executor_cpu_us_per_fire": rnd(cpu_us["executor"]),
        "postgres_cpu_us_per_fire": rnd(cpu_us["postgres"]),
        "admin_detail": admins,
        "all_admins_seconds_pct": round(100.0 * every_admin / len(window_seconds), 1) if a.admin else None,
        "db_per_fire": db["total"] if db else None,
        "db_statements": db["statements"] if db else None,
    }
    print(f"fire-lag {a.label} N={a.n}, {a.executor_kind} executor, {res['admins']} admin(s), "
          f"pg_stat_statements {'on' if a.pgss else 'off'}: {len(expected)} instants in {a.seconds} s; "
          f"on time (0..{ON_TIME_MS} ms) {res['on_time_pct']:.2f}%, within 50 ms {res['within_50ms_pct']:.2f}%; "
          f"lag p50 {res['p50_ms']} ms, p90 {res['p90_ms']} ms, p99 {res['p99_ms']} ms, max {res['max_ms']} ms; "
          f"missed {n_missed} {missed}, duplicates {dup}, early {early}")
    if start_lags:
        print(f"  scheduled->handler start ({len(start_lags)} instants): p50 {res['start_p50_ms']} ms, "
              f"p99 {res['start_p99_ms']} ms, max {res['start_max_ms']} ms")
    print(f"  parts: scheduled->trigger start p50 {res['queue_wait_p50_ms']} p99 {res['queue_wait_p99_ms']} ms; "
          f"trigger start->executor p50 {res['http_p50_ms']} p99 {res['http_p99_ms']} ms; "
          f"last fire of a second: p50 {res['burst_end_p50_ms']} ms, max {res['burst_end_max_ms']} ms")
    print(f"  CPU (100% = one core): admin {res['admin_cpu_pct']}%, executor {res['executor_cpu_pct']}%, "
          f"PostgreSQL {res['postgres_cpu_pct']}%; RSS admin {res['admin_rss_mb']} MiB, "
          f"executor {res['executor_rss_mb']} MiB; load average {a.load_start} -> {a.load_end}")
    print(f"  TCP connections opened in the window (machine-wide): {a.tcp_opens} "
          f"({a.tcp_opens / max(1, len(expected)):.3f} per fire)")
    print(f"  CPU per fire ({delivered} /run received in the window): admins {res['admin_cpu_us_per_fire']} µs, "
          f"executor ({a.executor_kind}) {res['executor_cpu_us_per_fire']} µs, "
          f"PostgreSQL {res['postgres_cpu_us_per_fire']} µs")
    for d in admins:
        print(f"  {d['name']} ({d['node']}): {d['scans_per_s']} scans/s, scan p50 {d['scan_p50_ms']} ms "
              f"p99 {d['scan_p99_ms']} ms, lock wait per scan mean {d['lock_wait_mean_ms']} ms "
              f"p99 {d['lock_wait_p99_ms']} ms, partitions held {d['partitions_held_start']} -> "
              f"{d['partitions_held_end']}; fires written {d['fires_written_per_s']}/s, sent "
              f"{d['fires_sent_per_s']}/s; CPU {d['cpu_pct']}% ({d['cpu_us_per_fire']} µs per fire delivered)"
              + ("" if d["metrics"] else "; NO /metrics scrape at the window's end"))
    if len(admins) > 1:
        print(f"  seconds of the window in which every admin owned fires: {res['all_admins_seconds_pct']}%")
    if db:
        print("\n".join(pgss_cost.lines(db)))
    elif a.pgss:
        print("  database per fire: no pg_stat_statements export found")
    if a.json_out:
        with open(a.json_out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
