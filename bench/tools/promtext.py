#!/usr/bin/env python3
"""Reads Prometheus text expositions (an admin's GET /metrics) and differences two scrapes of one process:
counters and histograms over the interval between the scrapes, gauges as they were at each.

  promtext.py START END [NAME...]      prints each named series (or all) at START, at END and the difference

Quantiles of a histogram's difference are estimated as Prometheus' histogram_quantile() does: linear
interpolation inside the bucket that holds the rank, the upper bound of the last finite bucket when the
rank falls in +Inf. So they are only as fine as the buckets (cronwheel's latency buckets:
metrics::LatencyBuckets()).
"""
import math
import re
import sys

_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(path):
    """{(name, frozenset of (label, value)): value} of every sample in the file; {} if it is missing."""
    out = {}
    try:
        text = open(path).read()
    except OSError:
        return out
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            continue
        labels = frozenset(_LABEL.findall(m.group(3) or ""))
        try:
            out[(m.group(1), labels)] = float(m.group(4))
        except ValueError:
            pass
    return out


def total(samples, name, **match):
    """Sum of every series of `name` whose labels include `match`; None when there is none."""
    vals = [v for (n, labels), v in samples.items() if n == name and set(match.items()) <= labels]
    return sum(vals) if vals else None


def delta(start, end, name, **match):
    a, b = total(start, name, **match), total(end, name, **match)
    if b is None:
        return None
    return b - (a or 0.0)


def histogram(start, end, name):
    """The difference of histogram `name` (labels other than le summed): ([(upper bound, cumulative
    count)], count, sum), or None when END has no such histogram."""
    buckets = {}
    for (n, labels), v in end.items():
        if n != name + "_bucket":
            continue
        le = dict(labels).get("le")
        if le is None:
            continue
        bound = math.inf if le in ("+Inf", "Inf") else float(le)
        before = start.get((n, labels), 0.0)
        buckets[bound] = buckets.get(bound, 0.0) + v - before
    if not buckets:
        return None
    return (sorted(buckets.items()), delta(start, end, name + "_count") or 0.0,
            delta(start, end, name + "_sum") or 0.0)


def quantile(hist, q):
    """histogram_quantile(q) of a histogram() result; nan when it counted nothing."""
    if hist is None:
        return math.nan
    buckets, count, _ = hist
    if count <= 0 or not buckets:
        return math.nan
    rank = q * count
    lower, below = 0.0, 0.0
    for bound, cum in buckets:
        if cum >= rank:
            if math.isinf(bound):
                return lower
            inside = cum - below
            return lower + (bound - lower) * ((rank - below) / inside if inside > 0 else 1.0)
        lower, below = bound, cum
    return lower


def mean(hist):
    if hist is None or hist[1] <= 0:
        return math.nan
    return hist[2] / hist[1]


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    start, end = parse(sys.argv[1]), parse(sys.argv[2])
    names = sys.argv[3:] or sorted({n for n, _ in end})
    for name in names:
        h = histogram(start, end, name)
        if h is not None:
            print(f"{name}: count {h[1]:g}, sum {h[2]:g}, mean {mean(h):.6g}, p50 {quantile(h, 0.5):.6g}, "
                  f"p99 {quantile(h, 0.99):.6g}")
        else:
            print(f"{name}: start {total(start, name)}, end {total(end, name)}, "
                  f"difference {delta(start, end, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
