#!/usr/bin/python3
"""Tests of scripts/demo_fires.py, the demo's fire printer (ctest: demo_fire_printer, label unit).

The printer sees the newest fires of the sample job every few seconds and must print every fire once, when it
has its result, whatever order fires finish in: a scheduled fire still running while a manual one finishes
is printed when it finishes too (it was skipped for good when the printer remembered only the highest id).
"""
import bisect
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "demo_fires.py")
spec = importlib.util.spec_from_file_location("demo_fires", SCRIPT)
demo_fires = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo_fires)

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def fire(id, status, scheduled_ms=None, trigger_type="CRON", address="http://127.0.0.1:9991/"):
    return {"id": id, "job_id": 1, "trigger_type": trigger_type, "status": status,
            "scheduled_ms": T0 + id * 5000 if scheduled_ms is None else scheduled_ms,
            "executor_address": address}


def window(*fires):
    """The API's answer: newest scheduled first."""
    return sorted(fires, key=lambda f: -f["scheduled_ms"])


def ids(lines):
    return [int(line.split()[1]) for line in lines]


class NewLines(unittest.TestCase):
    def test_a_fire_finishing_after_a_newer_manual_fire_is_printed_when_it_finishes(self):
        # The bug: fire 20 (CRON) still RUNNING while manual fire 21 finished; the printer moved past 20.
        printed = set()
        manual = dict(scheduled_ms=T0 + 20 * 5000 + 1200, trigger_type="MANUAL")
        first = demo_fires.new_lines(window(fire(19, "SUCCESS"), fire(20, "RUNNING"), fire(21, "SUCCESS", **manual)),
                                     printed, T0)
        self.assertEqual(ids(first), [19, 21])
        second = demo_fires.new_lines(window(fire(19, "SUCCESS"), fire(20, "SUCCESS"), fire(21, "SUCCESS", **manual),
                                             fire(22, "PENDING")), printed, T0)
        self.assertEqual(ids(second), [20], "fire 20, once it has its result; 19 and 21 not again")
        self.assertEqual(demo_fires.new_lines(window(fire(20, "SUCCESS"), fire(21, "SUCCESS", **manual)), printed, T0),
                         [], "nothing twice")

    def test_only_fires_with_a_result_are_printed(self):
        printed = set()
        lines = demo_fires.new_lines(window(fire(1, "PENDING"), fire(2, "RUNNING"), fire(3, "SUCCESS"),
                                            fire(4, "FAILED"), fire(5, "SKIPPED", address="")), printed, T0)
        self.assertEqual(ids(lines), [3, 4, 5])
        self.assertEqual(printed, {3, 4, 5})
        self.assertTrue(lines[2].endswith("-> SKIPPED"), lines[2])

    def test_every_trigger_type_of_the_job_is_printed(self):
        kinds = ["CRON", "MANUAL", "RETRY", "PARENT", "API", "MISFIRE"]
        lines = demo_fires.new_lines(window(*[fire(i + 1, "SUCCESS", trigger_type=k) for i, k in enumerate(kinds)]),
                                     set(), T0)
        self.assertEqual([line.split()[5] for line in lines], ["(%s)" % k for k in kinds])

    def test_fires_scheduled_before_the_demo_started_stay_quiet(self):
        printed = set()
        lines = demo_fires.new_lines(window(fire(7, "SUCCESS"), fire(8, "SUCCESS"), fire(9, "SUCCESS")),
                                     printed, T0 + 8 * 5000)
        self.assertEqual(ids(lines), [8, 9])

    def test_the_line(self):
        line = demo_fires.fire_line(fire(4, "SUCCESS", scheduled_ms=T0 + 3_723_000, trigger_type="MANUAL"))
        self.assertEqual(line, "fire 4 of job 1 (MANUAL) scheduled 01:02:03Z -> SUCCESS on http://127.0.0.1:9991/")

    def test_a_long_run_in_any_finishing_order_prints_every_fire_exactly_once(self):
        # 3,000 fires, one every 5 s with a manual fire now and then, each taking 0 to 60 s (polls every 2 s see
        # it RUNNING until then), polled through the demo's window of the newest 100: each printed once.
        rng = random.Random(25)
        fires, finish = [], {}
        t = T0
        for n in range(1, 3001):
            t += 5000 if rng.random() < 0.8 else rng.randrange(200, 4800)  # CRON, or a manual fire between
            fires.append(fire(n, "PENDING", scheduled_ms=t, trigger_type="CRON" if n % 5 else "MANUAL"))
            finish[n] = t + rng.choice([0, 500, 2000, 8000, 30000, 60000])
        scheduled = [f["scheduled_ms"] for f in fires]  # increasing
        printed, count = set(), {}
        for now in range(T0, t + 70_000, 2000):
            due = bisect.bisect_right(scheduled, now)
            answer = [dict(f, status="SUCCESS" if finish[f["id"]] <= now else "RUNNING")
                      for f in reversed(fires[max(0, due - 100):due])]
            for n in ids(demo_fires.new_lines(answer, printed, T0)):
                count[n] = count.get(n, 0) + 1
            printed = set(demo_fires.remembered(printed))  # what the state file keeps between calls
        self.assertEqual(sorted(count), list(range(1, 3001)), "every fire printed")
        self.assertEqual(set(count.values()), {1}, "none twice")
        self.assertLessEqual(len(printed), demo_fires.MAX_REMEMBERED)

    def test_remembered_keeps_the_newest_ids(self):
        self.assertEqual(demo_fires.remembered({5, 1, 9, 3}, limit=2), [5, 9])


class Main(unittest.TestCase):
    def run_printer(self, state, answer, since_ms=T0):
        return subprocess.run([sys.executable, SCRIPT, "--state", state, "--since-ms", str(since_ms)],
                              input=answer, capture_output=True, text=True, check=True)

    def test_the_state_file_carries_the_printed_ids_between_calls(self):
        with tempfile.TemporaryDirectory() as d:
            state = os.path.join(d, "printed.json")
            out = self.run_printer(state, json.dumps({"total": 2, "items": window(fire(1, "RUNNING"), fire(2, "SUCCESS"))}))
            self.assertEqual(ids(out.stdout.splitlines()), [2])
            with open(state, encoding="utf-8") as f:
                self.assertEqual(json.load(f), [2])
            out = self.run_printer(state, json.dumps({"total": 2, "items": window(fire(1, "FAILED"), fire(2, "SUCCESS"))}))
            self.assertEqual(ids(out.stdout.splitlines()), [1])
            out = self.run_printer(state, json.dumps({"total": 2, "items": window(fire(1, "FAILED"), fire(2, "SUCCESS"))}))
            self.assertEqual(out.stdout, "")

    def test_a_bad_answer_prints_nothing_and_keeps_the_state(self):
        with tempfile.TemporaryDirectory() as d:
            state = os.path.join(d, "printed.json")
            with open(state, "w", encoding="utf-8") as f:
                json.dump([3], f)
            for answer in ["", "<html>502</html>", '{"error": "unavailable"}']:
                out = self.run_printer(state, answer)
                self.assertEqual(out.stdout, "", answer)
            with open(state, encoding="utf-8") as f:
                self.assertEqual(json.load(f), [3])


if __name__ == "__main__":
    unittest.main(verbosity=2)
