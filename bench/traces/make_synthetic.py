#!/usr/bin/env python3
# Copyright 2026 The cuhal Authors.
"""Writes the synthetic allocation traces of bench/traces (format: docs/alloc_trace_format.md).

  python3 bench/traces/make_synthetic.py bench/traces [--operations N]

random_mixed: one stream, 64 slots; each step picks a slot at random and frees what it holds, or
  allocates into it a size drawn log-uniformly from 256 B to 16 MiB (seed 42). The issue's
  anchors (1240 ns/op on the H200's pool, 650 ns/op on PyTorch's caching allocator) were taken
  with 200,000 operations of this kind; the shipped file has 20,000 (`--operations 200000` for
  the long one).
multi_stream: four streams in a pipeline: stream s allocates a buffer, records an event, stream
  s+1 waits for it and frees the buffer there (a free on another stream than the allocation, the
  case where a pool must not reuse the memory before the event); a device synchronization every
  256 steps (seed 7).
Only random.random() is used, whose sequence Python keeps stable for a seed, so the files are the
same on every machine.
"""
import argparse
import json
import math
import os
import random


def log_uniform(rng, low, high):
    return int(math.exp(math.log(low) + rng.random() * (math.log(high) - math.log(low))))


def random_mixed(operations, seed=42, slots=64, low=256, high=16 << 20):
    rng = random.Random(seed)
    held = [None] * slots
    next_id = 0
    ops = []
    while len(ops) < operations:
        slot = int(rng.random() * slots)
        if held[slot] is None:
            held[slot] = next_id
            ops.append({"op": "alloc", "id": next_id, "size": log_uniform(rng, low, high),
                        "stream": 0})
            next_id += 1
        else:
            ops.append({"op": "free", "id": held[slot], "stream": 0})
            held[slot] = None
    provenance = (f"synthetic: {operations} operations on one stream, {slots} slots, sizes "
                  f"log-uniform {low} B to {high >> 20} MiB, seed {seed} "
                  f"(bench/traces/make_synthetic.py)")
    return "random_mixed", 1, provenance, ops


def multi_stream(steps, seed=7, streams=4, low=4096, high=8 << 20):
    rng = random.Random(seed)
    ops = []
    next_id = 0
    pending = []  # (id, consumer stream, event) waiting to be freed
    for step in range(steps):
        s = step % streams
        size = log_uniform(rng, low, high)
        ops.append({"op": "alloc", "id": next_id, "size": size, "stream": s})
        event = step % 32
        ops.append({"op": "record", "event": event, "stream": s})
        consumer = (s + 1) % streams
        ops.append({"op": "wait", "event": event, "stream": consumer})
        pending.append((next_id, consumer))
        next_id += 1
        # The consumer frees what it was handed, a few steps later.
        while len(pending) > 8 or (pending and rng.random() < 0.3):
            freed, on = pending.pop(0)
            ops.append({"op": "free", "id": freed, "stream": on})
        if step % 256 == 255:
            ops.append({"op": "sync"})
    for freed, on in pending:
        ops.append({"op": "free", "id": freed, "stream": on})
    provenance = (f"synthetic: a {streams}-stream pipeline of {steps} steps: each allocates on "
                  f"its stream, records an event, the next stream waits for it and frees the "
                  f"buffer there; sizes log-uniform {low} B to {high >> 20} MiB, seed {seed}, a "
                  f"device synchronization every 256 steps (bench/traces/make_synthetic.py)")
    return "multi_stream", streams, provenance, ops


def write(out_dir, trace):
    name, streams, provenance, ops = trace
    header = {"format": "cuhal-alloc-trace", "version": 1, "name": name, "streams": streams,
              "operations": len(ops), "provenance": provenance}
    with open(os.path.join(out_dir, name + ".jsonl"), "w") as f:
        for line in [header] + ops:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--operations", type=int, default=20000)
    args = parser.parse_args()
    write(args.out_dir, random_mixed(args.operations))
    write(args.out_dir, multi_stream(2000))


if __name__ == "__main__":
    main()
