#!/usr/bin/env python3
"""Writes the nightly fidelity report (report.md and report.json) from what ci/gpu-nightly left
in OUT_DIR:

  machine.txt                  the GPU, driver and NCCL seen
  real-junit.xml, real-traces-junit.xml, fake-junit.xml
                               ctest --output-junit of `-L real` (the pool traces apart) and of
                               `-L 'fake|unit|sweep'`
  real-tests.log               ctest output of the real run; tests print fidelity mismatches as
                               lines "FIDELITY-MISMATCH {json with suite, call, fake, real}"
                               and differential totals as "FIDELITY-STEPS {suite, case, steps,
                               mismatches}"
  ptx-compare.log              tests/ptx/ptx_catalogue_compare_test's output: "[ compare  ]" lines
                               per kernel and the summary "ptx catalogue, fake vs real: ..."
  *_bench.json                 Google Benchmark JSON output
  cudart-catalogue.log, cudart12.log, cuda-python.log
                               the CUDA runtime stage: "<program>: same | DIFFER (n lines)",
                               "cudart<12|13>.<variant>: real exit R, fake exit F, same | DIFFER",
                               cuda-python's "summary:" lines
  fuzz/summary.txt, fuzz/corpus.txt
                               the differential fuzzer (ci/gpu-probes/fuzz.sh): sequences per
                               backend, crashes/hangs/leaks, the comparison's counts; the corpus
                               update (fuzz/corpus/add_run.sh)
  profile/device0.json         the freshly captured device profile

    ci/nightly_report.py OUT_DIR [COMMITTED_PROFILE]
"""
import datetime
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_diff  # noqa: E402


def read_junit(path):
    """Returns a list of {name, status (passed|failed|skipped), message}."""
    if not os.path.exists(path):
        return None
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = "passed"
        message = ""
        out = "".join(case.find("system-out").itertext()) if case.find("system-out") is not None else ""
        if case.find("failure") is not None or case.get("status") == "fail":
            status = "failed"
            fail = case.find("failure")
            message = (fail.get("message") if fail is not None else "") or ""
            details = re.findall(r"(?:Failure|error:).*?(?=\n\[|\Z)", out, re.S)
            if details:
                message = " | ".join(d.strip().replace("\n", " ")[:400] for d in details[:3])
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            status = "skipped"
            m = re.search(r"Skipped\s*\n(.*?)(?:\n\[|\Z)", out, re.S)
            message = (m.group(1).strip() if m else (case.find("skipped").get("message", "")
                                                       if case.find("skipped") is not None else ""))
            message = message.replace("\n", " ")[:300]
        tests.append({"name": case.get("name"), "status": status, "message": message})
    return tests


def summarize(tests):
    if tests is None:
        return None
    counts = {"run": len(tests), "passed": 0, "failed": 0, "skipped": 0}
    for t in tests:
        counts[t["status"]] += 1
    return counts


def read_mismatches(log_path):
    mismatches = []
    if not os.path.exists(log_path):
        return mismatches
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"FIDELITY-MISMATCH (\{.*\})", line)
            if m:
                try:
                    mismatches.append(json.loads(m.group(1)))
                except json.JSONDecodeError:
                    mismatches.append({"raw": m.group(1)})
    return mismatches


def read_differential(log_path):
    """Per-suite totals from the "FIDELITY-STEPS {json}" lines of the differential tests."""
    suites = {}
    if not os.path.exists(log_path):
        return suites
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"FIDELITY-STEPS (\{.*\})", line)
            if not m:
                continue
            try:
                entry = json.loads(m.group(1))
            except json.JSONDecodeError:
                continue
            s = suites.setdefault(entry.get("suite", "?"), {"cases": 0, "steps": 0, "mismatches": 0})
            s["cases"] += 1
            s["steps"] += int(entry.get("steps", 0))
            s["mismatches"] += int(entry.get("mismatches", 0))
    return suites


def backend_of(name):
    low = name.lower()
    if "real" in low:
        return "real"
    if "fake" in low:
        return "fake"
    return None


