#!/usr/bin/env python3
"""Samples CPU time and resident memory of benchmark processes from /proc, until SIGTERM/SIGINT.

  procsample.py --out samples.csv [--interval 0.25] name=PID ... [--pg POSTMASTER_PID]

Each row: epoch ms, name, CPU seconds so far (user + system), RSS in KiB. For --pg the row is named
"postgres" and sums every PostgreSQL process: the postmaster, its live children, and the children that
already exited (their time is in the postmaster's cutime/cstime once reaped), so backends that come and go
are counted too. Ratios and differences between two rows of one name give CPU use over an interval.
"""
import argparse
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    # comm may contain spaces: split after the closing parenthesis.
    rest = s[s.rindex(")") + 2:].split()
    # rest[0] is state (field 3); utime is field 14, stime 15, cutime 16, cstime 17, ppid field 4.
    return {"ppid": int(rest[1]), "utime": int(rest[11]), "stime": int(rest[12]),
            "cutime": int(rest[13]), "cstime": int(rest[14])}


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children_of(ppid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if stat_fields(int(d))["ppid"] == ppid:
                out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--interval", type=float, default=0.25)
    ap.add_argument("--pg", type=int, default=0, help="postmaster pid")
    ap.add_argument("procs", nargs="*", help="name=pid")
    a = ap.parse_args()
    procs = [(p.split("=")[0], int(p.split("=")[1])) for p in a.procs]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(a.out, "w") as out:
        out.write("ms,name,cpu_s,rss_kb\n")
        while not stop:
            now = int(time.time() * 1000)
            for name, pid in procs:
                try:
                    f = stat_fields(pid)
                    out.write(f"{now},{name},{(f['utime'] + f['stime']) / TICK:.3f},{rss_kb(pid)}\n")
                except OSError:
                    pass
            if a.pg:
                try:
                    f = stat_fields(a.pg)
                    ticks = f["utime"] + f["stime"] + f["cutime"] + f["cstime"]
                    rss = rss_kb(a.pg)
                    for c in children_of(a.pg):
                        try:
                            cf = stat_fields(c)
                            ticks += cf["utime"] + cf["stime"]
                        except OSError:
                            pass
                    out.write(f"{now},postgres,{ticks / TICK:.3f},{rss}\n")
                except OSError:
                    pass
            out.flush()
            time.sleep(a.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
