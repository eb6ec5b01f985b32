#!/usr/bin/env python3
"""Print row Y of a PNG as runs of one colour: "X0 X1 R,G,B" a line, X1
included.  For formats.bats, which measures what Chromium drew; only what
Chromium writes is read (8 bits a channel, RGB or RGBA, not interlaced).

Usage: png_runs.py FILE Y
"""

import struct
import sys
import zlib


def rows(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    at, idat, head = 8, b"", None
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    width, height, depth, ctype, _, _, interlace = head
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit("%s: only 8-bit RGB or RGBA, not interlaced" % path)
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev = zlib.decompress(idat), width * bpp, bytearray(width * bpp)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                cur[i] = (cur[i] + a) & 0xff
            elif kind == 2:
                cur[i] = (cur[i] + b) & 0xff
            elif kind == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 0xff
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                cur[i] = (cur[i] + pred) & 0xff
        yield [tuple(cur[x * bpp:x * bpp + 3]) for x in range(width)]
        prev = cur


def main():
    path, want = sys.argv[1], int(sys.argv[2])
    for y, px in enumerate(rows(path)):
        if y != want:
            continue
        start = 0
        for x in range(1, len(px) + 1):
            if x == len(px) or px[x] != px[start]:
                print("%d %d %d,%d,%d" % ((start, x - 1) + px[start]))
                start = x
        return
    sys.exit("%s: no row %d" % (path, want))


if __name__ == "__main__":
    main()