def read_ptx_compare(log_path):
    """Returns (summary line or None, per-kernel lines) of ptx-compare.log."""
    if not os.path.exists(log_path):
        return None, []
    summary, kernels = None, []
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ptx catalogue, fake vs "):
                summary = line
            elif line.startswith("[ compare  ] "):
                kernels.append(line[len("[ compare  ] "):])
    return summary, kernels


def read_benchmarks(out_dir):
    rows = {}
    for fname in sorted(os.listdir(out_dir)):
        if not fname.endswith("_bench.json"):
            continue
        try:
            with open(os.path.join(out_dir, fname), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError):
            continue
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate":
                continue
            name = b["name"]
            backend = backend_of(name)
            if backend is None:
                continue
            key = re.sub(r"(?i)[/_<:]?(real|fake)[>]?", "", name)
            row = rows.setdefault(key, {"benchmark": key, "program": fname[:-5]})
            if b.get("error_occurred"):
                row[backend] = "skipped: " + b.get("error_message", "")
                continue
            unit = b.get("time_unit", "ns")
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}.get(unit, 1)
            row[backend] = round(b["real_time"] * scale, 1)
            counters = {k: v for k, v in b.items()
                        if k not in ("name", "run_name", "run_type", "repetitions", "repetition_index",
                                     "threads", "iterations", "real_time", "cpu_time", "time_unit",
                                     "family_index", "per_family_instance_index", "aggregate_name",
                                     "error_occurred", "error_message", "label")}
            if counters:
                row[backend + "_counters"] = counters
    return list(rows.values())


