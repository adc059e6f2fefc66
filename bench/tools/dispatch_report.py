#!/usr/bin/env python3
"""Figures of one dispatch run (bench/dispatch.sh): the admin's send rate to one executor against wrk's,
both measured at the executor's run trace (`<logId> <jobId> <received ms>` per /run).

Rate of a window = requests received between the 5th and the 95th percentile of its receive times,
divided by that span (the steady middle: a burst's ramp-up and tail are left out, as wrk's connection
set-up is). Also printed: the whole burst from its scheduled instant to the last receipt (what a user
waits), and wrk's own Requests/sec.
"""
import argparse
import csv
import json
import math
import re
import statistics
import sys


def pct(v, p):
    k = max(0, math.ceil(p / 100.0 * len(v)) - 1)
    return v[min(k, len(v) - 1)]


def steady_rate(times):
    times = sorted(times)
    if len(times) < 20:
        return float("nan")
    lo, hi = pct(times, 5), pct(times, 95)
    inside = sum(1 for t in times if lo <= t <= hi)
    return inside / ((hi - lo) / 1000.0) if hi > lo else float("nan")


def cpu(samples, name, t0, t1):
    rows = [r for r in samples if r[1] == name]
    before = [r for r in rows if r[0] <= t0] or rows[:1]
    after = [r for r in rows if r[0] >= t1] or rows[-1:]
    if not before or not after or after[0][0] <= before[-1][0]:
        return float("nan")
    return 100.0 * (after[0][2] - before[-1][2]) / ((after[0][0] - before[-1][0]) / 1000.0)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--trace", "--wrk", "--log", "--samples", "--json-out", "--wrk-load", "--admin-load"):
        ap.add_argument(a, default="")
    for a in ("--wrk-tcp-opens", "--admin-tcp-opens"):
        ap.add_argument(a, type=int, default=-1)
    for a in ("--wrk-start", "--wrk-end", "--wrk-first-log", "--first", "--period", "--bursts", "--jobs",
              "--connections"):
        ap.add_argument(a, type=int, required=True)
    a = ap.parse_args()

    wrk_times, admin = [], []
    with open(a.trace) as f:
        for line in f:
            p = line.split()
            # cronwheel-executor's run trace: logId jobId received_ms started_ms (3 fields before it had a start)
            if len(p) not in (3, 4):
                continue
            lid, ms = int(p[0]), int(p[2])
            if a.wrk_first_log <= lid < a.wrk_first_log + 10**12:
                wrk_times.append(ms)
            elif lid < 10**12:
                admin.append((lid, ms))
    wrk_text = open(a.wrk).read()
    m = re.search(r"Requests/sec:\s+([\d.]+)", wrk_text)
    wrk_own = float(m.group(1)) if m else float("nan")
    m = re.search(r"not_ok (\d+)", wrk_text)
    wrk_not_ok = int(m.group(1)) if m else -1
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk_text)
    wrk_non2xx = int(m.group(1)) if m else 0
    wrk_trace = steady_rate(wrk_times)

    rows = {}
    with open(a.log) as f:
        for r in csv.DictReader(f):
            rows[int(r["id"])] = (int(r["scheduled_ms"]), int(r["dispatch_ms"]), int(r["trigger_ms"]),
                                  int(r["trigger_code"]))
    bursts = []
    for k in range(a.bursts):
        inst = a.first + k * a.period * 1000
        times = sorted(ms for lid, ms in admin if lid in rows and rows[lid][0] == inst)
        dispatch = [rows[l][1] for l in rows if rows[l][0] == inst and rows[l][1] > 0]
        failed = sum(1 for l in rows if rows[l][0] == inst and rows[l][3] not in (0, 200))
        if not times:
            bursts.append({"instant": inst, "received": 0})
            continue
        b = {
            "instant": inst, "fires": sum(1 for l in rows if rows[l][0] == inst), "received": len(times),
            "trigger_failed": failed,
            "claimed_ms": (max(dispatch) - inst) if dispatch else None,
            "first_ms": times[0] - inst, "p50_ms": pct(times, 50) - inst, "last_ms": times[-1] - inst,
            "steady_rate": steady_rate(times),
            "whole_rate": len(times) / (max(1, times[-1] - inst) / 1000.0),
        }
        bursts.append(b)
    ok = [b for b in bursts if b.get("received")]
    admin_steady = statistics.median(b["steady_rate"] for b in ok) if ok else float("nan")
    admin_whole = statistics.median(b["whole_rate"] for b in ok) if ok else float("nan")
    samples = []
    if a.samples:
        with open(a.samples) as f:
            for r in csv.DictReader(f):
                samples.append((int(r["ms"]), r["name"], float(r["cpu_s"]), int(r["rss_kb"])))
    def burst_cpu(name):
        v = [cpu(samples, name, b["instant"] - 300, b["instant"] + b["last_ms"]) for b in bursts if b.get("received")]
        return statistics.median(v) if v else float("nan")
    res = {
        "jobs": a.jobs, "connections": a.connections,
        "wrk_requests_per_s": wrk_own, "wrk_not_ok": wrk_not_ok, "wrk_non_2xx": wrk_non2xx,
        "wrk_rate_at_executor": wrk_trace, "wrk_received": len(wrk_times),
        "admin_steady_rate": admin_steady, "admin_whole_burst_rate": admin_whole, "bursts": bursts,
        "ratio": admin_steady / wrk_trace if wrk_trace else float("nan"),
        "ratio_whole_burst": admin_whole / wrk_trace if wrk_trace else float("nan"),
        "wrk_load": a.wrk_load, "admin_load": a.admin_load,
        "wrk_tcp_opens": a.wrk_tcp_opens, "admin_tcp_opens": a.admin_tcp_opens,
        "admin_fires": sum(b.get("fires", 0) for b in bursts),
        "cpu_wrk_window": {n: round(cpu(samples, n, a.wrk_start, a.wrk_end), 1) for n in ("admin", "executor", "postgres")},
        "cpu_admin_bursts": {n: round(burst_cpu(n), 1) for n in ("admin", "executor", "postgres")},
    }
    print(f"dispatch to one executor, {a.connections} connections:")
    print(f"  wrk POST /run: {wrk_own:.0f} requests/s (wrk), {wrk_trace:.0f}/s at the executor "
          f"(p5..p95 of {len(wrk_times)} receipts); answers not ok: {wrk_not_ok}, non-2xx: {wrk_non2xx}; "
          f"load {a.wrk_load}")
    print(f"    TCP connections opened during wrk's window (machine-wide): {a.wrk_tcp_opens} "
          f"({a.wrk_tcp_opens / max(1, len(wrk_times)):.3f} per request)")
    print(f"    CPU during wrk (100% = one core): {res['cpu_wrk_window']}")
    for b in bursts:
        if not b.get("received"):
            print(f"  burst at {b['instant']}: nothing received")
            continue
        print(f"  admin burst of {b['fires']} fires: received {b['received']}, trigger failures "
              f"{b['trigger_failed']}; all claimed by +{b['claimed_ms']} ms; first +{b['first_ms']} ms, "
              f"p50 +{b['p50_ms']} ms, last +{b['last_ms']} ms after the instant; "
              f"steady {b['steady_rate']:.0f}/s, whole burst {b['whole_rate']:.0f}/s")
    print(f"    CPU during a burst (claim to last receipt, median of bursts): {res['cpu_admin_bursts']}; load {a.admin_load}")
    print(f"    TCP connections opened during the bursts (machine-wide): {a.admin_tcp_opens} "
          f"({a.admin_tcp_opens / max(1, res['admin_fires']):.3f} per fire)")
    print(f"  admin / wrk = {admin_steady:.0f} / {wrk_trace:.0f} = {res['ratio']:.2f} "
          f"(whole burst from the instant: {res['ratio_whole_burst']:.2f}); goal >= 0.5: "
          f"{'met' if res['ratio'] >= 0.5 else 'NOT met'}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
