#!/usr/bin/env python3
"""Figures of one executor-cpu run (bench/executor_cpu.sh): CPU per /run of cronwheel-executor against the
minimal server (xxl-stub --minimal) under the same wrk load, window by window, and their ratio.

  executor_cpu_report.py --dir bench/out/executor-cpu [--json-out results.json]

Reads windows.jsonl (one line per measured window: server, round, the window's first logId, the server's
CPU seconds at its start and end, times, load, the fake admin's counters), the run traces
(executor-trace.txt: `<logId> <jobId> <ms>`; stub-trace.txt: the same and an outcome) and wrk's outputs.
A window's requests = trace lines with a logId of that window's range (wrk numbers them from its first
logId, 10^10 apart per thread), so warm-up requests and the other server's never count.
CPU µs per /run = (CPU at end - CPU at start) / requests. Ratio = executor / minimal, per round; the median
ratio over the rounds is the figure to quote. Goal (issue 14): <= 1.5.
"""
import argparse
import json
import os
import re
import statistics
import sys
from collections import defaultdict

GOAL = 1.5
SPAN = 10**12  # logIds of one window: [first, first + SPAN)


def trace_counts(path, firsts):
    """{first logId: (requests received, not accepted)} for the windows starting at `firsts`."""
    counts = defaultdict(lambda: [0, 0])
    wanted = set(firsts)
    try:
        f = open(path)
    except OSError:
        return {}
    with f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            lid = int(p[0])
            base = lid // SPAN * SPAN
            if base in wanted:
                c = counts[base]
                c[0] += 1
                # xxl-stub writes an outcome word; cronwheel-executor its start instant (0 = never started)
                if len(p) > 3 and p[3] != "accepted" and not (p[3].isdigit() and int(p[3]) > 0):
                    c[1] += 1
    return {k: tuple(v) for k, v in counts.items()}


