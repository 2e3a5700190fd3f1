#!/usr/bin/env python3
"""Writes the nightly allocation report, <date>-alloc.json and <date>-alloc.md, from what
ci/gpu-nightly's allocation stage left in OUT_DIR:

  alloc_bench.json     bench/alloc_bench --benchmark_format=json: one benchmark per trace,
                       allocator and backend, "BM_Replay/<trace>/<allocator>/<backend>", with
                       the counters ns_per_op, p99_ns, reserved_high, used_high,
                       reserved_per_used and driver_calls
  footprint.log        ctest output of pool_footprint_real_test: lines
                       "FOOTPRINT {json with trace, config, steps, differing_steps,
                       fake_reserved_high, real_reserved_high, fake_used_high, real_used_high}"

The reports go into OUT_DIR (or --out-dir); committed, they live in docs/reports/.

    ci/alloc_report.py OUT_DIR [--bench FILE] [--footprint FILE] [--out-dir DIR] [--date YYYY-MM-DD]

Exit status 0 when both inputs were read and no benchmark failed; 1 otherwise (the report is
written either way, saying what is missing); 2 for a bad command line.
"""
import argparse
import datetime
import json
import os
import re
import sys

METRICS = ("ns_per_op", "p99_ns", "reserved_high", "used_high", "reserved_per_used", "driver_calls")
FOOTPRINT_FIELDS = ("trace", "config", "steps", "differing_steps", "fake_reserved_high",
                    "real_reserved_high", "fake_used_high", "real_used_high")
MIB = 1024 * 1024
# trace/replay.h's order (ReplayAllocatorKinds); others after them, by name.
ALLOCATORS = ("driver-pool", "core", "core-expandable", "core-pool", "pytorch")


def read_bench(path):
    """Returns (rows, problem): one row per trace, allocator and backend, sorted by them."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not text.strip():
            return [], f"{path}: empty (no benchmark ran; alloc_bench's stderr says why)"
        data = json.loads(text)
    except OSError as e:
        return [], f"{path}: {e.strerror}"
    except json.JSONDecodeError as e:
        return [], f"{path}: not JSON ({e})"
    rows = {}
    for b in data.get("benchmarks", []):
        name = b.get("run_name") or b.get("name", "")
        name = re.sub(r"/(manual|real)_time$", "", name)
        parts = name.split("/")
        if len(parts) < 3 or parts[0] != "BM_Replay":
            continue
        trace, allocator = parts[1], parts[2]
        backend = parts[3] if len(parts) > 3 else ""
        key = (trace, allocator, backend)
        # With --benchmark_repetitions the mean stands for the runs; otherwise the one run.
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "mean":
                continue
        elif key in rows and rows[key].get("aggregate"):
            continue
        row = {"trace": trace, "allocator": allocator, "backend": backend}
        if b.get("run_type") == "aggregate":
            row["aggregate"] = "mean"
        if b.get("error_occurred"):
            row["error"] = b.get("error_message", "failed")
        else:
            row["iterations"] = b.get("iterations")
            for m in METRICS:
                if m in b:
                    v = b[m]
                    row[m] = int(v) if m in ("reserved_high", "used_high", "driver_calls") else v
        rows[key] = row
    if not rows:
        return [], f"{path}: no BM_Replay results (alloc_bench's stderr says why)"
    def order(key):
        trace, allocator, backend = key
        rank = ALLOCATORS.index(allocator) if allocator in ALLOCATORS else len(ALLOCATORS)
        return (trace, backend, rank, allocator)
    return [rows[k] for k in sorted(rows, key=order)], None


def read_footprint(path):
    """Returns (rows, problem) from the FOOTPRINT lines of a ctest log."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        return [], f"{path}: {e.strerror}"
    rows = []
    for line in lines:
        m = re.search(r"FOOTPRINT (\{.*\})", line)
        if not m:
            continue
        try:
            row = json.loads(m.group(1))
        except json.JSONDecodeError:
            rows.append({"raw": m.group(1)})
            continue
        rows.append({k: row[k] for k in FOOTPRINT_FIELDS if k in row})
    # ctest -V prefixes each line with the test's number; one row per (trace, config).
    unique = {}
    for row in rows:
        unique[(row.get("trace", ""), row.get("config", ""), row.get("raw", ""))] = row
    rows = [unique[k] for k in sorted(unique)]
    return rows, (None if rows else f"{path}: no FOOTPRINT lines")


