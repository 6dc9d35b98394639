"""What perf-split.py and perf-warm.py share: the events of a perf-trace.sh
recording, and their table of medians."""
import re
import statistics as st
import subprocess

_LINE = re.compile(r"^\s*(\S+)\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)$")


def events(prefix):
    """(time in µs, comm, tid, event name, the rest) of PREFIX.data, in time order."""
    out = subprocess.run(["perf", "script", "-i", prefix + ".data"],
                         capture_output=True, text=True).stdout
    ev = []
    for line in out.splitlines():
        m = _LINE.match(line)
        if m:
            comm, tid, t, name, rest = m.groups()
            ev.append((float(t) * 1e6, comm, int(tid), name, rest))
    ev.sort()
    return ev


def print_medians(title, rows):
    """Each column of `rows` (dicts of ms, None where unknown): median [p25, p75]."""
    print(f"{title}: {len(rows)} probes; ms, median [p25, p75]")
    for k in (rows[0] if rows else {}):
        v = sorted(r[k] for r in rows if r[k] is not None)
        if v:
            print(f"  {k:22} {st.median(v):+.3f} [{v[len(v)//4]:+.3f}, {v[3*len(v)//4]:+.3f}] n={len(v)}")
