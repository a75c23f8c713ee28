#!/usr/bin/env bash
# A 4-rank MPI run across two "hosts": two network namespaces joined by a
# veth pair, Open MPI over TCP (btl tcp, ranks 0-1 on host A where mpirun
# runs, ranks 2-3 on host B, started through `ip netns exec` as the rsh
# agent in place of ssh). Needs root and `ip netns`; exits 77 (ctest SKIP)
# with a message when namespaces cannot be made.
#   two_hosts.sh MPIRUN EXECUTOR
# Cases:
#   normal     results equal the one-host run
#   partition  the link is cut mid-run: every process on both sides ends
#              within 30 s and the report names the ranks cut off
#   sigkill    a rank on B is SIGKILLed: every process ends within 30 s
#   sigstop    a rank on B is SIGSTOPped: the report names it, every
#              process ends within 30 s
# The launcher's own TCP connections (mpirun to orted) are bounded the way
# docs/reliability.md recommends for real clusters: oob_tcp_keepalive_* and
# net.ipv4.tcp_retries2=4 in each namespace.
set -uo pipefail
mpirun="$1"
exe="$2"
limit=30

skip() {
  echo "SKIP: $*"
  exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root to make network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"

tag="pps2h$$"
nsa="${tag}a"
nsb="${tag}b"
net="10.$((200 + $$ % 50)).$(($$ / 50 % 250)).0"
ipa="${net%.0}.1"
ipb="${net%.0}.2"
tmp="$(mktemp -d)"

cleanup() {
  for ns in "$nsa" "$nsb"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add "$nsa" 2>/dev/null || skip "cannot make a network namespace (ip netns add)"
ip netns add "$nsb" || skip "cannot make a second network namespace"
ip link add "${tag}va" netns "$nsa" type veth peer name "${tag}vb" netns "$nsb" ||
  skip "cannot make a veth pair"
ip -n "$nsa" addr add "$ipa/24" dev "${tag}va"
ip -n "$nsb" addr add "$ipb/24" dev "${tag}vb"
for ns in "$nsa" "$nsb"; do
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=4
done
ip -n "$nsa" link set "${tag}va" up
ip -n "$nsb" link set "${tag}vb" up

# mpirun's rsh agent: "agent HOST COMMAND..." runs COMMAND on HOST.
cat >"$tmp/agent" <<EOF
#!/bin/sh
host="\$1"; shift
case "\$host" in
  $ipa) ns=$nsa ;;
  $ipb) ns=$nsb ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
