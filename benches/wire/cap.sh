#!/bin/sh
# Runs in the client namespace: capture every packet on every device while the
# given command runs; kernel timestamps in nanoseconds.
out=$1; shift
tcpdump -i any -n -s 200 --time-stamp-precision=nano -w "$out.pcap" -U 2>/dev/null &
tp=$!
sleep 1
"$@" > "$out.json"
rc=$?
sleep 0.3
kill $tp; wait $tp 2>/dev/null
exit $rc
