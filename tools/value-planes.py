#!/usr/bin/env python3
"""Where the bits of a value file go, and what collapsing distances would save.

Usage: python3 tools/value-planes.py DB/values-4-4.zst [EVERY]

Decodes every EVERY-th block (default 25) of a value file (schema/FORMAT.md, value file
v1 or v2; run it on a file written with `--keep-loss-distances`, since in a default v2 file
every loss is already one symbol), recompresses each byte plane on its own with zstd level 19 and prints bits per
position for: the base value planes, the special move plane, the special value planes;
then the same with every win distance replaced by one symbol ("win, distance by a
one-ply search": a Win(n) with n > 1 becomes code 4, which no position has, since wins
take an odd number of plies) and, separately, with every loss distance replaced by one
symbol. Needs the Python packages numpy and zstandard.
"""
import struct
import sys

import numpy as np
import zstandard as zs


def main():
    path = sys.argv[1]
    every = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    data = open(path, 'rb').read()
    if data[:8] != b'OSTLEVZB':
        sys.exit(f'{path}: not a value file')
    count, block, blocks = struct.unpack_from('<QII', data, 16)
    index_at = struct.unpack_from('<Q', data, 32)[0]
    dec = zs.ZstdDecompressor()
    c19 = zs.ZstdCompressor(level=19)
    z = lambda a: len(c19.compress(a.tobytes()))
    two = lambda v: np.concatenate([(v & 255).astype(np.uint8), (v >> 8).astype(np.uint8)])
    sizes = {}
    positions = 0
    stored = 0
    for b in range(0, blocks, every):
        off, ln, decoded, _ = struct.unpack_from('<QIIQ', data, index_at + 24 * b)
        raw = np.frombuffer(dec.decompress(data[off:off + ln], max_output_size=decoded), dtype=np.uint8)
        m = min(block, count - b * block)
        positions += m
        stored += ln
        base = raw[:m].astype(np.int32) | (raw[m:2 * m].astype(np.int32) << 8)
        s = raw[2 * m:3 * m]
        e = (len(raw) - 3 * m) // 2
        sv = raw[3 * m:3 * m + e].astype(np.int32) | (raw[3 * m + e:].astype(np.int32) << 8)
        win = lambda v: np.where((v % 2 == 0) & (v > 2), 4, v)
        loss = lambda v: np.where(v % 2 == 1, 1, v)
        for name, size in [('base', z(two(base))), ('special move', z(s)), ('special value', z(two(sv))),
                           ('base, wins collapsed', z(two(win(base)))),
                           ('special value, wins collapsed', z(two(win(sv)))),
                           ('base, losses collapsed', z(two(loss(base)))),
                           ('special value, losses collapsed', z(two(loss(sv))))]:
            sizes[name] = sizes.get(name, 0) + size
    bits = lambda n: 8 * n / positions
    print(f'{positions} positions in {len(range(0, blocks, every))} blocks; as stored {bits(stored):.3f} bits/position')
    for name, size in sizes.items():
        print(f'{name:<34} {bits(size):.3f}')
    for what in ['wins', 'losses']:
        total = sizes[f'base, {what} collapsed'] + sizes['special move'] + sizes[f'special value, {what} collapsed']
        print(f'planes with {what} collapsed: {bits(total):.3f} bits/position '
              f'(separate planes: {bits(sizes["base"] + sizes["special move"] + sizes["special value"]):.3f})')


if __name__ == '__main__':
    main()