EOF
chmod +x "$tmp/agent"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_args=(--oversubscribe -n 4 --host "$ipa:2,$ipb:2"
  --mca plm_rsh_agent "$tmp/agent" --mca btl tcp,self
  --mca btl_tcp_if_include "$net/24" --mca oob_tcp_if_include "$net/24"
  --mca oob_tcp_keepalive_time 3 --mca oob_tcp_keepalive_intvl 1
  --mca oob_tcp_keepalive_probes 3
  -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Waits until the link carries again on both ends (after the partition
# case brought it back up), so the next case's daemons can connect: a run
# started at once could not reach the launcher ("unable to complete a TCP
# connection"), which is the network, not the runtime.
link_ready() {
  for _ in $(seq 1 100); do
    if ip -n "$nsa" link show "${tag}va" | grep -q "LOWER_UP.*state UP" &&
      ip -n "$nsb" link show "${tag}vb" | grep -q "LOWER_UP.*state UP"; then
      sleep 2
      return 0
    fi
    sleep 0.1
  done
  fail "the link did not come back up within 10 s"
}

# Processes left in either namespace.
left() {
  { ip netns pids "$nsa"; ip netns pids "$nsb"; } 2>/dev/null | wc -l
}

# Starts the long run in the background (output in $tmp/out.$1), waits
# until it is under way on both hosts.
start_long() {
  local name="$1"
  ip netns exec "$nsa" "$mpirun" "${mpi_args[@]}" "$exe" --transport=mpi \
    --time-scale=1 --steps=1000000 --watchdog=2 >"$tmp/out.$name" 2>&1 &
  launcher=$!
  for _ in $(seq 1 300); do
    if grep -q "^pipeline" "$tmp/out.$name" && [ "$(rank_pids | wc -w)" -eq 2 ]; then
      sleep 2
      return 0
    fi
    sleep 0.1
  done
  fail "$name: the run did not start within 30 s"
  cat "$tmp/out.$name"
  return 1
}

# The rank processes on host B.
rank_pids() {
  local p
  for p in $(ip netns pids "$nsb" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$(basename "$exe" | cut -c1-15)" ] &&
      echo "$p"
  done
}

# Waits until every process on both hosts has ended; checks it took at most
# $limit seconds from $1 (date +%s%N) and that the launcher failed.
expect_all_end() {
  local name="$1" since="$2"
  local end=$(($(date +%s) + limit + 30))
  while [ "$(left)" -gt 0 ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
  local ms=$((($(date +%s%N) - since) / 1000000))
  local took="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  wait "$launcher"
  local rc=$?
  echo "$name: launcher exit $rc; every process ended ${took} s after the fault"
  sed 's/^/  | /' "$tmp/out.$name"
  if [ "$(left)" -gt 0 ]; then
    fail "$name: processes still alive after $((limit + 30)) s:"
    for p in $(ip netns pids "$nsa") $(ip netns pids "$nsb"); do
      ps -o pid=,args= -p "$p"
    done
  elif [ "$ms" -gt $((limit * 1000)) ]; then
    fail "$name: took ${took} s, more than $limit s"
  fi
  [ "$rc" -ne 0 ] || fail "$name: the launcher exited 0"
}

# normal: the same results as on one host.
echo "== normal"
"$mpirun" --oversubscribe -n 4 "$exe" --transport=mpi --time-scale=0.05 \
  >"$tmp/one" 2>&1 || { fail "normal: the one-host run failed"; cat "$tmp/one"; }
ip netns exec "$nsa" timeout 120 "$mpirun" "${mpi_args[@]}" "$exe" \
  --transport=mpi --time-scale=0.05 >"$tmp/two" 2>&1 ||
  { fail "normal: the two-host run failed"; }
sed 's/^/  | /' "$tmp/two"
for key in "^pipeline" "^peak activations per rank" "^ok$"; do
  a=$(grep "$key" "$tmp/one")
  b=$(grep "$key" "$tmp/two")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "normal: '$key' differs: '$a' vs '$b'"
done

# partition: cut the link mid-run.
echo "== partition"
if start_long partition; then
  t0=$(date +%s%N)
  ip -n "$nsa" link set "${tag}va" down
  expect_all_end partition "$t0"
  grep -Eq "rank [23] did not answer within .* \(cut off from rank [01]" \
    "$tmp/out.partition" || fail "partition: the report does not name the ranks cut off"
  ip -n "$nsa" link set "${tag}va" up
  ip -n "$nsb" link set "${tag}vb" up
  link_ready
fi

# sigkill / sigstop: one rank on host B.
for sig in KILL STOP; do
  name="sig$(echo $sig | tr A-Z a-z)"
  echo "== $name"
  start_long "$name" || continue
  victim=$(rank_pids | head -n1)
  rank=$(tr '\0' '\n' <"/proc/$victim/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  t0=$(date +%s%N)
  kill -s "$sig" "$victim"
  echo "$name: sent SIG$sig to rank $rank (pid $victim)"
  expect_all_end "$name" "$t0"
  if [ "$sig" = STOP ]; then
    grep -Eq "rank $rank did not answer" "$tmp/out.$name" ||
      fail "$name: the report does not name the stopped rank $rank"
  fi
done

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all cases passed"
