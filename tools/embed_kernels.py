#!/usr/bin/env python3
"""Embeds kernels_src/ into nvfp4moe.h as C string chunks.

The region between the BEGIN/END GENERATED KERNEL SOURCE markers of the header is
rewritten with one array of string chunks per source file and a table of them.
Each chunk holds at most CHUNK_LIMIT characters after concatenation, below the
4095 characters C99 guarantees and MSVC's literal limits.

    python3 tools/embed_kernels.py           rewrite nvfp4moe.h
    python3 tools/embed_kernels.py --check   exit 1 if nvfp4moe.h is out of date
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "nvfp4moe.h"
SRC_DIR = ROOT / "kernels_src"
BEGIN = "/* BEGIN GENERATED KERNEL SOURCE */"
END = "/* END GENERATED KERNEL SOURCE */"
CHUNK_LIMIT = 3500


def c_literal(text):
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "?":
            out.append("\\?")  # no trigraphs
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            raise SystemExit(f"embed_kernels: non-ASCII character {ch!r} in kernel source")
    return '"' + "".join(out) + '"'


def chunks_of(text):
    chunks, cur = [], []
    size = 0
    for line in text.splitlines(keepends=True):
        if len(line) > CHUNK_LIMIT:
            raise SystemExit("embed_kernels: a source line is longer than a chunk")
        if size + len(line) > CHUNK_LIMIT and cur:
            chunks.append(cur)
            cur, size = [], 0
        cur.append(line)
        size += len(line)
    if cur:
        chunks.append(cur)
    return chunks


def ident(name):
    return "nvfp4moe__src_" + re.sub(r"[^A-Za-z0-9]", "_", name)


def generate():
    files = sorted(p for p in SRC_DIR.iterdir() if p.suffix in (".cu", ".cuh"))
    lines = [BEGIN]
    for path in files:
        text = path.read_text(encoding="ascii")
        lines.append(f"static const char* const {ident(path.name)}[] = {{")
        for chunk in chunks_of(text):
            lines.append("  " + "\n  ".join(c_literal(l) for l in chunk) + ",")
        lines.append("  0};")
    lines.append("static const nvfp4moe__source nvfp4moe__sources[] = {")
    for path in files:
        lines.append(f'  {{"{path.name}", {ident(path.name)}}},')
    lines.append("  {0, 0}};")
    lines.append(END)
    return "\n".join(lines)


def main():
    header = HEADER.read_text(encoding="utf-8")
    start, stop = header.find(BEGIN), header.find(END)
    if start < 0 or stop < 0:
        raise SystemExit("embed_kernels: markers not found in nvfp4moe.h")
    updated = header[:start] + generate() + header[stop + len(END):]
    if "--check" in sys.argv[1:]:
        if updated != header:
            print("nvfp4moe.h is out of date with kernels_src/: run `make` (tools/embed_kernels.py)")
            return 1
        print("nvfp4moe.h matches kernels_src/")
        return 0
    if updated != header:
        HEADER.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
