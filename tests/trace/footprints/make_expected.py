#!/usr/bin/env python3
"""Derives the compact expected-footprint file from a pool_footprint_real_test dump.

Usage: make_expected.py DUMP DATE > tests/trace/footprints/real-DATE.txt

DUMP is what CUHAL_FOOTPRINT_DUMP=<file> made pool_footprint_real_test write on the GPU machine
(sections "== <trace> <config>", one line per trace operation with the fake's and the real
pool's result, address, RESERVED and USED). Only the real column is kept:
  - RESERVED where it changes (step index, then the value in 32 MiB granules; it is always a
    whole number of them);
  - every allocation's address as its offset from the pool's first allocation, in units of
    512 bytes (the pool's packing), base 36;
  - USED is not stored: the script checks that it is, at every step, the sum of the sizes of the
    trace's live allocations (what the test recomputes from the trace).
Every real result must be CUDA_SUCCESS (the test replays without failures).
"""
import re
import sys

GRANULE = 32 << 20
LINE = re.compile(
    r'(\d+) (\w+) id=(\d+) size=(\d+) stream=(-?\d+) \| fake \S+ 0x[0-9a-f]+ R=\d+ U=\d+ '
    r'\| real (\S+) 0x([0-9a-f]+) R=(\d+) U=(\d+)$')
DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'


def base36(n):
    out = ''
    while True:
        n, d = divmod(n, 36)
        out = DIGITS[d] + out
        if n == 0:
            return out


def wrap(prefix, words, width=100):
    lines, cur = [], prefix
    for w in words:
        if len(cur) + 1 + len(w) > width and cur != prefix:
            lines.append(cur)
            cur = prefix
        cur += ' ' + w
    if cur != prefix:
        lines.append(cur)
    return lines


def main():
    dump, date = sys.argv[1], sys.argv[2]
    sections = []
    for raw in open(dump):
        raw = raw.rstrip('\n')
        if raw.startswith('== '):
            _, trace, config = raw.split()
            sections.append((trace, config, []))
            continue
        m = LINE.match(raw)
        if not m:
            sys.exit('unreadable line: ' + raw)
        sections[-1][2].append(m.groups())
    print('# The real pool\'s footprint, step by step, measured ' + date + ' by')
    print('# tests/trace/pool_footprint_real_test (driver 580.159.04; H100 and H200 gave the same),')
    print('# derived from its CUHAL_FOOTPRINT_DUMP by tests/trace/footprints/make_expected.py.')
    print('# "trace NAME CONFIG STEPS RESERVED_HIGH USED_HIGH", then "R step:granules ..." (RESERVED')
    print('# where it changes, in 32 MiB granules, steps counted from 0) and "A offset ..." (each')
    print('# allocation\'s offset from the pool\'s first, in 512-byte units, base 36). USED is the sum')
    print('# of the live allocations\' sizes at every step (checked when this file was made).')
    for trace, config, rows in sorted(sections, key=lambda s: (s[0], s[1])):
        base = None
        live = {}
        used = 0
        reserved = 0
        changes, addresses = [], []
        reserved_high = used_high = 0
        for i, (line, op, op_id, size, stream, result, addr, r, u) in enumerate(rows):
            if result != 'CUDA_SUCCESS':
                sys.exit('%s %s line %s: %s' % (trace, config, line, result))
            addr, r, u, size = int(addr, 16), int(r), int(u), int(size)
            if op == 'alloc':
                if base is None:
                    base = addr
                off = addr - base
                if off % 512:
                    sys.exit('unaligned offset at line ' + line)
                addresses.append(base36(off // 512))
                live[op_id] = size
                used += size
            elif op == 'free':
                used -= live.pop(op_id)
            if u != used:
                sys.exit('%s %s line %s: USED %d, live sum %d' % (trace, config, line, u, used))
            if r % GRANULE:
                sys.exit('RESERVED not whole granules at line ' + line)
            if r != reserved:
                changes.append('%d:%d' % (i, r // GRANULE))
                reserved = r
            reserved_high = max(reserved_high, r)
            used_high = max(used_high, u)
        print('trace %s %s %d %d %d' % (trace, config, len(rows), reserved_high, used_high))
        for out in wrap('R', changes) + wrap('A', addresses):
            print(out)


if __name__ == '__main__':
    main()
