#!/usr/bin/env python3
"""Console reads beside the fire path (bench/fire_lag.sh, BENCH_CONSOLE_READS=R): what the console's pages
cost an admin and PostgreSQL while N jobs fire (docs/scaling.md, "The console's reads").

Signs in as `admin`, then sends R GET requests a second, paced (not as fast as possible), cycling through
what the console's pages read: the dashboard, the job list, the fires list (all fires, one job's, the failed
ones), one fire, and the alerts. Stops at --until-ms (epoch milliseconds) and writes one JSON object with
each route's count, errors and latency p50/p99/max in milliseconds to --out.

The standard library only (urllib), one request at a time: a second of late answers delays the next ones,
and the achieved rate is reported beside the asked one.
"""
import argparse
import json
import time
import urllib.error
import urllib.request


def quantile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True, help="the admin's HTTP port on 127.0.0.1")
    ap.add_argument("--password", required=True, help="the 'admin' user's password")
    ap.add_argument("--rate", type=float, required=True, help="requests a second")
    ap.add_argument("--from-ms", type=int, required=True, help="start at this epoch millisecond")
    ap.add_argument("--until-ms", type=int, required=True, help="stop at this epoch millisecond")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    base = f"http://127.0.0.1:{a.port}"
    login = urllib.request.Request(base + "/api/v1/auth/login", method="POST",
                                   data=json.dumps({"username": "admin", "password": a.password}).encode(),
                                   headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(login, timeout=10) as r:
        cookie = next(v.split(";")[0] for k, v in r.getheaders()
                      if k.lower() == "set-cookie" and v.startswith("cw_session="))

    def get(path):
        req = urllib.request.Request(base + path, headers={"Cookie": cookie})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")

    # A job and a fire to open, as a user clicking from the lists would.
    while time.time() * 1000 < a.from_ms:
        time.sleep(0.05)
    jobs = get("/api/v1/jobs?limit=20")
    job_id = jobs["items"][0]["id"] if jobs.get("items") else 1
    fires = get(f"/api/v1/logs?job_id={job_id}&limit=20")
    fire_id = fires["items"][0]["id"] if fires.get("items") else 1
    routes = [
        ("dashboard", "/api/v1/dashboard"),
        ("jobs page", "/api/v1/jobs?limit=20"),
        ("fires page", "/api/v1/logs?limit=20"),
        ("a job's fires", f"/api/v1/logs?job_id={job_id}&limit=20"),
        ("failed fires", "/api/v1/logs?status=FAILED&limit=20"),
        ("a fire", f"/api/v1/logs/{fire_id}"),
        ("a job", f"/api/v1/jobs/{job_id}"),
        ("alerts", "/api/v1/alerts?limit=20"),
    ]
    stats = {name: {"path": path, "ms": [], "errors": 0} for name, path in routes}
    period = 1.0 / a.rate
    started = time.monotonic()
    i = 0
    while time.time() * 1000 < a.until_ms:
        name, path = routes[i % len(routes)]
        t = time.monotonic()
        try:
            get(path)
            stats[name]["ms"].append((time.monotonic() - t) * 1000)
        except (urllib.error.URLError, OSError, ValueError) as e:
            stats[name]["errors"] += 1
            stats[name].setdefault("error", str(e))
        i += 1
        delay = started + i * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    elapsed = time.monotonic() - started
    out = {"asked_rate": a.rate, "achieved_rate": i / elapsed if elapsed > 0 else 0, "requests": i, "routes": {}}
    for name, s in stats.items():
        out["routes"][name] = {"path": s["path"], "count": len(s["ms"]), "errors": s["errors"],
                               "p50_ms": quantile(s["ms"], 0.5), "p99_ms": quantile(s["ms"], 0.99),
                               "max_ms": max(s["ms"]) if s["ms"] else None, "error": s.get("error")}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    rows = [f"console reads: {out['requests']} requests, {out['achieved_rate']:.1f}/s (asked {a.rate}/s)"]
    for name, r in out["routes"].items():
        p = lambda v: "-" if v is None else f"{v:.1f}"
        rows.append(f"  {name:14} n={r['count']:5} errors={r['errors']} p50={p(r['p50_ms'])} ms "
                    f"p99={p(r['p99_ms'])} ms max={p(r['max_ms'])} ms")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
