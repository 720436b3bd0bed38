#!/usr/bin/env python3
"""Summarise Nsight Compute source counters: stall samples by reason and the hottest SASS lines.

    python3 tools/ncu_source_summary.py SRC.csv.gz

SRC is `ncu --import R.ncu-rep --page source --csv --print-source sass`, gzipped (bench/device_run.sh S14
writes it). Prints each stall reason's share of all samples, the 12 lines with the most long-scoreboard
samples and the 25 lines with the most samples of any reason (with the reasons above 15 % of the line's).
"""
import csv,gzip,sys,collections
f=sys.argv[1]
rows=list(csv.reader(gzip.open(f,'rt')))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
cols=[c for c in hdr if c.startswith('stall_') and '(Not' not in c]
tot=collections.Counter()
per=[]
for r in data:
    if len(r)<len(hdr): continue
    s={c:int(r[ix[c]] or 0) for c in cols}
    tot.update(s)
    per.append((sum(s.values()),r[ix['Address']][-5:],r[ix['Source']].strip()[:60],s))
T=sum(tot.values())
print('total samples',T)
for c,v in tot.most_common(): print(f'{c:28s} {v:8d} {100*v/T:5.1f}%')
print('--- top long_sb lines')
for p in sorted(per,key=lambda x:-x[3]['stall_long_sb'])[:12]: print(p[3]['stall_long_sb'],p[1],p[2])
print('--- top lines overall')
for p in sorted(per,key=lambda x:-x[0])[:25]: print(p[0],p[1],p[2], {k[6:]:v for k,v in p[3].items() if v>p[0]*0.15})
