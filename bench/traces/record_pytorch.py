#!/usr/bin/env python3
# Copyright 2026 The cuhal Authors.
"""Records the CUDA allocations of small PyTorch workloads as cuhal allocation traces.

Runs each workload on GPU 0 under torch.cuda.memory._record_memory_history, takes the memory
snapshot's device trace (what the program asked PyTorch's caching allocator for: `alloc` and
`free_requested`, never the allocator's own segment calls) and writes it in the cuhal
allocation trace format, version 1 (docs/alloc_trace_format.md), one file per workload.

  python3 bench/traces/record_pytorch.py OUT_DIR [--workload NAME ...]

Needs PyTorch with CUDA and a GPU; records what that machine's PyTorch does (the header says
which versions). The conversion alone (`--convert SNAPSHOT.pickle`) needs no GPU.
"""
import argparse
import json
import os
import pickle
import sys
import time

FORMAT = "cuhal-alloc-trace"
VERSION = 1


def convert(snapshot, name, provenance, device=0, measured=None):
    """Yields the trace lines (dicts) of one device's trace in `snapshot`."""
    traces = snapshot.get("device_traces", [])
    if device >= len(traces):
        raise ValueError(f"the snapshot has no trace for device {device}")
    entries = traces[device]
    streams = {}   # PyTorch's stream handle -> trace stream index, in order of appearance
    live = {}      # address -> trace id of the live allocation there
    next_id = 0
    ops = []
    t0 = None
    dropped = 0
    for e in entries:
        action = e.get("action")
        if action not in ("alloc", "free_requested"):
            continue  # segment_*, free_completed, snapshot, oom: the allocator's side
        stream = streams.setdefault(e.get("stream", 0), len(streams))
        t_us = e.get("time_us", 0)
        t0 = t_us if t0 is None else t0
        t_ns = int((t_us - t0) * 1000)
        addr = e["addr"]
        if action == "alloc":
            if addr in live:
                raise ValueError(f"address {addr:#x} allocated twice without a free")
            live[addr] = next_id
            ops.append({"op": "alloc", "id": next_id, "size": int(e["size"]),
                        "stream": stream, "t_ns": t_ns})
            next_id += 1
        else:
            if addr not in live:
                dropped += 1  # allocated before recording began
                continue
            ops.append({"op": "free", "id": live.pop(addr), "stream": stream, "t_ns": t_ns})
    header = {"format": FORMAT, "version": VERSION, "name": name, "streams": max(1, len(streams)),
              "operations": len(ops), "provenance": provenance}
    if measured:
        header["measured"] = measured  # what PyTorch's caching allocator reported for the run
    if dropped:
        header["provenance"] += f"; {dropped} free(s) of allocations made before recording dropped"
    if live:
        header["provenance"] += f"; {len(live)} allocation(s) still live at the end"
    yield header
    yield from ops


def write(path, lines):
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def transformer_training(torch, steps=4):
    """A 4-layer transformer encoder's training steps (AdamW), batch 16, sequence 128."""
    model = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024,
                                         batch_first=True), num_layers=4).cuda()
    head = torch.nn.Linear(256, 1000).cuda()
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-3)
    for step in range(steps):
        x = torch.randn(16, 128, 256, device="cuda")
        target = torch.randint(0, 1000, (16, 128), device="cuda")
        logits = head(model(x))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 1000), target.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


def transformer_inference(torch, iterations=24):
    """The same encoder in inference, batch sizes and sequence lengths varying per request."""
    model = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024,
                                         batch_first=True), num_layers=4).cuda().eval()
    shapes = [(1, 64), (4, 128), (8, 32), (2, 256), (16, 64), (1, 512)]
    with torch.no_grad():
        for i in range(iterations):
            b, s = shapes[i % len(shapes)]
            y = model(torch.randn(b, s, 256, device="cuda"))
            y.sum().item()
    torch.cuda.synchronize()


def conv_training(torch, steps=3):
    """A small convolutional network's training steps on two streams (data copies on a side
    stream, ordered by an event): PyTorch's trace shows both streams."""
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(64 * 16 * 16, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    side = torch.cuda.Stream()
    for step in range(steps):
        with torch.cuda.stream(side):
            x = torch.randn(32, 3, 64, 64, device="cuda")
            y = torch.randint(0, 10, (32,), device="cuda")
        torch.cuda.current_stream().wait_stream(side)
        x.record_stream(torch.cuda.current_stream())
        y.record_stream(torch.cuda.current_stream())
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


WORKLOADS = {
    "pytorch_transformer_train": transformer_training,
    "pytorch_transformer_infer": transformer_inference,
    "pytorch_conv_train_two_streams": conv_training,
}


def record_one(out_dir, name):
    """Records workload `name` in this process (a fresh one: nothing else allocated before)."""
    import torch
    if not torch.cuda.is_available():
        sys.exit("record_pytorch.py: no CUDA device (torch.cuda.is_available() is False)")
    gpu = torch.cuda.get_device_name(0)
    torch.cuda.init()
    at_start = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                             max_entries=1_000_000)
    start = time.time()
    WORKLOADS[name](torch)
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    measured = {"allocator": "pytorch-caching",
                "reserved_high": torch.cuda.max_memory_reserved(),
                "used_high": torch.cuda.max_memory_allocated() - at_start}
    doc = " ".join(WORKLOADS[name].__doc__.split())
    provenance = (f"{doc} Recorded {time.strftime('%Y-%m-%d')} on {gpu} with PyTorch "
                  f"{torch.__version__} (CUDA {torch.version.cuda}) by "
                  f"bench/traces/record_pytorch.py in {time.time() - start:.1f} s")
    path = os.path.join(out_dir, name + ".jsonl")
    write(path, convert(snapshot, name, provenance, measured=measured))
    with open(path + ".snapshot.pickle", "wb") as f:
        pickle.dump({"device_traces": snapshot.get("device_traces", [])}, f)
    print(f"{name}: {path}")


def record(out_dir, names):
    """Each workload in a process of its own, so that none sees another's allocations."""
    import subprocess
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        subprocess.run([sys.executable, os.path.abspath(__file__), out_dir, "--one", name],
                       check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--convert", metavar="SNAPSHOT", help="convert a saved snapshot instead")
    parser.add_argument("--one", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        record_one(args.out_dir, args.one)
        return
    if args.convert:
        with open(args.convert, "rb") as f:
            snapshot = pickle.load(f)
        name = os.path.basename(args.convert).split(".")[0]
        write(os.path.join(args.out_dir, name + ".jsonl"),
              convert(snapshot, name, f"converted from {os.path.basename(args.convert)}"))
        return
    record(args.out_dir, args.workload or sorted(WORKLOADS))


if __name__ == "__main__":
    main()
