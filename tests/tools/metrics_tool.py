#!/usr/bin/python3
"""Checks of cronwheel's Prometheus metrics and of the monitoring stack built on them (docs/operations.md).

  metrics_tool.py parse FILE
      Parses a /metrics exposition with the official Python client's parser
      (prometheus_client.parser.text_string_to_metric_families), checks what the parser does not (every
      histogram's buckets are cumulative and monotonic and end with le="+Inf" equal to _count; counters are
      not negative; every family has HELP and TYPE) and prints the families as JSON:
      {"families": {name: {"type", "help", "samples": [{"name", "labels", "value"}]}}}. Exit 1 on a problem.

  metrics_tool.py queries --exposition FILE... --rules rules.yml --dashboard dashboard.json
      Every cronwheel_* series a rule or a dashboard panel queries must be a sample name in one of the
      expositions (dumped from a running admin and executor by the e2e test): a renamed metric must not
      leave a silent, empty panel or an alert that can never fire.

  metrics_tool.py dashboard --schema SCHEMA DASHBOARD...
      Validates Grafana dashboard JSON against our schema of the parts Grafana needs (python3-jsonschema),
      and checks that panel ids are unique and every panel's datasource is the provisioned one.
"""
import argparse
import json
import math
import re
import sys


def parse(text):
    from prometheus_client.parser import text_string_to_metric_families

    problems = []
    families = {}
    # HELP and TYPE lines per name, read directly: the parser fills in defaults when they are missing.
    helps = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    for fam in text_string_to_metric_families(text):
        samples = [{"name": s.name, "labels": dict(s.labels), "value": s.value} for s in fam.samples]
        families[fam.name] = {"type": fam.type, "help": fam.documentation, "samples": samples}
        exposed = fam.name + "_total" if fam.type == "counter" else fam.name
        if exposed not in helps or exposed not in types:
            problems.append(f"{exposed}: no # HELP or # TYPE line")
        if fam.type == "counter":
            for s in samples:
                if s["value"] < 0 or math.isnan(s["value"]):
                    problems.append(f"{s['name']}{s['labels']}: counter value {s['value']}")
        if fam.type == "histogram":
            problems += check_histogram(fam.name, samples)
    return families, problems


def check_histogram(name, samples):
    problems = []
    series = {}
    for s in samples:
        key = tuple(sorted((k, v) for k, v in s["labels"].items() if k != "le"))
        series.setdefault(key, {"buckets": [], "count": None, "sum": None})
        if s["name"] == name + "_bucket":
            series[key]["buckets"].append((float(s["labels"]["le"]), s["value"]))
        elif s["name"] == name + "_count":
            series[key]["count"] = s["value"]
        elif s["name"] == name + "_sum":
            series[key]["sum"] = s["value"]
    for key, s in series.items():
        where = f"{name}{dict(key)}"
        b = s["buckets"]
        if not b:
            problems.append(f"{where}: no buckets")
            continue
        if [le for le, _ in b] != sorted(le for le, _ in b):
            problems.append(f"{where}: buckets not in increasing le order")
        if b[-1][0] != math.inf:
            problems.append(f"{where}: the last bucket is not le=\"+Inf\"")
        counts = [c for _, c in b]
        if any(later < earlier for earlier, later in zip(counts, counts[1:])):
            problems.append(f"{where}: bucket counts are not cumulative (they decrease): {counts}")
        if s["count"] is None or s["sum"] is None:
            problems.append(f"{where}: _count or _sum missing")
        elif b[-1][1] != s["count"]:
            problems.append(f"{where}: +Inf bucket {b[-1][1]} != _count {s['count']}")
    return problems


def expressions_of_dashboard(path):
    with open(path) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                if "expr" in t:
                    out.append((f"{path}: panel '{p.get('title')}'", t["expr"]))
            walk(p.get("panels", []))

    walk(dash.get("panels", []))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if isinstance(q, str):
            out.append((f"{path}: variable '{v.get('name')}'", q))
    return out


def expressions_of_rules(path):
    import yaml

    with open(path) as f:
        doc = yaml.safe_load(f)
    out = []
    for g in doc.get("groups", []):
        for r in g.get("rules", []):
            out.append((f"{path}: rule '{r.get('alert') or r.get('record')}'", r["expr"]))
    return out


def cmd_parse(args):
    with open(args.file) as f:
        families, problems = parse(f.read())
    for p in problems:
        print(f"metrics_tool: {p}", file=sys.stderr)
    json.dump({"families": families}, sys.stdout, default=str)
    print()
    return 1 if problems else 0


def cmd_queries(args):
    names = set()
    for path in args.exposition:
        with open(path) as f:
            families, problems = parse(f.read())
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        for fam in families.values():
            names.update(s["name"] for s in fam["samples"])
    exprs = []
    for path in args.rules or []:
        exprs += expressions_of_rules(path)
    for path in args.dashboard or []:
        exprs += expressions_of_dashboard(path)
    if not exprs:
        print("metrics_tool: no expressions found", file=sys.stderr)
        return 1
    missing = 0
    used = set()
    for where, expr in exprs:
        for name in re.findall(r"\bcronwheel_[a-zA-Z0-9_:]*", expr):
            used.add(name)
            if name not in names:
                missing += 1
                print(f"metrics_tool: {where} queries {name}, which no exposition has", file=sys.stderr)
    print(f"metrics_tool: {len(exprs)} expressions, {len(used)} distinct cronwheel series, {missing} missing")
    return 1 if missing else 0


def cmd_dashboard(args):
    import jsonschema

    with open(args.schema) as f:
        schema = json.load(f)
    bad = 0
    for path in args.dashboards:
        with open(path) as f:
            dash = json.load(f)
        validator = jsonschema.Draft7Validator(schema)
        for e in sorted(validator.iter_errors(dash), key=lambda e: list(e.path)):
            bad += 1
            print(f"metrics_tool: {path}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
        ids = [p.get("id") for p in dash.get("panels", [])]
        if len(ids) != len(set(ids)):
            bad += 1
            print(f"metrics_tool: {path}: panel ids are not unique: {ids}", file=sys.stderr)
        print(f"metrics_tool: {path}: {len(dash.get('panels', []))} panels checked")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse")
    p.add_argument("file")
    q = sub.add_parser("queries")
    q.add_argument("--exposition", nargs="+", required=True)
    q.add_argument("--rules", nargs="*")
    q.add_argument("--dashboard", nargs="*")
    d = sub.add_parser("dashboard")
    d.add_argument("--schema", required=True)
    d.add_argument("dashboards", nargs="+")
    args = ap.parse_args()
    return {"parse": cmd_parse, "queries": cmd_queries, "dashboard": cmd_dashboard}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
