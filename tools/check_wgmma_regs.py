#!/usr/bin/env python3
"""Reads `cuobjdump -sass` text and counts instructions that write a register an issued
HGMMA still reads as its A operand (RS form) before a WARPGROUP.DEPBAR ... 0x0 retires it.
The compiler does not model that asynchronous read (kernels_src/gemm_wgmma.cu); any hit is
a race. Conservative: only wait_group 0 clears. Exit 1 on a hit.
    python3 tools/check_wgmma_regs.py kernel.sass
"""
import re
import sys
lines=[l for l in open(sys.argv[1]) if re.search(r"/\*[0-9a-f]{4}\*/",l)]
pending=set(); bad=0
for l in lines:
    ins=l.split("*/",1)[1].strip()
    m=re.match(r"(@!?P\d+\s+)?([A-Z0-9_.]+)\s*(.*);",ins)
    if not m: continue
    op=m.group(2); args=m.group(3)
    if op.startswith("HGMMA"):
        a=re.findall(r"R(\d+)",args)
        base=int(a[1]); pending|=set(range(base,base+4)); continue
    if op.startswith("WARPGROUP.DEPBAR"):
        if "0x0" in args: pending=set()
        continue
    if op.startswith("WARPGROUP.ARRIVE"): continue
    d=re.match(r"R(\d+)",args)
    if d and not op.startswith(("ST","RED","ATOM","BAR","BRA")):
        r=int(d.group(1)); w=2 if (".64" in op or op.startswith("LDG.E.64")) else (4 if ".128" in op else 1)
        hit=set(range(r,r+w))&pending
        if hit: bad+=1; print("write to pending A reg:",ins[:70]) if bad<5 else None
print(sys.argv[1], "writes into A registers with HGMMA pending (before wait 0):", bad)
sys.exit(1 if bad else 0)
