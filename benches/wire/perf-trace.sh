#!/bin/sh
# System-wide tracepoints (syscalls, scheduler, device rx/tx) while tlsping
# runs across the delayed path; the events of the tlsping threads and the
# client device are what perf-split.py reads.
out=$1; shift
perf record -q -a -k CLOCK_MONOTONIC -o "$out.data" \
  -e sched:sched_wakeup,sched:sched_switch \
  -e syscalls:sys_enter_socket,syscalls:sys_exit_socket \
  -e syscalls:sys_enter_connect,syscalls:sys_exit_connect \
  -e syscalls:sys_enter_poll,syscalls:sys_exit_poll \
  -e syscalls:sys_enter_getsockopt,syscalls:sys_exit_getsockopt \
  -e syscalls:sys_enter_sendto,syscalls:sys_exit_sendto \
  -e syscalls:sys_enter_recvfrom,syscalls:sys_exit_recvfrom \
  -e syscalls:sys_enter_clock_nanosleep,syscalls:sys_exit_clock_nanosleep \
  -e net:net_dev_xmit,net:netif_receive_skb -- sleep 30 &
pp=$!
sleep 2
"$@" > "$out.json"
sleep 0.5
kill -INT $pp; wait $pp
