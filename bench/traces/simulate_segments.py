#!/usr/bin/env python3
"""The core CachingAllocator's reserved footprint on a one-stream trace, simulated: its classic
segments (PyTorch's size classes, what core/memory/caching_allocator.cc does today) against
expandable segments (one virtual range per pool, grown by mapping pages at its end, as PyTorch's
expandable_segments:True does over cuMemAddressReserve/cuMemMap).

    bench/traces/simulate_segments.py bench/traces/random_mixed.jsonl [--page-mib 2]
        [--min-growth-mib 0 8 16]

Model (per pool; small = requests <= 1 MiB, large = the rest; sizes rounded up to 512 B):
best fit over the pool's free blocks (smallest, then lowest address), split when the rest is at
least 512 B (small) or more than 1 MiB (large), a freed block merges with its free neighbours in
the same segment. A miss makes a new segment (classic: 2 MiB small, 20 MiB for large requests
below 10 MiB, else the request rounded to 2 MiB) or maps whole pages at the end of the pool's one
expandable segment, merging with a free block that ends there: one growth (the allocator makes
one cuMemCreate + cuMemMap + cuMemSetAccess per growth), the large pool's at least
--min-growth-mib (CachingAllocatorParams::expandable_min_growth; a column per value). Nothing is
given back (the allocator's default release threshold keeps everything until Trim). Each column
shows reserved high, its ratio to used high, and the driver allocations (classic: cuMemAlloc
calls; expandable: growths, small + large pool).

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
    def __init__(self, small, expandable, page, min_growth=0):
        self.small = small
        self.expandable = expandable
        self.page = page
        # The large pool only (the allocator's small range grows by what it lacks).
        self.min_growth = (min_growth + page - 1) // page * page if expandable and not small else 0
        self.growths = 0  # classic: segments allocated; expandable: growths mapped
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
        self.growths += 1
        if self.expandable:
            end = self.segment_end
            last = self.ends.get(end)
            have = 0
            if last is not None and self.blocks[last][1]:
                have = self.blocks[last][0]
            else:
                last = None
            grow = max((size - have + self.page - 1) // self.page * self.page, self.min_growth)
            self.mapped += grow
            self.segment_end = end + grow
            if last is None:
                self._put(end, grow, True, 0)
                last = end
            else:
                grown = have + grow
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


def simulate(path, expandable, page, min_growth=0):
    small = Pool(True, expandable, 2 * MIB, min_growth)
    large = Pool(False, expandable, page, min_growth)
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
    return reserved_high, used_high, small.growths, large.growths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--page-mib", type=int, default=2,
                        help="the large pool's mapping page (the H200's VMM granularity: 2)")
    parser.add_argument("--min-growth-mib", type=int, nargs="+", default=[0],
                        help="expandable: the least a growth maps (a column per value)")
    args = parser.parse_args()
    for path in args.traces:
        with open(path) as f:
            streams = json.loads(f.readline()).get("streams", 1)
        if streams != 1:
            sys.exit(f"{path}: {streams} streams; only one-stream traces are modelled")
    def cell(reserved, used, small, large):
        return f"{reserved / MIB:6.1f} {reserved / used:5.3f}x {small:3}+{large:<3}"

    header = f"{'trace':28} {'used high':>9} {'classic':>22}"
    for m in args.min_growth_mib:
        header += f" {'expandable, least ' + str(m) + ' MiB':>22}"
    print(header)
    for path in args.traces:
        reserved, used, small, large = simulate(path, False, 0)
        name = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        row = f"{name:28} {used / MIB:5.1f} MiB {cell(reserved, used, small, large)}"
        for m in args.min_growth_mib:
            row += " " + cell(*simulate(path, True, args.page_mib * MIB, m * MIB))
        print(row)


if __name__ == "__main__":
    main()
