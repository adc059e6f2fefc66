#!/usr/bin/env python3
"""The client of the start-burst benchmark (bench/start_burst.sh): sends cronwheel-executor N fires ahead for
one instant, as an admin sending ahead does (POST /runs, 1,000 fires a request, each with runAtMs = the
instant), waits for the instant, and repeats for --instants instants. Then, after the executor has stopped
(its run trace is complete), reads the trace and prints each instant's start lag: the handler's start
(the trace's fourth column) less the instant.

  start_burst.py send --port P --token T --n N --instants K --first-log-id L --lead-ms MS --pid PID --out F
  start_burst.py report --trace FILE --sent F

send writes one JSON line per instant to F: the instant, the log ids sent, the answers that were not "held",
and the executor's CPU seconds (utime + stime of /proc/PID/stat) 100 ms before the instant and 900 ms after.
report matches the trace against those lines and prints one line per instant and the medians.
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def sleep_until_ms(t_ms):
    while True:
        left = t_ms / 1000 - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))


def send(a):
    log_id = a.first_log_id
    with open(a.out, "w") as out:
        for _ in range(a.instants):
            # The next whole second at least lead-ms away: every batch is sent and answered before it.
            instant = (int(time.time() * 1000 + a.lead_ms) // 1000 + 1) * 1000
            conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
            first = log_id
            not_held = []
            for start in range(0, a.n, 1000):
                runs = [{"jobId": j + 1, "executorHandler": "noopJobHandler", "executorParams": "",
                         "executorBlockStrategy": "SERIAL_EXECUTION", "executorTimeout": 0,
                         "logId": log_id + j, "logDateTime": instant, "glueType": "BEAN", "glueSource": "",
                         "glueUpdatetime": 0, "broadcastIndex": 0, "broadcastTotal": 0, "runAtMs": instant}
                        for j in range(start, min(a.n, start + 1000))]
                conn.request("POST", "/runs", json.dumps({"runs": runs}),
                             {"Content-Type": "application/json", "XXL-JOB-ACCESS-TOKEN": a.token})
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    sys.exit(f"POST /runs: HTTP {resp.status}: {body[:300]!r}")
                answers = json.loads(body)["content"]["answers"]
                not_held += [x["msg"] for x in answers if x.get("code") != 200 or "held" not in (x.get("msg") or "")]
            conn.close()
            log_id += a.n
            sent_ms = int(time.time() * 1000)
            if sent_ms >= instant - 100:
                sys.exit(f"the fires for {instant} were sent {sent_ms - instant} ms before it: raise --lead-ms")
            sleep_until_ms(instant - 100)
            before = cpu_s(a.pid)
            sleep_until_ms(instant + 900)
            after = cpu_s(a.pid)
            out.write(json.dumps({"instant_ms": instant, "first_log_id": first, "n": a.n, "sent_ms": sent_ms,
                                  "not_held": not_held[:5], "not_held_count": len(not_held),
                                  "cpu_s": after - before}) + "\n")
            out.flush()


def pct(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def report(a):
    instants = [json.loads(line) for line in open(a.sent)]
    started = {}
    for line in open(a.trace):
        f = line.split()
        if len(f) == 4:
            started[int(f[0])] = int(f[3])
    rows = []
    for i in instants:
        ids = range(i["first_log_id"], i["first_log_id"] + i["n"])
        lags = sorted(started[x] - i["instant_ms"] for x in ids if x in started)
        missing = i["n"] - len(lags)
        if not lags:
            print(f"instant {i['instant_ms']}: none of {i['n']} fires started")
            rows.append(None)
            continue
        row = {"p50": pct(lags, 0.5), "p99": pct(lags, 0.99), "max": lags[-1], "min": lags[0],
               "missing": missing, "not_held": i["not_held_count"], "cpu_us": i["cpu_s"] * 1e6 / i["n"]}
        rows.append(row)
        print(f"instant {i['instant_ms']}: {len(lags)} of {i['n']} started, start lag min {row['min']} p50 "
              f"{row['p50']} p99 {row['p99']} max {row['max']} ms; not held {row['not_held']}; executor CPU "
              f"{row['cpu_us']:.1f} us per fire (instant -100 ms .. +900 ms)")
    good = [r for r in rows if r]
    if good:
        print(f"medians over {len(good)} instants: start lag p50 {statistics.median(r['p50'] for r in good)} ms, "
              f"p99 {statistics.median(r['p99'] for r in good)} ms, max {statistics.median(r['max'] for r in good)} "
              f"ms; executor CPU {statistics.median(r['cpu_us'] for r in good):.1f} us per fire; missing "
              f"{sum(r['missing'] for r in good)}, not held {sum(r['not_held'] for r in good)}")
    return 0 if good and all(r and r["missing"] == 0 and r["not_held"] == 0 for r in rows) else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--instants", type=int, required=True)
    s.add_argument("--first-log-id", type=int, required=True)
    s.add_argument("--lead-ms", type=int, required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--out", required=True)
    r = sub.add_parser("report")
    r.add_argument("--trace", required=True)
    r.add_argument("--sent", required=True)
    a = p.parse_args()
    if a.cmd == "send":
        send(a)
        return 0
    return report(a)


if __name__ == "__main__":
    sys.exit(main())