def read_lines(path, pattern):
    """The lines of path that match the regular expression pattern (None: the file is absent)."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return [line.rstrip("\n") for line in f if re.search(pattern, line)]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    committed = argv[2] if len(argv) > 2 else os.path.join(root, "fakecuda/profiles/h200.json")

    real = read_junit(os.path.join(out_dir, "real-junit.xml"))
    traces = read_junit(os.path.join(out_dir, "real-traces-junit.xml"))
    if traces is not None:
        real = (real or []) + traces
    fake = read_junit(os.path.join(out_dir, "fake-junit.xml"))
    mismatches = read_mismatches(os.path.join(out_dir, "real-tests.log"))
    # A real-backend test that failed is a fidelity mismatch too: the same expectation passes on
    # the fake (the fake run is required to be green), so fake and real answered differently.
    for t in real or []:
        if t["status"] == "failed":
            mismatches.append({"suite": "conformance", "call": t["name"],
                               "fake": "as expected (fake test passed)", "real": t["message"]})
    benchmarks = read_benchmarks(out_dir)
    ptx_summary, ptx_kernels = read_ptx_compare(os.path.join(out_dir, "ptx-compare.log"))
    differential = read_differential(os.path.join(out_dir, "real-tests.log"))
    runtime = {
        "catalogue": read_lines(os.path.join(out_dir, "cudart-catalogue.log"),
                                r"^[A-Za-z0-9_]+: (same|DIFFER|no expected)"),
        "libcudart12": read_lines(os.path.join(out_dir, "cudart12.log"),
                                  r"^(cudart1[23][.]|libcudart 12: skipped)"),
        "cuda_python": read_lines(os.path.join(out_dir, "cuda-python.log"),
                                  r"^(summary:|cuda-python: skipped)"),
    }
    fuzzer = {
        "summary": read_lines(os.path.join(out_dir, "fuzz", "summary.txt"), r"\S"),
        "corpus": read_lines(os.path.join(out_dir, "fuzz", "corpus.txt"), r"^corpus "),
    }
    fresh = os.path.join(out_dir, "profile", "device0.json")
    profile = None
    if os.path.exists(fresh) and os.path.exists(committed):
        identity, differences = profile_diff.diff(profile_diff.load(committed), profile_diff.load(fresh))
        profile = {"committed": os.path.relpath(committed, root), "identity": identity,
                   "differences": differences}
    machine = ""
    if os.path.exists(os.path.join(out_dir, "machine.txt")):
        with open(os.path.join(out_dir, "machine.txt"), encoding="utf-8") as f:
            machine = f.read().strip()

    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine,
        "tests": {"real": summarize(real), "fake": summarize(fake)},
        "skipped": [t for t in (real or []) + (fake or []) if t["status"] == "skipped"],
        "failed": [t for t in (real or []) + (fake or []) if t["status"] == "failed"],
        "fidelity_mismatches": mismatches,
        "differential_suites": differential,
        "ptx_catalogue": {"summary": ptx_summary, "kernels": ptx_kernels},
        "benchmarks": benchmarks,
        "profile": profile,
        "cuda_runtime": runtime,
        "differential_fuzzer": fuzzer,
    }
    with open(os.path.join(out_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)

    md = [f"# cuhal nightly fidelity report, {report['date']}", "", "## Machine", "", "```", machine, "```", ""]
    md += ["## Tests per backend", "", "| backend | run | passed | failed | skipped |", "|---|---|---|---|---|"]
    for backend in ("real", "fake"):
        c = report["tests"][backend]
        md.append(f"| {backend} | " + (" | ".join(str(c[k]) for k in ("run", "passed", "failed", "skipped"))
                                       if c else "not run in this job (CI runs the fake suites) | | | ") + " |")
    md += ["", "## Differential suites (fake and real replayed step by step)", ""]
    if differential:
        md += ["| suite | cases | steps compared | mismatches |", "|---|---|---|---|"]
        for name, s in sorted(differential.items()):
            md.append(f"| {name} | {s['cases']} | {s['steps']} | {s['mismatches']} |")
    else:
        md.append("none ran")
    md += ["", "## PTX catalogue: fake vs real, bit for bit", ""]
    md.append(ptx_summary or "not run")
    md += [f"- {k}" for k in ptx_kernels]
    md += ["", "## CUDA runtime programs: real driver vs drop-in", ""]
    for title, key in (("Catalogue (tests/cudart_catalogue)", "catalogue"),
                       ("libcudart 12 and 13 (cudart_dlopen_probe)", "libcudart12"),
                       ("cuda-python test_cuda.py / test_cudart.py", "cuda_python")):
        lines = runtime[key]
        md.append(f"{title}: " + ("not run" if lines is None else "no result" if not lines else ""))
        md += [f"- {line}" for line in lines or []]
    md += ["", "## Differential fuzzer: fake vs real driver", ""]
    if fuzzer["summary"] is None:
        md.append("not run")
    else:
        md += ["```"] + fuzzer["summary"] + (fuzzer["corpus"] or []) + ["```"]
    md += ["", f"## Fidelity mismatches: {len(mismatches)}", ""]
    if mismatches:
        md += ["| suite | call | fake | real |", "|---|---|---|---|"]
        for m in mismatches:
            md.append(f"| {m.get('suite', '')} | {m.get('call', m.get('raw', ''))} | {m.get('fake', '')} | "
                      f"{str(m.get('real', '')).replace('|', '/')} |")
    md += ["", "## Failed tests", ""]
    md += [f"- `{t['name']}`: {t['message']}" for t in report["failed"]] or ["none"]
    md += ["", "## Skipped tests (with reasons)", ""]
    md += [f"- `{t['name']}`: {t['message']}" for t in report["skipped"]] or ["none"]
    md += ["", "## Benchmarks: fake vs real (ns per iteration)", "",
           "| benchmark | fake | real |", "|---|---|---|"]
    for row in benchmarks:
        md.append(f"| {row['benchmark']} | {row.get('fake', '-')} | {row.get('real', '-')} |")
    md += ["", "## Device profile: fresh capture vs committed", ""]
    if profile is None:
        md.append("not captured")
    else:
        md.append(f"Committed: `{profile['committed']}`. {len(profile['differences'])} difference(s); "
                  f"identity fields that differ (expected between boards): "
                  f"{', '.join(d['field'] for d in profile['identity']) or 'none'}.")
        for d in profile["differences"]:
            md.append(f"- {d['field']}: committed {d['committed']}, fresh {d['fresh']}")
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md[:40]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
