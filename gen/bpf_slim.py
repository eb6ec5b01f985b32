#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The BPF object the tools embed: OBJ without what only a reader of it
needs.  libbpf reads .BTF (maps, functions), .BTF.ext's function and CO-RE
records, the programs, their relocations, .symtab and .maps; it copies
.BTF.ext whole to the heap and hands the line records to the kernel,
which checks each.  The line records (one per few instructions of the
unrolled walks: most of .BTF.ext), their relocations and the DWARF are
what the running tool never uses: the cfi walker's object grows from
1.2 MB to 3.7 MB with them, all of it in the tool's memory.  One line
record is kept at each function's start: libbpf and the kernel want one
there or none in the whole object.

    bpf_slim.py OBJ OUT       (build/bpf/NAME.bpf.o keeps them all)
"""
import os
import struct
import subprocess
import sys
import tempfile

OBJCOPY = os.environ.get("LLVM_OBJCOPY", "llvm-objcopy")
BTF_EXT_MAGIC = 0xEB9F


def sections(blob):
    """An info blob (record size, then per section: name, count, records)
    as (record size, [(name offset, [record bytes])])."""
    if len(blob) < 4:
        return 0, []
    size = struct.unpack_from("<I", blob, 0)[0]
    at, out = 4, []
    while at + 8 <= len(blob):
        name, count = struct.unpack_from("<II", blob, at)
        at += 8
        recs = [blob[at + i * size:at + (i + 1) * size] for i in range(count)]
        at += count * size
        out.append((name, recs))
    return size, out


def packed(size, secs):
    blob = struct.pack("<I", size)
    for name, recs in secs:
        blob += struct.pack("<II", name, len(recs)) + b"".join(recs)
    return blob


def first_lines(func, line):
    """Of the line records, one at each function's first instruction: what
    libbpf and the kernel ask of every program and subprogram."""
    _, fsecs = sections(func)
    lsize, lsecs = sections(line)
    by_name = dict(lsecs)
    out = []
    for name, frecs in fsecs:
        lrecs = by_name.get(name, [])
        keep = []
        for f in frecs:
            start = struct.unpack_from("<I", f, 0)[0]
            at = [r for r in lrecs if struct.unpack_from("<I", r, 0)[0] <= start]
            if not at:
                sys.exit("bpf_slim: no line record before a function at %d"
                         % start)
            keep.append(struct.pack("<I", start) + at[-1][4:])
        out.append((name, keep))
    return packed(lsize, out)


def without_lines(ext):
    """.BTF.ext with its function and CO-RE records and, of its line
    records, only the first of each function."""
    magic, version, flags, hdr_len = struct.unpack_from("<HBBI", ext, 0)
    if magic != BTF_EXT_MAGIC or version != 1 or hdr_len < 24:
        sys.exit("bpf_slim: .BTF.ext header not understood (magic %#x, "
                 "version %d, %d bytes)" % (magic, version, hdr_len))
    func_off, func_len, line_off, line_len = struct.unpack_from("<4I", ext, 8)
    core = (0, 0)
    if hdr_len >= 32:
        core = struct.unpack_from("<2I", ext, 24)
    body = ext[hdr_len:]
    func = body[func_off:func_off + func_len]
    line = first_lines(func, body[line_off:line_off + line_len])
    out = func + line + body[core[0]:core[0] + core[1]]
    hdr = struct.pack("<HBBI4I", magic, version, flags, hdr_len,
                      0, len(func), len(func), len(line))
    if hdr_len >= 32:
        hdr += struct.pack("<2I", len(func) + len(line), core[1])
    hdr += ext[len(hdr):hdr_len]
    return hdr + out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bpf_slim.py OBJ OUT")
    obj, out = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        ext_in = os.path.join(tmp, "ext")
        ext_out = os.path.join(tmp, "ext.slim")
        subprocess.run([OBJCOPY, "--dump-section", ".BTF.ext=" + ext_in,
                        obj, os.path.join(tmp, "scratch.o")], check=True)
        with open(ext_in, "rb") as f:
            ext = f.read()
        with open(ext_out, "wb") as f:
            f.write(without_lines(ext))
        subprocess.run([OBJCOPY, "--strip-debug",
                        "--remove-section=.rel.BTF.ext",
                        "--update-section", ".BTF.ext=" + ext_out,
                        obj, out], check=True)


if __name__ == "__main__":
    main()
