#!/usr/bin/env python3
"""The core CachingAllocator's reserved footprint on a one-stream trace, simulated: its classic
segments (PyTorch's size classes, what core/memory/caching_allocator.cc does today) against
expandable segments (one virtual range per pool, grown by mapping pages at its end, as PyTorch's
expandable_segments:True does over cuMemAddressReserve/cuMemMap).

    bench/traces/simulate_segments.py bench/traces/random_mixed.jsonl [--page-mib 2]

Model (per pool; small = requests <= 1 MiB, large = the rest; sizes rounded up to 512 B):
best fit over the pool's free blocks (smallest, then lowest address), split when the rest is at
least 512 B (small) or more than 1 MiB (large), a freed block merges with its free neighbours in
the same segment. A miss makes a new segment (classic: 2 MiB small, 20 MiB for large requests
below 10 MiB, else the request rounded to 2 MiB) or maps whole pages at the end of the pool's one
expandable segment, merging with a free block that ends there. Nothing is given back (the
allocator's default release threshold keeps everything until Trim).

Checked against the H200: the classic column reproduces the core allocator's measured reserved
high on every one-stream trace shipped (docs/reports/2026-12-04-alloc.md: random_mixed 168.0 MiB,
pytorch_transformer_train 350.0, pytorch_transformer_infer 72.0). Multi-stream traces are
refused: the per-stream caches and cross-stream hand-over are not modelled.
"""
import argparse
import bisect
import json
import sys

MIB = 1 << 20


def round_size(n):
    return 512 if n < 512 else (n + 511) // 512 * 512


class Pool:
    def __init__(self, small, expandable, page):
        self.small = small
        self.expandable = expandable
        self.page = page
        self.free = []  # sorted (size, address)
        self.blocks = {}  # address -> [size, is_free, segment]
        self.ends = {}  # end address -> block address
        self.segment_end = 0  # the expandable segment's mapped end
        self.next_segment = 1
        self.mapped = 0

    def _threshold(self):
        return 512 if self.small else MIB + 1

    def _put(self, address, size, is_free, segment):
        self.blocks[address] = [size, is_free, segment]
        self.ends[address + size] = address
        if is_free:
            bisect.insort(self.free, (size, address))

    def _remove(self, address):
        size, is_free, _ = self.blocks.pop(address)
        del self.ends[address + size]
        if is_free:
            self.free.remove((size, address))

    def _take(self, address, size):
        total, _, segment = self.blocks[address]
        self._remove(address)
        if total - size >= self._threshold():
            self._put(address, size, False, segment)
            self._put(address + size, total - size, True, segment)
        else:
            self._put(address, total, False, segment)
        return address

    def allocate(self, size):
        i = bisect.bisect_left(self.free, (size, -1))
        if i < len(self.free):
            return self._take(self.free[i][1], size)
        if self.expandable:
            end = self.segment_end
            last = self.ends.get(end)
            have = 0
            if last is not None and self.blocks[last][1]:
                have = self.blocks[last][0]
            else:
                last = None
            pages = (size - have + self.page - 1) // self.page
            self.mapped += pages * self.page
            self.segment_end = end + pages * self.page
            if last is None:
                self._put(end, pages * self.page, True, 0)
                last = end
            else:
                grown = have + pages * self.page
                self._remove(last)
                self._put(last, grown, True, 0)
            return self._take(last, size)
        if self.small:
            segment_size = 2 * MIB
        elif size < 10 * MIB:
            segment_size = 20 * MIB
        else:
            segment_size = (size + 2 * MIB - 1) // (2 * MIB) * (2 * MIB)
        segment = self.next_segment
        self.next_segment += 1
        address = segment << 44
        self.mapped += segment_size
        self._put(address, segment_size, True, segment)
        return self._take(address, size)

    def release(self, address):
        size, _, segment = self.blocks[address]
        self._remove(address)
        nxt = address + size
        if nxt in self.blocks and self.blocks[nxt][1] and self.blocks[nxt][2] == segment:
            size += self.blocks[nxt][0]
            self._remove(nxt)
        prev = self.ends.get(address)
        if prev is not None and self.blocks[prev][1] and self.blocks[prev][2] == segment:
            size += self.blocks[prev][0]
            self._remove(prev)
            address = prev
        self._put(address, size, True, segment)


def simulate(path, expandable, page):
    small = Pool(True, expandable, 2 * MIB)
    large = Pool(False, expandable, page)
    live = {}
    used = used_high = reserved_high = 0
    with open(path) as f:
        f.readline()  # the header (main checked its stream count)
        for number, line in enumerate(f, start=2):
            op = json.loads(line)
            if op.get("op") == "alloc":
                size = round_size(op["size"])
                pool = small if size <= MIB else large
                live[op["id"]] = (pool, pool.allocate(size), op["size"])
                used += op["size"]
            elif op.get("op") == "free":
                pool, address, size = live.pop(op["id"])
                pool.release(address)
                used -= size
            else:
                continue
            used_high = max(used_high, used)
            reserved_high = max(reserved_high, small.mapped + large.mapped)
    return reserved_high, used_high


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--page-mib", type=int, default=2,
                        help="the large pool's mapping page (the H200's VMM granularity: 2)")
    args = parser.parse_args()
    for path in args.traces:
        with open(path) as f:
            streams = json.loads(f.readline()).get("streams", 1)
        if streams != 1:
            sys.exit(f"{path}: {streams} streams; only one-stream traces are modelled")
    print(f"{'trace':36} {'used high':>10} {'classic':>16} {'expandable':>16}")
    for path in args.traces:
        classic, used = simulate(path, False, 0)
        grown, _ = simulate(path, True, args.page_mib * MIB)
        name = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        print(f"{name:36} {used / MIB:8.1f} MiB {classic / MIB:7.1f} MiB {classic / used:5.3f}x "
              f"{grown / MIB:7.1f} MiB {grown / used:5.3f}x")


if __name__ == "__main__":
    main()
