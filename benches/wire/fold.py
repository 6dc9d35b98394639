#!/usr/bin/env python3
"""Inclusive samples of each function directly below ROOT in perf script
call stacks (stdin): where ROOT's time goes. usage: fold.py ROOT"""
import sys, collections, re
root = sys.argv[1]
stacks, cur = [], []
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line.strip():
        if cur: stacks.append(cur)
        cur = []
        continue
    if line.startswith("\t") or line.startswith(" "):
        m = re.match(r"\s+[0-9a-f]+\s+(.+?)\s+\(", line)
        if m: cur.append(m.group(1).split("+0x")[0])
if cur: stacks.append(cur)
total = len(stacks)
under = collections.Counter(); inroot = 0
for st in stacks:
    # st is leaf-first
    if root in st:
        inroot += 1
        i = st.index(root)
        child = st[i - 1] if i > 0 else "(self)"
        under[child] += 1
print(f"{total} samples, {inroot} under {root}")
for k, v in under.most_common(25):
    print(f"{v:6} {100*v/max(inroot,1):5.1f}%  {k}")