def fmt_mib(v):
    return "-" if v is None else f"{v / MIB:.1f}"


def fmt_num(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def markdown(report):
    md = [f"# cuhal nightly allocation report, {report['date']}", ""]
    if report["problems"]:
        md += ["Missing or failed inputs:", ""] + [f"- {p}" for p in report["problems"]] + [""]
    md += ["## Trace replays per allocator (bench/alloc_bench)", "",
           "ns/op: the mean of every timed operation; p99: of single operations; reserved and used "
           "highs in MiB, from one footprint pass; driver calls made inside the operations.", ""]
    if report["replays"]:
        md += ["| trace | allocator | backend | ns/op | p99 ns | reserved high MiB | used high MiB "
               "| reserved/used | driver calls |", "|---|---|---|---|---|---|---|---|---|"]
        for r in report["replays"]:
            if "error" in r:
                md.append(f"| {r['trace']} | {r['allocator']} | {r['backend']} | "
                          f"failed: {r['error'].replace('|', '/')} | | | | | |")
                continue
            md.append(f"| {r['trace']} | {r['allocator']} | {r['backend']} | "
                      f"{fmt_num(r.get('ns_per_op'))} | {fmt_num(r.get('p99_ns'), 0)} | "
                      f"{fmt_mib(r.get('reserved_high'))} | {fmt_mib(r.get('used_high'))} | "
                      f"{fmt_num(r.get('reserved_per_used'), 3)} | "
                      f"{fmt_num(r.get('driver_calls'))} |")
    else:
        md.append("none ran")
    md += ["", "## Footprint prediction: fakecuda's pool against the H200's "
           "(tests/trace/pool_footprint_real_test)", "",
           "Steps whose RESERVED or USED differ; the defaults (opportunistic reuse on) are "
           "reported, not failed.", ""]
    if report["footprint"]:
        md += ["| trace | config | steps | differing steps | fake reserved high MiB "
               "| real reserved high MiB |", "|---|---|---|---|---|---|"]
        for r in report["footprint"]:
            if "raw" in r:
                md.append(f"| unreadable: {r['raw'].replace('|', '/')} | | | | | |")
                continue
            md.append(f"| {r.get('trace', '')} | {r.get('config', '')} | {r.get('steps', '-')} | "
                      f"{r.get('differing_steps', '-')} | {fmt_mib(r.get('fake_reserved_high'))} | "
                      f"{fmt_mib(r.get('real_reserved_high'))} |")
    else:
        md.append("none ran")
    return "\n".join(md) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="the nightly's OUT_DIR (inputs, and outputs by default)")
    parser.add_argument("--bench", help="alloc_bench JSON (default OUT_DIR/alloc_bench.json)")
    parser.add_argument("--footprint", help="ctest log with FOOTPRINT lines "
                                            "(default OUT_DIR/footprint.log)")
    parser.add_argument("--out-dir", dest="dest", help="where the reports go (default OUT_DIR)")
    parser.add_argument("--date", help="the reports' date, YYYY-MM-DD (default today, UTC)")
    args = parser.parse_args(argv[1:])
    date = args.date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        parser.error(f"--date must be YYYY-MM-DD, not '{date}'")
    bench = args.bench or os.path.join(args.out_dir, "alloc_bench.json")
    footprint_log = args.footprint or os.path.join(args.out_dir, "footprint.log")
    return write(date, bench, footprint_log, args.dest or args.out_dir)


def write(date, bench, footprint_log, dest):
    replays, bench_problem = read_bench(bench)
    footprint, footprint_problem = read_footprint(footprint_log)
    problems = [p for p in (bench_problem, footprint_problem) if p]
    problems += [f"BM_Replay/{r['trace']}/{r['allocator']}/{r['backend']}: {r['error']}"
                 for r in replays if "error" in r]
    report = {
        "date": date,
        "inputs": {"alloc_bench": bench, "footprint_log": footprint_log},
        "problems": problems,
        "replays": replays,
        "footprint": footprint,
    }
    os.makedirs(dest, exist_ok=True)
    json_path = os.path.join(dest, f"{date}-alloc.json")
    md_path = os.path.join(dest, f"{date}-alloc.md")
    with open(json_path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(markdown(report))
    print(f"alloc report: {len(replays)} replays, {len(footprint)} footprint rows -> "
          f"{json_path}, {md_path} (commit them as docs/reports/{date}-alloc.{{json,md}})")
    for p in problems:
        print(f"alloc report: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