def wrk_figures(path):
    try:
        text = open(path).read()
    except OSError:
        return {}
    out = {}
    for key, pattern in (("requests_per_s", r"Requests/sec:\s+([\d.]+)"),
                         ("requests", r"(\d+) requests in"),
                         ("not_ok", r"not_ok (\d+)"),
                         ("non_2xx", r"Non-2xx or 3xx responses: (\d+)"),
                         ("socket_errors", r"Socket errors: (.*)")):
        m = re.search(pattern, text)
        if m:
            out[key] = m.group(1) if key == "socket_errors" else float(m.group(1))
    m = re.search(r"Latency\s+(\S+)\s+(\S+)\s+(\S+)", text)
    if m:
        out["latency_avg"] = m.group(1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--executor-threads", default="2 (its default)")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    windows = [json.loads(line) for line in open(os.path.join(a.dir, "windows.jsonl")) if line.strip()]
    traces = {
        "executor": trace_counts(os.path.join(a.dir, "executor-trace.txt"),
                                 [w["first_log_id"] for w in windows if w["server"] == "executor"]),
        "minimal": trace_counts(os.path.join(a.dir, "stub-trace.txt"),
                                [w["first_log_id"] for w in windows if w["server"] == "minimal"]),
    }
    rows = []
    for w in windows:
        received, refused = traces[w["server"]].get(w["first_log_id"], (0, 0))
        cpu = w["cpu_end_s"] - w["cpu_start_s"]
        secs = (w["wrk_end_ms"] - w["start_ms"]) / 1000.0
        wrk = wrk_figures(os.path.join(a.dir, w["wrk"]))
        fa0, fa1 = w.get("fake_admin_start") or {}, w.get("fake_admin_end") or {}
        callbacks = fa1.get("callbacks", 0) - fa0.get("callbacks", 0)
        rows.append({
            "server": w["server"], "round": w["round"], "received": received, "not_accepted": refused,
            "cpu_s": round(cpu, 3), "cpu_us_per_run": round(cpu * 1e6 / received, 1) if received else None,
            "cpu_pct": round(100.0 * cpu / ((w["end_ms"] - w["start_ms"]) / 1000.0), 1),
            "received_per_s": round(received / secs, 1) if secs > 0 else None,
            "wrk_requests_per_s": wrk.get("requests_per_s"), "wrk_requests": wrk.get("requests"),
            "wrk_not_ok": wrk.get("not_ok"), "wrk_non_2xx": wrk.get("non_2xx", 0),
            "wrk_socket_errors": wrk.get("socket_errors"), "wrk_latency_avg": wrk.get("latency_avg"),
            "callbacks_in_window": callbacks,
            "fake_admin_cpu_pct": round(100.0 * w["fake_admin_cpu_s"] / ((w["end_ms"] - w["start_ms"]) / 1000.0), 1),
            "load_start": w["load_start"], "load_end": w["load_end"],
        })
    rounds = sorted({r["round"] for r in rows})
    ratios = []
    print(f"executor-cpu: CPU per /run under wrk -t2 -c{a.connections} ({a.jobs} job ids; the minimal server's "
          f"{a.threads} threads, the executor's server_threads {a.executor_threads}); callbacks to a fake admin")
    print(f"{'round':<6}{'server':<10}{'received':>10}{'req/s (wrk)':>13}{'CPU s':>8}{'CPU %':>7}{'µs/run':>9}"
          f"{'not ok':>8}{'callbacks':>11}{'fake admin %':>14}  load (1 5 15 min) at start")
    for rnd in rounds:
        by = {r["server"]: r for r in rows if r["round"] == rnd}
        for r in sorted(by.values(), key=lambda r: r["server"]):
            print(f"{rnd:<6}{r['server']:<10}{r['received']:>10}{(r['wrk_requests_per_s'] or 0):>13.0f}"
                  f"{r['cpu_s']:>8.2f}{r['cpu_pct']:>7.1f}{(r['cpu_us_per_run'] or float('nan')):>9.1f}"
                  f"{int((r['wrk_not_ok'] or 0) + (r['wrk_non_2xx'] or 0)):>8}{r['callbacks_in_window']:>11}"
                  f"{r['fake_admin_cpu_pct']:>14.1f}  {r['load_start']}")
        e, m = by.get("executor"), by.get("minimal")
        if e and m and e["cpu_us_per_run"] and m["cpu_us_per_run"]:
            ratio = e["cpu_us_per_run"] / m["cpu_us_per_run"]
            ratios.append(ratio)
            print(f"      ratio executor / minimal: {ratio:.2f}  (requests/s: executor {e['wrk_requests_per_s']:.0f}, "
                  f"minimal {m['wrk_requests_per_s']:.0f})")

    def median_of(server, col):
        v = [r[col] for r in rows if r["server"] == server and r[col] is not None]
        return round(statistics.median(v), 1) if v else None
    res = {
        "connections": a.connections, "jobs": a.jobs, "threads": a.threads, "windows": rows,
        "executor_us_per_run_median": median_of("executor", "cpu_us_per_run"),
        "minimal_us_per_run_median": median_of("minimal", "cpu_us_per_run"),
        "executor_requests_per_s_median": median_of("executor", "wrk_requests_per_s"),
        "minimal_requests_per_s_median": median_of("minimal", "wrk_requests_per_s"),
        "ratios": [round(x, 3) for x in ratios],
        "ratio_median": round(statistics.median(ratios), 3) if ratios else None,
        "goal": GOAL,
    }
    print(f"median over {len(ratios)} round(s): executor {res['executor_us_per_run_median']} µs/run at "
          f"{res['executor_requests_per_s_median']} req/s, minimal {res['minimal_us_per_run_median']} µs/run at "
          f"{res['minimal_requests_per_s_median']} req/s; ratio executor / minimal {res['ratio_median']} "
          f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}); goal <= {GOAL}: "
          + ("-" if res["ratio_median"] is None else ("met" if res["ratio_median"] <= GOAL else "NOT met")))
    bad = [r for r in rows if not r["received"]]
    if bad:
        print(f"warning: {len(bad)} window(s) with no request in the trace: see {a.dir}", file=sys.stderr)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if ratios else 1


if __name__ == "__main__":
    sys.exit(main())
