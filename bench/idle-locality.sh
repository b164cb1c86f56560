#!/bin/sh
# Idle CPU and wake-ups of strata with a managed pool, control on etcd and
# locality on: the configuration issue 23's "≤ 3 ms/s" goal is about, which
# `strata bench compare --idle` has no target for (it starts no etcd).
#
# usage: bench/idle-locality.sh [-r rounds] [-t seconds] STRATA_BINARY...
#
# Each round starts, for every binary in turn, a fresh memcached (the
# managed L2), a second memcached (standing in for the peer region's link
# listener, which speaks the meta protocol), a one-member etcd and the
# strata; leaves them 2 s to settle (so start-up work is behind them); then
# reads the strata's /proc/PID/task/*/schedstat before and after the given
# seconds: on-CPU time and the number of times a thread went on a CPU
# (wake-ups). Binaries alternate within each round so the machine's load
# falls on all of them alike. One line per measurement, then the median of
# each binary; the load average is printed with every line because other
# work on the machine shows in the figures.
set -eu
rounds=3
secs=10
while getopts r:t: o; do
	case $o in
	r) rounds=$OPTARG ;;
	t) secs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-t seconds] STRATA_BINARY..." >&2; exit 2; }

dir=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# port asks the kernel for a free loopback port.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# waitport polls until something accepts on 127.0.0.1:$1 (20 s at most).
waitport() {
	python3 - "$1" <<'EOF'
import socket, sys, time
end = time.time() + 20
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
}

# sched prints the summed on-CPU nanoseconds and timeslices of pid $1.
sched() { cat /proc/"$1"/task/*/schedstat | awk '{c+=$1; n+=$3} END {print c, n}'; }

user=""
[ "$(id -u)" = 0 ] && user="-u nobody"

measure() { # $1 binary, $2 label
	mc=$(port); peer=$(port); ec=$(port); ep=$(port)
	listen=$(port); admin=$(port); link=$(port)
	memcached -l 127.0.0.1 -p "$mc" -U 0 -t 1 -m 64 $user & m1=$!
	memcached -l 127.0.0.1 -p "$peer" -U 0 -t 1 -m 64 $user & m2=$!
	etcd --name idle --data-dir "$dir/etcd-$ec" \
		--listen-client-urls "http://127.0.0.1:$ec" --advertise-client-urls "http://127.0.0.1:$ec" \
		--listen-peer-urls "http://127.0.0.1:$ep" --initial-advertise-peer-urls "http://127.0.0.1:$ep" \
		--initial-cluster "idle=http://127.0.0.1:$ep" --log-level error >/dev/null 2>&1 & e=$!
	pids="$m1 $m2 $e"
	waitport "$mc"; waitport "$peer"; waitport "$ec"
	cat >"$dir/strata.toml" <<EOF
[server]
listen = "127.0.0.1:$listen"
region = "a"

[l1]
kind = "none"

[l2]
servers = ["127.0.0.1:$mc"]
managed = true

[admin]
listen = "127.0.0.1:$admin"

[log]
level = "error"

[control]
etcd = ["127.0.0.1:$ec"]

[locality]
region = "a"
link_listen = "127.0.0.1:$link"

[[locality.peer]]
region = "b"
link = "127.0.0.1:$peer"

[[locality.rule]]
prefix = "u:"
tag = true
EOF
	"$1" serve --config "$dir/strata.toml" >"$dir/strata.log" 2>&1 & s=$!
	pids="$s $pids"
	waitport "$listen" || { cat "$dir/strata.log" >&2; exit 1; }
	sleep 2
	a=$(sched "$s")
	sleep "$secs"
	b=$(sched "$s")
	echo "$a $b" | awk -v l="$2" -v t="$secs" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
		'{printf "%s\t%.2f ms/s\t%.0f wakeups/s\tload %s\n", l, ($3-$1)/1e6/t, ($4-$2)/t, load}' | tee -a "$dir/results"
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=""
	rm -rf "$dir/etcd-$ec"
}

r=1
while [ "$r" -le "$rounds" ]; do
	for bin in "$@"; do measure "$bin" "$bin"; done
	r=$((r + 1))
done
echo "medians of $rounds rounds, $secs s each:"
for bin in "$@"; do
	grep -F "$bin	" "$dir/results" | awk -F'\t' '{split($2,c," "); split($3,w," "); print c[1], w[1]}' |
		sort -n | awk -v l="$bin" '{c[NR]=$1; w[NR]=$2} END {m=int((NR+1)/2); printf "%s\t%.2f ms/s\n", l, c[m]}'
	grep -F "$bin	" "$dir/results" | awk -F'\t' '{split($3,w," "); print w[1]}' |
		sort -n | awk -v l="$bin" '{w[NR]=$1} END {m=int((NR+1)/2); printf "%s\t%.0f wakeups/s\n", l, w[m]}'
done
