#!/usr/bin/env python3
"""bench guard's verdict: this run's figures against the committed baselines (bench/baselines/guard.json).

Each figure is a median over the run's samples (executor-cpu's rounds, dispatch's bursts, fire-lag's
repeats); its noise is the spread of those samples (max - min), and the baseline keeps its own. A figure
has moved when it differs from the baseline by more than the larger of the two spreads and its floor (a
share of the baseline: what runs of one binary on this box differ by even when their samples agree).
Missed and duplicate fires have no noise: any above the baseline's is a move. Prints one line per figure
and exits 1 when one moved the wrong way (2 on a missing input), so a script can stop on it.

  guard_compare.py --out bench/out [--baseline bench/baselines/guard.json] [--save]
"""
import argparse
import json
import statistics
import sys
from pathlib import Path


def spread(v):
    return max(v) - min(v) if len(v) > 1 else 0.0


def figures(out):
    """The figures of this run: name -> {value, samples, better ('lower'|'higher'|'zero'), floor}."""
    f = {}
    ecpu = json.loads((out / "executor-cpu" / "results.json").read_text())
    r = [x for x in ecpu["ratios"] if x is not None]
    f["executor_cpu_ratio"] = {"samples": r, "better": "lower", "floor": 0.15,
                               "what": "cronwheel-executor CPU per /run / the minimal server's"}
    disp = json.loads((out / "dispatch" / "results.json").read_text())
    wrk = disp["wrk_rate_at_executor"]
    rates = [b["steady_rate"] / wrk for b in disp["bursts"] if b.get("received") and wrk]
    f["dispatch_ratio"] = {"samples": rates, "better": "higher", "floor": 0.15,
                           "what": "admin's send rate / wrk's, to one executor"}
    runs = [json.loads(line) for line in (out / "fire-lag" / "results.jsonl").read_text().splitlines() if line]
    f["fire_lag_p99_ms"] = {"samples": [float(x["p99_ms"]) for x in runs], "better": "lower", "floor": 0.5,
                            "what": f"fire-lag p99 at N = {runs[0]['n']} (ms)"}
    f["fire_lag_missed"] = {"samples": [float(x["missed"] + x["duplicates"]) for x in runs], "better": "zero",
                            "floor": 0.0, "what": "fire-lag missed + duplicate fires"}
    for v in f.values():
        v["value"] = statistics.median(v["samples"]) if v["samples"] else float("nan")
        v["noise"] = spread(v["samples"])
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", default=str(Path(__file__).resolve().parents[1] / "baselines" / "guard.json"))
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    try:
        now = figures(Path(a.out))
    except (OSError, KeyError, ValueError, IndexError) as e:
        print(f"bench guard: a benchmark left no usable result ({e})", file=sys.stderr)
        return 2
    if a.save:
        Path(a.baseline).write_text(json.dumps({"label": a.label, "figures": now}, indent=1) + "\n")
        print(f"bench guard: baselines saved to {a.baseline}")
    try:
        base = json.loads(Path(a.baseline).read_text())["figures"]
    except (OSError, KeyError, ValueError) as e:
        print(f"bench guard: no baselines to compare with ({e}); run with --save to record them", file=sys.stderr)
        return 2
    worse = []
    print(f"{'figure':<20}{'baseline':>12}{'now':>12}{'allowed':>10}  verdict  ({'what'})")
    for name, n in now.items():
        b = base.get(name)
        if b is None:
            print(f"{name:<20}{'-':>12}{n['value']:>12.3f}{'':>10}  new")
            continue
        if n["better"] == "zero":
            moved = n["value"] > b["value"]
            allowed = 0.0
            verdict = "WORSE" if moved else "same"
        else:
            allowed = max(n["noise"], b.get("noise", 0.0), n["floor"] * abs(b["value"]))
            diff = n["value"] - b["value"]
            if abs(diff) <= allowed:
                verdict = "same"
            elif (diff > 0) == (n["better"] == "lower"):
                verdict = "WORSE"
            else:
                verdict = "better"
        if verdict == "WORSE":
            worse.append(name)
        print(f"{name:<20}{b['value']:>12.3f}{n['value']:>12.3f}{allowed:>10.3f}  {verdict:<7}  ({n['what']}; "
              f"samples {', '.join(f'{x:.3f}' for x in n['samples'])})")
    if worse:
        print(f"bench guard: moved beyond the noise the wrong way: {', '.join(worse)}")
        return 1
    print("bench guard: nothing moved beyond the noise the wrong way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
