#!/usr/bin/env python3
"""Each stage tlsping reports against the same interval on the wire, read from
a capture taken in the client's namespace (kernel timestamps, ns).
usage: wire.py PREFIX   (PREFIX.pcap and PREFIX.json from cap.sh) RESP_LEN"""
import json, struct, sys, statistics as st

prefix = sys.argv[1]
RESP_LEN = int(sys.argv[2])
data = open(prefix + ".pcap", "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic == 0xA1B23C4D, "nanosecond pcap expected"
linktype = struct.unpack("<I", data[20:24])[0]
off = 24
pkts = []  # (t_ns, src_port, dst_port, flags, payload_len, seq, ack)
while off + 16 <= len(data):
    sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    off += 16
    p = data[off:off + incl]
    off += incl
    t = sec * 1_000_000_000 + frac
    hl = {113: 16, 276: 20, 101: 0, 12: 0}[linktype]
    ip = p[hl:]
    if not ip or ip[0] >> 4 != 4:
        continue
    ihl = (ip[0] & 15) * 4
    total = struct.unpack(">H", ip[2:4])[0]
    if ip[9] != 6:
        continue
    tcp = ip[ihl:]
    sport, dport, seq, ackn = struct.unpack(">HHII", tcp[:12])
    doff = (tcp[12] >> 4) * 4
    flags = tcp[13]
    plen = total - ihl - doff
    pkts.append((t, sport, dport, flags, plen, seq, ackn))

doc = json.load(open(prefix + ".json"))
server_port = int(doc["run"]["url"].rsplit(":", 1)[1].strip("/")) if ":" in doc["run"]["url"].split("//")[1] else 443
# Packets can appear twice with -i any (tun and lo?): keep one per (t, ports, len).
seen = set(); uniq = []
for q in pkts:
    if q in seen: continue
    seen.add(q); uniq.append(q)
pkts = sorted(uniq)
conns = {}
for t, s, d, f, n, sq, ak in pkts:
    if d == server_port:
        conns.setdefault(s, []).append((t, "C", f, n, sq + n, ak))
    elif s == server_port:
        conns.setdefault(d, []).append((t, "S", f, n, sq + n, ak))

def flights(evs):
    """Runs of payload-carrying packets by direction: [(dir, first_t, last_t)]."""
    out = []
    for t, d, f, n, end, ak in evs:
        if n <= 0:
            continue
        if out and out[-1][0] == d:
            out[-1][2] = t
            out[-1][3] = end
        else:
            out.append([d, t, t, end])
    return out

def answer(evs, after_t, client_end):
    """The first server payload packet that acknowledges the client's byte client_end."""
    return next((t for t, d, f, n, end, ak in evs if d == "S" and n > 0 and t >= after_t and (ak - client_end) % 2**32 < 2**31), None)

info = []
for port, evs in conns.items():
    syn = next((t for t, d, f, n, e, a in evs if d == "C" and f & 0x02 and not f & 0x10), None)
    synack = next((t for t, d, f, n, e, a in evs if d == "S" and f & 0x12 == 0x12), None)
    if syn is None or synack is None:
        continue
    info.append(dict(port=port, syn=syn, synack=synack, fl=flights(evs), evs=evs))
info.sort(key=lambda c: c["syn"])
warm_conn = max(info, key=lambda c: len(c["fl"]))
colds = [c for c in info if c is not warm_conn]
samples = [s for s in doc["samples"] if s.get("ok")]
cold_s = sorted([s for s in doc["samples"] if s["mode"] == "cold"], key=lambda s: s["round"])
warm_s = sorted([s for s in doc["samples"] if s["mode"] == "warm"], key=lambda s: s["round"])
# Anchor the samples' clock (t_ms from the run's start) on the capture's:
# the first timed cold probe's SYN leaves right after its t_ms.
def ms(ns): return ns / 1e6
first_cold = next(s for s in cold_s if s.get("tcp_ms") is not None)
cands = sorted(info, key=lambda c: c["syn"])
def near(t, items, key):
    return min(items, key=lambda x: abs(key(x) - t))
# Find the anchor by trying each connection as the first cold one and
# keeping the one under which every cold sample finds a SYN within 2 ms.
best = None
for c0 in cands:
    anchor = c0["syn"] - first_cold["t_ms"] * 1e6
    err = sum(min(abs(c["syn"] - (anchor + s["t_ms"] * 1e6)) for c in cands) for s in cold_s if s.get("tcp_ms") is not None)
    if best is None or err < best[0]:
        best = (err, anchor)
anchor = best[1]
rows = {"cold tcp": [], "cold srv": [], "cold tls": [], "warm total": [], "warm srv": []}
for s in cold_s:
    if s.get("error") or s.get("warmup") or s.get("tcp_ms") is None:
        continue
    c = near(anchor + s["t_ms"] * 1e6, cands, lambda c: c["syn"])
    fl = c["fl"]
    if len(fl) < 4:
        continue
    rows["cold tcp"].append((s["tcp_ms"], ms(c["synack"] - c["syn"])))
    # The answer to a cold request follows the session tickets (and on h2
    # the server's SETTINGS): it is the first server record of the answer's
    # own length (RESP_LEN: the first answer's record on a connection).
    a = next((t for t, d, f, n, e, k in c["evs"] if d == "S" and n == RESP_LEN and t > fl[2][2]), None)
    if a is not None:
        rows["cold srv"].append((s["srv_ms"], ms(a - fl[2][2])))
    rows["cold tls"].append((s["tls_ms"], ms(fl[1][2] - fl[0][1])))
wfl = warm_conn["fl"]
cfl = [f for f in wfl if f[0] == "C"]
for s in warm_s:
    if s.get("error") or s.get("warmup") or s.get("new_conn"):
        continue
    c = near(anchor + s["t_ms"] * 1e6, cfl, lambda f: f[1])
    a = answer(warm_conn["evs"], c[2], c[3])
    if a is None:
        continue
    # the answer's last packet: the server's payload packets up to the next client flight
    k = wfl.index(c)
    last = wfl[k + 1][2] if k + 1 < len(wfl) and wfl[k + 1][0] == "S" else a
    rows["warm total"].append((s["total_ms"], ms(last - c[1])))
    rows["warm srv"].append((s["srv_ms"], ms(a - c[2])))
print(f"{prefix}: {len(info)} connections, warm conn {warm_conn['port']} with {len(wfl)} flights")
print(f"{'stage':12} {'n':>3} {'tlsping':>9} {'wire':>9} {'over':>8} {'over p25..p75':>16}")
for k, v in rows.items():
    if not v:
        continue
    ours = st.median(a for a, b in v); wire = st.median(b for a, b in v)
    over = sorted(a - b for a, b in v)
    q = lambda p: over[min(len(over) - 1, int(p * len(over)))]
    print(f"{k:12} {len(v):3} {ours:9.3f} {wire:9.3f} {st.median(over):+8.3f} {q(.25):+7.3f}..{q(.75):+.3f}")
