#!/usr/bin/python3
"""The fire printer of scripts/demo: one line per fire of the sample job, once, when the fire has its result.

  demo_fires.py --state FILE --since-ms MS  <  answer of GET /api/v1/logs?job_id=J&limit=N

Reads one answer of the REST API's fire list (the newest N fires of the job, of every trigger type: CRON,
MANUAL, RETRY, PARENT, ...) on stdin, and prints a line for each fire in it that has its result (SUCCESS,
FAILED or SKIPPED), was scheduled at or after --since-ms (so an earlier run's fires stay quiet) and has not
been printed before. FILE keeps the ids printed between calls (JSON, the newest MAX_REMEMBERED), so a fire
that finishes after a newer one, as a scheduled fire still running when a manual one finishes, is printed
when it finishes, and no fire twice. The caller asks for a window of recent fires each time, not for the
ones above an id: a fire is printed as long as it has its result while still among the newest N.

Exit 0; a bad answer (the admin restarting) prints nothing and keeps FILE as it was.
"""
import argparse
import datetime
import json
import os
import sys

# Fires with a result. PENDING and RUNNING ones are printed later, when a window shows them with one.
FINAL = ("SUCCESS", "FAILED", "SKIPPED")
# Ids kept in the state: well above any window the demo asks for (100), so a fire of the window is never
# forgotten while it can still be shown, and the file stays small however long the demo runs.
MAX_REMEMBERED = 1000


def fire_line(fire):
    """The line printed for one fire (an item of GET /api/v1/logs)."""
    when = datetime.datetime.fromtimestamp(fire["scheduled_ms"] / 1000, datetime.timezone.utc)
    line = "fire %d of job %d (%s) scheduled %sZ -> %s" % (
        fire["id"], fire["job_id"], fire.get("trigger_type") or "?", when.strftime("%H:%M:%S"), fire["status"])
    if fire.get("executor_address"):
        line += " on " + fire["executor_address"]
    return line


def new_lines(items, printed, since_ms):
    """Lines for the fires of `items` to print now, in id order; adds their ids to `printed` (a set).

    A fire is printed once it has a final status, if it was scheduled at or after `since_ms` and its id is not
    in `printed`. Pure apart from updating `printed`.
    """
    lines = []
    for fire in sorted(items, key=lambda f: f["id"]):
        if fire["id"] in printed or fire["status"] not in FINAL or fire["scheduled_ms"] < since_ms:
            continue
        printed.add(fire["id"])
        lines.append(fire_line(fire))
    return lines


def remembered(printed, limit=MAX_REMEMBERED):
    """The ids worth keeping: the `limit` newest (highest) of `printed`, sorted."""
    return sorted(printed)[-limit:]


def load_state(path):
    try:
        with open(path, encoding="utf-8") as f:
            return set(json.load(f))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError, TypeError):
        return set()  # unreadable: start again; at worst fires still in the window are printed again


def save_state(path, printed):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(remembered(printed), f)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", required=True, help="file of the ids printed so far (created when missing)")
    ap.add_argument("--since-ms", type=int, required=True, help="print only fires scheduled at or after this")
    args = ap.parse_args(argv)
    try:
        items = json.load(sys.stdin)["items"]
    except (ValueError, KeyError, TypeError):
        return 0
    printed = load_state(args.state)
    lines = new_lines(items, printed, args.since_ms)
    for line in lines:
        print(line, flush=True)
    if lines:
        save_state(args.state, printed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
