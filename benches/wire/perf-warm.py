#!/usr/bin/env python3
"""Splits each warm probe's total (libcurl: its start -> done) with the
tracepoints of perf-trace.sh: libcurl before the request leaves, the path
(request on the device -> answer on the device), and the wake-up, reading
and libcurl's finish after it. usage: perf-warm.py PREFIX"""
import json, sys

from perf_events import events, print_medians

prefix = sys.argv[1]
ev = events(prefix)
rounds = []
for i, (t, comm, tid, name, rest) in enumerate(ev):
    if name != "syscalls:sys_exit_sendto" or comm != "tlsping":
        continue
    r = {"sent": t, "tid": tid}
    for j in range(i - 1, max(0, i - 50), -1):
        if ev[j][3] == "net:net_dev_xmit" and ev[j][2] == tid and "dev=delayline" in ev[j][4]:
            r["xmit"] = ev[j][0]
            break
    for j in range(i + 1, min(len(ev), i + 20000)):
        tj, cj, dj, nj, rj = ev[j]
        if tj < t + 30000:
            continue
        if nj == "net:netif_receive_skb" and "dev=delayline" in rj and "wake" not in r and "read" not in r:
            r["rx"] = tj
        elif "rx" in r and "wake" not in r and nj == "sched:sched_wakeup" and f"pid={tid} " in rj:
            r["wake"] = tj
        elif "wake" in r and "run" not in r and nj == "sched:sched_switch" and f"next_pid={tid} " in rj:
            r["run"] = tj
        elif "rx" in r and nj == "syscalls:sys_exit_recvfrom" and dj == tid and not rj.startswith("0xffff"):
            r["read"] = tj
            break
    if all(k in r for k in ("xmit", "rx", "read")):
        rounds.append(r)
doc = json.load(open(prefix + ".json"))
samples = [s for s in doc["samples"] if s["mode"] == "warm" and not s.get("error")]
rounds = rounds[-len(samples):]
rows = []
for s, r in zip(samples, rounds):
    if s.get("warmup") or s.get("new_conn"):
        continue
    c = s["curl"]
    t0 = r["sent"] - c["pretransfer_us"]          # DID is stamped right after the send returns
    done = t0 + c["total_us"]
    rows.append(dict(
        over=s["total_ms"] - (r["rx"] - r["xmit"]) / 1000,
        start_to_request_out=(r["xmit"] - t0) / 1000,
        rx_to_wake=(r["wake"] - r["rx"]) / 1000 if "wake" in r else None,
        wake_to_run=(r["run"] - r["wake"]) / 1000 if "run" in r else None,
        rx_to_read=(r["read"] - r["rx"]) / 1000,
        read_to_done=(done - r["read"]) / 1000,
        headers_to_done=(c["total_us"] - c["starttransfer_us"]) / 1000,
    ))
print_medians(prefix, rows)
