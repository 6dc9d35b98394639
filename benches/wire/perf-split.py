#!/usr/bin/env python3
"""Splits each cold probe's tcp (libcurl: namelookup -> connect) into what
the tracepoints show: libcurl before the SYN, the kernel's connect path,
the path (SYN out -> SYN-ACK in at the client's device), and the wake-up
and libcurl's connect check after it.  usage: perf-split.py PREFIX"""
import json, sys

from perf_events import events, print_medians

prefix = sys.argv[1]
ev = events(prefix)
# main probe thread: the one that calls connect
probes = []
for i, (t, comm, tid, name, rest) in enumerate(ev):
    if name == "syscalls:sys_enter_connect" and comm == "tlsping":
        p = {"connect": t, "tid": tid}
        # look back for the TCP socket() and the IPv6 UDP socket() of this attempt
        for j in range(i - 1, max(0, i - 400), -1):
            tj, cj, dj, nj, rj = ev[j]
            if dj != tid:
                continue
            if nj == "syscalls:sys_enter_socket" and "type: 0x00080001" in rj and "socket" not in p:
                p["socket"] = tj
            if nj == "syscalls:sys_enter_socket" and "family: 0x0000000a, type: 0x00000002" in rj:
                p["udp6"] = tj
                break
            if nj == "syscalls:sys_exit_connect":
                break
        for j in range(i + 1, min(len(ev), i + 20000)):
            tj, cj, dj, nj, rj = ev[j]
            if "syn" not in p:
                if nj == "net:net_dev_xmit" and dj == tid and "dev=delayline" in rj and "len=60" in rj:
                    p["syn"] = tj
                continue
            if tj < p["syn"] + 30000:
                continue
            if nj == "net:netif_receive_skb" and "dev=delayline" in rj and "len=60" in rj and "wake" not in p:
                p["synack"] = tj
            elif "synack" in p and "wake" not in p and nj == "sched:sched_wakeup" and f"pid={tid} " in rj:
                p["wake"] = tj
            elif "wake" in p and "run" not in p and nj == "sched:sched_switch" and f"next_pid={tid} " in rj:
                p["run"] = tj
            elif "wake" in p and nj == "syscalls:sys_exit_getsockopt" and dj == tid:
                p["checked"] = tj
                break
        probes.append(p)
doc = json.load(open(prefix + ".json"))
samples = [s for s in doc["samples"] if s["mode"] == "cold" and s.get("tcp_ms") is not None]
probes = [p for p in probes if "syn" in p][-len(samples):]
rows = []
for s, p in zip(samples, probes):
    if s.get("warmup") or not all(k in p for k in ("socket", "syn", "synack", "checked")):
        continue
    wire = (p["synack"] - p["syn"]) / 1000
    over = s["tcp_ms"] - wire
    after = (p["checked"] - p["synack"]) / 1000
    rows.append(dict(
        over=over,
        before_syn=over - after,
        udp6_to_socket=((p["socket"] - p["udp6"]) / 1000) if "udp6" in p else None,
        socket_to_connect=(p["connect"] - p["socket"]) / 1000,
        connect_to_syn=(p["syn"] - p["connect"]) / 1000,
        after_synack=after,
        rx_to_wake=((p["wake"] - p["synack"]) / 1000) if "wake" in p else None,
        wake_to_run=((p["run"] - p["wake"]) / 1000) if "wake" in p and "run" in p else None,
        run_to_checked=((p["checked"] - p["run"]) / 1000) if "run" in p else None,
    ))
print_medians(prefix, rows)
