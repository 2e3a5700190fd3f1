#!/usr/bin/env bash
# Issue 14's last done-when item on the GPU machine: NVIDIA's cuda-python driver tests
# (cuda_bindings/tests/test_cuda.py) run twice, on the real libcuda and on cuhal's drop-in
# libcuda.so.1 (LD_LIBRARY_PATH=<dropin>), and the per-test results compared. Issue 17
# (cuda.bindings.runtime on the GPU machine): the runtime tests cuda_bindings/tests/test_cudart.py
# the same way, one after the other (CUHAL_CUDA_PYTHON_FILES, default "test_cuda.py test_cudart.py";
# name one file to run only it, e.g. to stay within a 10-minute command limit).
#   OUT=/tmp/out bash ci/gpu-probes/cuda_python.sh build/fuzz-release/dropin   (on the GPU machine)
# The drop-in must be built first (a Release one: an ASan build would need LD_PRELOAD). The test
# sources are public reference code and are not committed: they are read from
# $CUHAL_CUDA_PYTHON_SRC (default .deb/cuda-python, laid out as in the cuda-python repository:
# cuda_bindings/tests/{test_cuda,test_cudart,conftest}.py and
# cuda_python_test_helpers/cuda_python_test_helpers/managed_memory.py; SOURCE.txt names the commits)
# and run from a copy in $WORK (/tmp/cuhal_cuda_python). Needs python3 with cuda-bindings (stops
# at once, with a message, without it) and numpy; pytest if present, else a small built-in runner
# with a stand-in `pytest` module (said in the output).
# Imports: test_cuda.py: cuda.bindings.{driver,runtime}, numpy, pytest, and
# cuda_python_test_helpers.managed_memory (in the sources); test_cudart.py: ctypes, math,
# cuda.bindings.{driver,runtime}, numpy, pytest and cuda.pathfinder (`from cuda import pathfinder`,
# a dependency of cuda-bindings 13; its getLocalRuntimeVersion test loads libcudart.so.13 through
# it and skips where none is found); conftest.py: cuda.bindings.driver, pytest (its autouse `ctx`
# fixture creates a context for each test module, the built-in runner does the same). A module
# that is missing makes that file's collection fail: that backend's whole run fails, identically
# on both backends, and the two are compared anyway (the diff then says the collection failed).
# The runtime: cuda.bindings.runtime is cudart linked statically into cuda.bindings; it dlopens
# libcuda.so.1 by soname, as the driver bindings do, so LD_LIBRARY_PATH=<dropin> reaches it too.
# A runtime-first check (a process whose first CUDA call is the runtime's, as at test_cudart.py's
# import) records which libcuda and libcudart were loaded: $OUT/cuda_python.cudart.load.*.txt.
# Each backend has 300 s per test file (CUHAL_CUDA_PYTHON_TIMEOUT_S), one pytest process at most
# 150 s (CUHAL_CUDA_PYTHON_ATTEMPT_S; `timeout`): a run that crashes or hangs is resumed after the
# test it was in (marked CRASH or HANG), at most 8 attempts. Worst case about 12 minutes per file;
# on the H200 expect well under a minute per backend and file.
# Results: $OUT/cuda_python.versions.txt, $OUT/cuda_python.load.{real,fake}.txt (which libcuda
# was loaded, driver first), $OUT/cuda_python.cudart.load.{real,fake}.txt (the same, runtime
# first), and per test file, with PREFIX cuda_python for test_cuda.py and cuda_python.cudart for
# test_cudart.py: $OUT/PREFIX.{real,fake}.txt (pytest -v -rA output), the junit xml
# $OUT/PREFIX.{real,fake}.<attempt>.xml, $OUT/PREFIX.{real,fake}.abnormal.txt, and
# $OUT/PREFIX.diff.txt (cuda_python.diff.txt, cuda_python.cudart.diff.txt): one line per test
# `name real=<PASS|FAIL|SKIP|ERROR|CRASH|HANG|MISSING> fake=<...>` and a summary line.
# FAKECUDA_* variables pass through to the fake (none are set here: 1 x H200, driver 13000). On a
# machine whose GPU is not an H200, test_device_get_name compares the fake's name with
# nvidia-smi's: give the fake the machine's own profile (build/.../fakecuda/fakecuda_capture DIR 0,
# then FAKECUDA_DEVICES=DIR/device0.json), as the 2026-12-06 run on an H100 did.
# Results so far (ci/gpu-probes/results/2026-12-06-h100-cuda-python*.diff.txt): 45 of the 45
# tests that pass on the real driver pass on the fake (with the H100's profile; 44 with the
# default H200 one, the device name differing).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; T0=$SECONDS
[ $# -ge 1 ] || { echo "usage: $0 <dropin dir with libcuda.so.1>"; exit 2; }
DROPIN=$(readlink -f "$1")
[ -e "$DROPIN/libcuda.so.1" ] || { echo "no libcuda.so.1 in $DROPIN: build the drop-in first"; exit 2; }
SRC=$(readlink -f "${CUHAL_CUDA_PYTHON_SRC:-.deb/cuda-python}")
FILES=${CUHAL_CUDA_PYTHON_FILES:-test_cuda.py test_cudart.py}
for f in $FILES; do
  [ -f "$SRC/cuda_bindings/tests/$f" ] || { echo "no $f in $SRC/cuda_bindings/tests (see $SRC/SOURCE.txt)"; exit 2; }
done
WORK=${CUHAL_CUDA_PYTHON_WORK:-/tmp/cuhal_cuda_python}
PY=${PYTHON:-python3}
BUDGET=${CUHAL_CUDA_PYTHON_TIMEOUT_S:-300}    # per backend, all attempts together
ATTEMPT=${CUHAL_CUDA_PYTHON_ATTEMPT_S:-150}   # one pytest process at most
rm -rf "$WORK"; mkdir -p "$WORK"; cp -r "$SRC" "$WORK/src"
TESTS=$WORK/src/cuda_bindings/tests
# The helpers package's __init__ imports cuda.core, which test_cuda.py does not use (it imports
# only cuda_python_test_helpers.managed_memory): an empty __init__ keeps cuda.core out of both runs.
HELPERS=$WORK/src/cuda_python_test_helpers/cuda_python_test_helpers
[ -f "$HELPERS/__init__.py" ] && echo "# emptied by ci/gpu-probes/cuda_python.sh" > "$HELPERS/__init__.py"
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

{
  echo "date: $(date -u '+%F %T UTC')"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  else echo "gpu: no nvidia-smi"; fi
  echo "python: $($PY --version 2>&1)"
  echo "cuda.bindings: $($PY -c 'import cuda.bindings; print(cuda.bindings.__version__)' 2>&1 | tail -1)"
  echo "cuda.pathfinder: $($PY -c 'import cuda.pathfinder as p; print(p.__version__)' 2>&1 | tail -1)"
  echo "numpy: $($PY -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)"
  echo "pytest: $($PY -m pytest --version 2>&1 | tail -1)"
  for f in $FILES; do
    [ -f "$SRC/SOURCE.txt" ] && grep -m1 "/$f " "$SRC/SOURCE.txt" | sed 's/^/source: /'
  done
  echo "test files: $FILES"
  echo "drop-in: $DROPIN"
} | tee "$OUT/cuda_python.versions.txt"
if ! "$PY" -c 'import cuda.bindings.driver' > "$WORK/import.txt" 2>&1; then
  echo "ERROR: $PY cannot import cuda.bindings.driver (install cuda-bindings, or set PYTHON):" \
       "$(tail -1 "$WORK/import.txt")" | tee -a "$OUT/cuda_python.versions.txt"
  exit 2
fi

if $PY -m pytest --version > /dev/null 2>&1; then
  RUNNER=pytest
else
  RUNNER=builtin
  echo "pytest is missing: using the built-in runner (a stand-in pytest module: fixtures of" \
       "conftest.py done by hand, skipif/parametrize/skip)" | tee -a "$OUT/cuda_python.versions.txt"
  mkdir -p "$WORK/stub"
  cat > "$WORK/stub/pytest.py" <<'EOF'
# Stand-in for pytest (ci/gpu-probes/cuda_python.sh): what test_cuda{,rt}.py and conftest use.
class SkipTest(Exception):
    pass


def skip(reason=""):
    raise SkipTest(reason)


def fixture(*args, **kwargs):
    if args and callable(args[0]):
        return args[0]
    return lambda f: f


class _Mark:
    def skipif(self, condition, reason=""):
        def deco(f):
            f.__dict__.setdefault("_skipif", []).append((bool(condition), reason))
            return f
        return deco

    def parametrize(self, name, values):
        def deco(f):
            f._parametrize = (name, list(values))
            return f
        return deco


mark = _Mark()
EOF
  cat > "$WORK/stub/run_builtin.py" <<'EOF'
# Built-in runner: run_builtin.py FILE [--collect-only | ids...]; prints
# `FILE::<name> PASSED|FAILED|SKIPPED|ERROR` like pytest -v.
import inspect, sys, traceback
sys.path.insert(0, ".")
import conftest  # puts the helpers on sys.path
import cuda.bindings.driver as cuda

FILE = sys.argv[1]
only = set(a.split("::", 1)[1] for a in sys.argv[2:] if "::" in a)
mod = __import__(FILE[:-3])
ids = lambda v: getattr(v, "__name__", str(v))
items = []
for name, f in vars(mod).items():
    if name.startswith("test_") and inspect.isfunction(f):
        p = getattr(f, "_parametrize", None)
        if p:
            for v in p[1]:
                items.append((f"{name}[{ids(v)}]", f, {p[0]: v}))
        else:
            items.append((name, f, {}))
if "--collect-only" in sys.argv:
    for n, _, _ in items:
        print(f"{FILE}::{n}")
    sys.exit(0)
fixtures, setup_error = {}, None
try:
    (err,) = cuda.cuInit(0); assert err == cuda.CUresult.CUDA_SUCCESS, err
    err, dev = cuda.cuDeviceGet(0); assert err == cuda.CUresult.CUDA_SUCCESS, err
    err, ctx = cuda.cuCtxCreate(None, 0, dev); assert err == cuda.CUresult.CUDA_SUCCESS, err
    fixtures = {"device": dev, "ctx": ctx, "cuda_driver": None}
except Exception:
    setup_error = traceback.format_exc()
failed = 0
for n, f, params in items:
    if only and n not in only:
        continue
    print(f"{FILE}::{n} ", end="", flush=True)
    skips = [r for c, r in getattr(f, "_skipif", []) if c]
    if skips:
        print(f"SKIPPED ({skips[0]})", flush=True); continue
    if setup_error:
        print("ERROR", flush=True); print(setup_error); failed += 1; continue
    kwargs = dict(params)
    for a in inspect.signature(f).parameters:
        if a in fixtures:
            kwargs[a] = fixtures[a]
    try:
        f(**kwargs)
        print("PASSED", flush=True)
    except sys.modules["pytest"].SkipTest as e:
        print(f"SKIPPED ({e})", flush=True)
    except Exception:
        print("FAILED", flush=True); print(traceback.format_exc(), flush=True); failed += 1
if "ctx" in fixtures:
    (err,) = cuda.cuCtxDestroy(fixtures["ctx"])
    if err != cuda.CUresult.CUDA_SUCCESS:
        print(f"{FILE}::{items[-1][0]} ERROR (teardown: cuCtxDestroy {err})"); failed += 1
sys.exit(1 if failed else 0)
EOF
fi

# LD_LIBRARY_PATH=... for a backend: the real one keeps the machine's, the fake puts the drop-in first.
ld_for() {
  if [ "$1" = fake ]; then echo "LD_LIBRARY_PATH=$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; fi
}

# Which libcuda a process really loads (cuda.bindings dlopens libcuda.so.1 by soname).
load_check() {  # backend
  (cd "$WORK" && env "$(ld_for "$1")" timeout 60 "$PY" - <<'EOF'
import cuda.bindings.driver as d
(err,) = d.cuInit(0)
print("cuInit:", err)
err, v = d.cuDriverGetVersion()
print("cuDriverGetVersion:", err, v)
err, n = d.cuDeviceGetCount()
print("cuDeviceGetCount:", err, n)
err, name = d.cuDeviceGetName(64, 0)
print("cuDeviceGetName(0):", err, name.split(b"\x00")[0] if name else name)
import os
libs = sorted({os.path.realpath(l.split()[-1]) for l in open("/proc/self/maps") if "libcuda.so" in l})
print("libcuda loaded:", " ".join(libs) or "none")
print("cuda.bindings from:", os.path.dirname(d.__file__))
try:  # test_cuda.py's skipif conditions ask the runtime bindings (cudart over the driver)
    import cuda.bindings.runtime as rt
    A = rt.cudaDeviceAttr
    for a in (A.cudaDevAttrMemoryPoolsSupported, A.cudaDevAttrManagedMemory):
        print(f"cudaDeviceGetAttribute({a.name}, 0):", *rt.cudaDeviceGetAttribute(a, 0))
except Exception as e:
    print("cuda.bindings.runtime:", type(e).__name__, e)
EOF
  ) > "$OUT/cuda_python.load.$1.txt" 2>&1
  echo "load check $1: rc $?"; sed 's/^/  /' "$OUT/cuda_python.load.$1.txt"
}

# The same with the runtime first: test_cudart.py's skipif conditions call cudart at import, so
# cudart (linked statically into cuda.bindings) may be what dlopens libcuda.so.1. The libcuda and
# libcudart lines are read at the end, after every call (a `finally`), whatever failed before.
load_check_rt() {  # backend
  (cd "$WORK" && env "$(ld_for "$1")" timeout 60 "$PY" - <<'EOF'
import os

def loaded(pattern):
    return " ".join(sorted({os.path.realpath(l.split()[-1]) for l in open("/proc/self/maps")
                            if pattern in l and "/" in l}))

try:
    import cuda.bindings.runtime as rt
    print("cuda.bindings.runtime from:", os.path.dirname(rt.__file__))
    print("cudaRuntimeGetVersion (the cudart inside cuda.bindings):", *rt.cudaRuntimeGetVersion())
    print("cudaDriverGetVersion:", *rt.cudaDriverGetVersion())
    print("cudaGetDeviceCount:", *rt.cudaGetDeviceCount())
    A = rt.cudaDeviceAttr
    for a in (A.cudaDevAttrMemoryPoolsSupported, A.cudaDevAttrSparseCudaArraySupported):
        print(f"cudaDeviceGetAttribute({a.name}, 0):", *rt.cudaDeviceGetAttribute(a, 0))
    err, p = rt.cudaMalloc(1 << 20)
    print("cudaMalloc(1 MiB):", err)
    if err == rt.cudaError_t.cudaSuccess:
        print("cudaFree:", *rt.cudaFree(p))
    print("cudaDeviceSynchronize:", *rt.cudaDeviceSynchronize())
    from cuda import pathfinder
    print("cuda.pathfinder:", getattr(pathfinder, "__version__", "?"))
    try:  # loads the shared libcudart.so.13 through cuda.pathfinder (test_getLocalRuntimeVersion)
        print("getLocalRuntimeVersion:", *rt.getLocalRuntimeVersion())
    except pathfinder.DynamicLibNotFoundError as e:
        print("getLocalRuntimeVersion: DynamicLibNotFoundError", e)
except Exception as e:
    print("runtime check:", type(e).__name__, e)
finally:
    print("libcuda loaded:", loaded("libcuda.so") or "none")
    print("libcudart loaded:", loaded("libcudart.so") or "none")
EOF
  ) > "$OUT/cuda_python.cudart.load.$1.txt" 2>&1
  echo "runtime load check $1: rc $?"; sed 's/^/  /' "$OUT/cuda_python.cudart.load.$1.txt"
}

# Whether every libcuda named on the line `libcuda loaded: ...` of a load check lies in $DROPIN:
# 0 yes, 1 one lies elsewhere, 2 none was loaded (or the line is missing).
only_dropin() {  # load-check file
  local loaded l
  loaded=$(grep -m1 "^libcuda loaded:" "$1" | cut -d' ' -f3-)
  [ -n "$loaded" ] && [ "$loaded" != none ] || return 2
  for l in $loaded; do case $l in "$DROPIN"/*) ;; *) return 1;; esac; done
}

load_check real
load_check fake
FAKE_OK=1
if ! only_dropin "$OUT/cuda_python.load.fake.txt"; then
  FAKE_OK=0
  echo "ERROR: with LD_LIBRARY_PATH=$DROPIN the process did not load only the drop-in" \
       "(loaded: $(grep -m1 "^libcuda loaded:" "$OUT/cuda_python.load.fake.txt" | cut -d' ' -f3-)); the fake's runs are not made"
fi
FAKE_RT_OK=1
case " $FILES " in *" test_cudart.py "*)
  load_check_rt real
  load_check_rt fake
  only_dropin "$OUT/cuda_python.cudart.load.fake.txt"
  case $? in
    1) FAKE_RT_OK=0
       echo "ERROR: with LD_LIBRARY_PATH=$DROPIN and the runtime first, the process loaded a libcuda" \
            "other than the drop-in ($(grep -m1 "^libcuda loaded:" "$OUT/cuda_python.cudart.load.fake.txt" | cut -d' ' -f3-));" \
            "test_cudart.py's fake run is not made";;
    2) echo "NOTE: the runtime-first check on the fake loaded no libcuda (see" \
            "$OUT/cuda_python.cudart.load.fake.txt); test_cudart.py's fake run is made anyway: it can" \
            "load no other libcuda by soname, and its results say what failed";;
  esac;;
esac

# Runs one test file on one backend within $BUDGET seconds; resumes after a test that crashed or
# hung. Outputs $OUT/<prefix>.<backend>.*, work files $WORK/<prefix>.<backend>.*.
run_backend() {  # backend file prefix
  local b=$1 f=$2 pre=$3 k rc t=$SECONDS left env_ld ids cur
  env_ld=$(ld_for "$b")
  local log=$OUT/$pre.$b.txt abn=$OUT/$pre.$b.abnormal.txt w=$WORK/$pre.$b
  : > "$log"; : > "$abn"
  # Collect the test ids first (the files' skipif conditions call the driver or runtime at import).
  if [ $RUNNER = pytest ]; then
    (cd "$TESTS" && env "$env_ld" timeout -k 10 60 "$PY" -m pytest -p no:cacheprovider \
      --rootdir "$TESTS" --collect-only -q "$f") > "$w.collect" 2>&1
  else
    (cd "$TESTS" && env "$env_ld" PYTHONPATH="$WORK/stub${PYTHONPATH:+:$PYTHONPATH}" timeout -k 10 60 "$PY" \
      "$WORK/stub/run_builtin.py" "$f" --collect-only) > "$w.collect" 2>&1
  fi
  rc=$?
  awk -v p="$f::" 'index($0, p) == 1' "$w.collect" > "$w.ids"
  echo "== $b: collect rc $rc, $(wc -l < "$w.ids") tests" >> "$log"
  if [ ! -s "$w.ids" ]; then
    cat "$w.collect" >> "$log"
    echo "$pre $b: collection failed (rc $rc): $(grep -m1 -E 'Error|error' "$w.collect" || tail -1 "$w.collect"); see $log"
    return
  fi
  cp "$w.ids" "$w.todo"
  for k in 1 2 3 4 5 6 7 8; do
    left=$((BUDGET - (SECONDS - t)))
    [ $left -ge 20 ] || { echo "$pre $b: budget of $BUDGET s spent, $(wc -l < "$w.todo") tests not run"; break; }
    [ $left -gt "$ATTEMPT" ] && left=$ATTEMPT
    mapfile -t ids < "$w.todo"
    echo "== $b: attempt $k, ${#ids[@]} tests, timeout $left s" >> "$log"
    if [ $RUNNER = pytest ]; then
      (cd "$TESTS" && env "$env_ld" timeout -k 10 "$left" "$PY" -u -m pytest \
        -p no:cacheprovider --rootdir "$TESTS" -v -rA -o faulthandler_timeout=$((left - 15)) \
        --junitxml "$OUT/$pre.$b.$k.xml" "${ids[@]}") >> "$log" 2>&1
    else
      (cd "$TESTS" && env "$env_ld" PYTHONPATH="$WORK/stub${PYTHONPATH:+:$PYTHONPATH}" timeout -k 10 "$left" "$PY" -u \
        "$WORK/stub/run_builtin.py" "$f" "${ids[@]}") >> "$log" 2>&1
    fi
    rc=$?
    printf '\n== %s: attempt %s rc %s\n' "$b" "$k" "$rc" >> "$log"
    echo "$pre $b: attempt $k rc $rc"
    # rc 0/1: the run finished (all passed / some failed); else it crashed, hung or broke.
    [ $rc -le 1 ] && break
    # First line: the test in flight (or the first without a result); then the rest to run.
    "$PY" "$WORK/compare.py" remaining "$f" "$w.todo" "$log" > "$w.todo.new"
    cur=$(head -1 "$w.todo.new")
    [ -n "$cur" ] || break
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "$cur HANG" >> "$abn"
    else echo "$cur CRASH" >> "$abn"; fi
    echo "$pre $b: $cur ended the run (rc $rc); resuming after it"
    tail -n +2 "$w.todo.new" > "$w.todo"
    [ -s "$w.todo" ] || break
  done
  echo "$pre $b: done in $((SECONDS - t)) s"
}

cat > "$WORK/compare.py" <<'EOF'
# Parses pytest -v output and junit xml; lists the remaining tests; writes the comparison.
#   compare.py remaining FILE TODO LOG
#   compare.py compare FILE OUTPREFIX WORKPREFIX    ($OUT/<prefix>, $WORK/<prefix>)
import glob, os, re, sys
import xml.etree.ElementTree as ET

FILE = sys.argv[2]
LINE = re.compile(r"^" + re.escape(FILE) + r"::(\S+) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b")
WORD = {"PASSED": "PASS", "XPASS": "PASS", "FAILED": "FAIL", "SKIPPED": "SKIP", "XFAIL": "SKIP",
        "ERROR": "ERROR"}
RANK = {"PASS": 0, "SKIP": 1, "FAIL": 2, "ERROR": 3, "CRASH": 4, "HANG": 4}


def merge(res, name, status):
    if name not in res or RANK[status] > RANK[res[name]]:
        res[name] = status


def from_log(path):
    res = {}
    try:
        for line in open(path, errors="replace"):
            m = LINE.match(line)
            if m:
                merge(res, m.group(1), WORD[m.group(2)])
    except FileNotFoundError:
        pass
    return res


def from_junit(files):
    res, why = {}, {}
    for f in files:
        try:
            root = ET.parse(f).getroot()
        except Exception:
            continue
        for tc in root.iter("testcase"):
            name = tc.get("name")
            status, msg = "PASS", ""
            for child in tc:
                tag = {"failure": "FAIL", "error": "ERROR", "skipped": "SKIP"}.get(child.tag)
                if tag and RANK[tag] >= RANK[status]:
                    status, msg = tag, (child.get("message") or "").splitlines()
                    msg = msg[0] if msg else ""
            merge(res, name, status)
            if msg and res[name] == status:
                why[name] = msg
    return res, why


def results(out, backend):
    res = from_log(f"{out}.{backend}.txt")  # attempts that crashed leave no junit file
    jres, why = from_junit(sorted(glob.glob(glob.escape(f"{out}.{backend}.") + "*.xml")))
    res.update(jres)
    try:
        for line in open(f"{out}.{backend}.abnormal.txt"):
            name, status = line.split()
            merge(res, name.split("::", 1)[1], status)
    except FileNotFoundError:
        pass
    return res, why


if sys.argv[1] == "remaining":  # FILE todo-file log
    # The test in flight when the run ended: the last progress line of the last attempt that has
    # no result word (pytest -v writes the id before running the test); else the first test of
    # the todo list without a result. Printed first, then the other tests without a result.
    text = open(sys.argv[4], errors="replace").read()
    starts = [m.start() for m in re.finditer(r"^== \S+: attempt \d+, ", text, re.M)]
    last = text[starts[-1]:] if starts else text
    done = from_log(sys.argv[4])
    todo = [l.strip() for l in open(sys.argv[3]) if l.strip()]
    todo = [t for t in todo if t.split("::", 1)[1] not in done]
    inflight = None
    for line in last.splitlines():
        m = re.match(r"^" + re.escape(FILE) + r"::(\S+)", line)
        if m and not LINE.match(line):
            inflight = FILE + "::" + m.group(1)
    if inflight in todo:
        todo.remove(inflight)
        todo.insert(0, inflight)
    print("\n".join(todo))
    sys.exit(0)

# compare FILE OUTPREFIX WORKPREFIX
out, work = sys.argv[3], sys.argv[4]
order, collect = [], []
for b in ("real", "fake"):
    try:
        ids = [l.strip().split("::", 1)[1] for l in open(f"{work}.{b}.ids") if l.strip()]
    except FileNotFoundError:
        ids = None
    order += ids or []
    if not ids:  # a module missing, an import that failed or crashed, or the run not made
        why = "not run"
        if os.path.exists(f"{work}.{b}.collect"):
            lines = [l.strip() for l in open(f"{work}.{b}.collect", errors="replace") if l.strip()]
            errs = [l for l in lines if re.search(r"Error\b|error:", l)]
            why = "collection failed: " + ((errs or lines or ["no output"])[-1])[:300]
        elif os.path.exists(f"{out}.{b}.txt"):
            why = open(f"{out}.{b}.txt", errors="replace").read().strip()[:300] or why
            why = why[len(f"{b}: "):] if why.startswith(f"{b}: ") else why
        collect.append(f"{b}: no tests ({why})")
order = list(dict.fromkeys(order))
R, RW = results(out, "real")
F, FW = results(out, "fake")
order += [n for n in list(R) + list(F) if n not in order]
lines, notes = [], []
passing = fake_too = differ = 0
for n in order:
    r, f = R.get(n, "MISSING"), F.get(n, "MISSING")
    lines.append(f"{n} real={r} fake={f}" + ("" if r == f else "   <- differs"))
    passing += r == "PASS"
    fake_too += r == "PASS" and f == "PASS"
    differ += r != f
    if r != f:
        for b, w in (("real", RW), ("fake", FW)):
            if n in w:
                notes.append(f"{n} ({b}): {w[n][:300]}")
lines += collect
lines.append(f"summary: {FILE}: {len(order)} tests; passing on real: {passing}; of those passing on "
             f"fake: {fake_too}; differing: {differ}")
if notes:
    lines += ["", "messages of the differing tests (junit):"] + notes
print("\n".join(lines))
EOF

# The output prefix of a test file: cuda_python for test_cuda.py (the names it always had),
# cuda_python.<x> for test_<x>.py.
prefix_for() {
  case $1 in test_cuda.py) echo cuda_python;; *) local x=${1#test_}; echo "cuda_python.${x%.py}";; esac
}

STATUS=0
for f in $FILES; do
  pre=$(prefix_for "$f")
  echo "== $f -> $OUT/$pre.*"
  rm -f "$OUT/$pre".real.*.xml "$OUT/$pre".fake.*.xml
  run_backend real "$f" "$pre"
  ok=$FAKE_OK
  [ "$f" = test_cudart.py ] && [ $FAKE_RT_OK = 0 ] && ok=0
  if [ "$ok" = 1 ]; then run_backend fake "$f" "$pre"
  else
    echo "fake: not run (the drop-in was not loaded: see $OUT/cuda_python.load.fake.txt" \
         "and $OUT/cuda_python.cudart.load.fake.txt)" > "$OUT/$pre.fake.txt"
    STATUS=1
  fi
  "$PY" "$WORK/compare.py" compare "$f" "$OUT/$pre" "$WORK/$pre" > "$OUT/$pre.diff.txt" 2>&1
  echo "comparison ($OUT/$pre.diff.txt):"
  grep -E "<- differs|^summary:|^(real|fake): no tests" "$OUT/$pre.diff.txt"
done
echo "total $((SECONDS - T0)) s"
exit $STATUS
