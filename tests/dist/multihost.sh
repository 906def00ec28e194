#!/bin/sh
# Several hosts on one machine: multihost.sh BUILD_DIR MPIEXEC
# Each "host" is a network namespace with its own address and hostname, joined to the others by a
# veth pair into a bridge (a switch namespace); every link is shaped to 1 Gbit/s with tbf (this
# kernel has no netem, so no latency is added). Open MPI starts the remote daemons through
# plm_rsh_agent = a script that enters the host's namespace instead of ssh, and runs TCP between
# the namespaces (btl self,tcp: no shared memory across hosts). Checked, on cpu and (where present)
# opencl: parity-train --distributed on 2 hosts x 2 ranks and 4 hosts x 1 rank gives bitwise the
# one-process --slices 4 curve; a rank killed mid-run is named and the survivors stop (no hang), and
# --resume from the last checkpoint ends bitwise at the uninterrupted run's parameters. Measured
# (printed, never asserted): all-reduce GB/s over the links beside MPI_Allreduce, and CNN step time
# with the all-reduce overlapped with backward and without. Needs root (exit 77 otherwise).
# Registered as the test dist_multihost; .ci/run runs make test with PARITY_MULTIHOST_REQUIRED=1.
set -u
B=$1 MPIEXEC=$2
TRAIN=$B/bin/parity-train BENCH=$B/bin/parity-dist-bench
fail() { echo "FAIL: $*"; exit 1; }
# PARITY_MULTIHOST_REQUIRED=1 (.ci/run): a machine that cannot run it fails instead of skipping
skip() { echo "skipped: $*"; [ "${PARITY_MULTIHOST_REQUIRED:-0}" = 1 ] && exit 1; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip > /dev/null && command -v tc > /dev/null && command -v unshare > /dev/null ||
  skip "needs ip, tc (iproute2) and unshare (util-linux)"
TMP=$(mktemp -d) || exit 1
P=pm$(( $$ % 10000 ))       # namespace and link names (interface names: at most 15 characters)
NET=10.77.$(( $$ % 250 + 1 )) # this run's subnet
cleanup() {
  for ns in $(ip netns list | awk -v p="$P" 'index($1, p) == 1 { print $1 }'); do ip netns del "$ns"; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add "${P}sw" 2> "$TMP/err" || skip "cannot create a network namespace: $(cat "$TMP/err")"
ip -n "${P}sw" link add br0 type bridge || skip "no bridge support"
ip -n "${P}sw" link set br0 up

# hosts N: namespaces ${P}h0..h(N-1) at $NET.1.., the hostfile and the agent's map
hosts() {
  : > "$TMP/map"
  for i in $(seq 0 $(( $1 - 1 ))); do
    h=${P}h$i a=$NET.$(( i + 1 ))
    if ! ip netns list | grep -q "^$h "; then
      ip netns add "$h"
      ip link add "${P}v$i" type veth peer name "${P}b$i"
      ip link set "${P}v$i" netns "$h"
      ip link set "${P}b$i" netns "${P}sw"
      ip -n "${P}sw" link set "${P}b$i" master br0 up
      ip -n "$h" addr add "$a/24" dev "${P}v$i"
      ip -n "$h" link set "${P}v$i" up
      ip -n "$h" link set lo up
      ip netns exec "$h" tc qdisc add dev "${P}v$i" root tbf rate 1gbit burst 256kb latency 50ms ||
        fail "cannot shape $h's link"
    fi
    echo "$a $h" >> "$TMP/map"
  done
}
cat > "$TMP/agent.sh" << 'AGENT'
#!/bin/sh
# plm_rsh_agent: "ssh HOST CMD..." becomes CMD run in the namespace that plays HOST, as HOST
host=$1; shift
ns=$(awk -v h="$host" '$1 == h { print $2 }' "$(dirname "$0")/map")
[ -n "$ns" ] || { echo "agent: unknown host $host" >&2; exit 255; }
exec ip netns exec "$ns" unshare --uts sh -c "hostname $host; $*"
AGENT
chmod +x "$TMP/agent.sh"

# mh NAME HOSTS RANKS_PER_HOST CMD...: mpirun from host 0 over HOSTS hosts; output in $TMP/NAME
mh() {
  name=$1 nh=$2 per=$3; shift 3
  hosts "$nh"
  awk -v s="$per" '{ print $1 " slots=" s }' "$TMP/map" > "$TMP/hostfile"
  t0=$(date +%s)
  timeout 300 ip netns exec "${P}h0" unshare --uts sh -c "hostname $NET.1; exec \"\$0\" \"\$@\"" \
    "$MPIEXEC" --allow-run-as-root --hostfile "$TMP/hostfile" --mca plm_rsh_agent "$TMP/agent.sh" \
    --mca btl self,tcp --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24" \
    --map-by node -x PARITY_BACKEND -x PARITY_LOG=quiet -x PARITY_DIST_TIMEOUT -np $(( nh * per )) "$@" \
    > "$TMP/$name" 2>&1
  echo $? > "$TMP/$name.rc"
  echo $(( $(date +%s) - t0 )) > "$TMP/$name.s"
}
ok() { [ "$(cat "$TMP/$1.rc")" = 0 ] || { cat "$TMP/$1"; fail "$1 exited with $(cat "$TMP/$1.rc")"; }; }
curve() { grep ' step ' "$TMP/$1" | sed 's/ time .*//'; }
fnv() { grep 'final parameters fnv1a' "$TMP/$1"; }
export PARITY_LOG=quiet PARITY_DIST_TIMEOUT=10

for be in cpu opencl; do
  export PARITY_BACKEND=$be
  if ! "$TRAIN" --model mlp --steps 0 > "$TMP/probe" 2>&1; then echo "$be: not available here, skipped"; continue; fi
  A="--steps 8 --seed 3"
  "$TRAIN" $A --slices 4 > "$TMP/s4-$be" 2>&1 || { cat "$TMP/s4-$be"; fail "$be: one process"; }
  for layout in 2x2 4x1; do
    mh "$layout-$be" "${layout%x*}" "${layout#*x}" "$TRAIN" --distributed $A; ok "$layout-$be"
    [ "$(curve "$layout-$be")" = "$(curve "s4-$be")" ] ||
      { diff "$TMP/s4-$be" "$TMP/$layout-$be"; fail "$be: $layout hosts x ranks differ from one process with --slices 4"; }
    grep -qx "cnn parameters bitwise identical on all 4 ranks" "$TMP/$layout-$be" || { cat "$TMP/$layout-$be"; fail "$be: $layout: replicas"; }
    echo "$be: $layout (hosts x ranks) over 1 Gbit/s links: the one-process --slices 4 curve bit for bit ($(cat "$TMP/$layout-$be.s") s)"
  done
  # a rank lost over the network, then resumed from the last checkpoint
  mkdir "$TMP/ck-$be"
  mh "kill-$be" 4 1 "$TRAIN" --distributed $A --checkpoint-every 1 --checkpoint-dir "$TMP/ck-$be" --fault kill --fault-rank 3 --fault-step 5
  [ "$(cat "$TMP/kill-$be.rc")" != 0 ] || { cat "$TMP/kill-$be"; fail "$be: a killed rank: mpirun exited 0"; }
  grep -q "rank 3 .*signal 9\|process rank 3" "$TMP/kill-$be" || { cat "$TMP/kill-$be"; fail "$be: the lost rank is not named"; }
  [ "$(cat "$TMP/kill-$be.s")" -le 60 ] || fail "$be: the survivors took $(cat "$TMP/kill-$be.s") s to stop"
  mh "resume-$be" 4 1 "$TRAIN" --distributed $A --resume "$TMP/ck-$be"; ok "resume-$be"
  [ "$(fnv "resume-$be")" = "$(fnv "s4-$be")" ] || { cat "$TMP/resume-$be"; fail "$be: the resumed run ends elsewhere"; }
  echo "$be: rank 3 of 4 hosts killed at step 5: named, the others stopped in $(cat "$TMP/kill-$be.s") s; resumed on 4 hosts: final parameters bitwise the uninterrupted run's"
done

# Figures over the shaped links (printed for the notes, not asserted)
export PARITY_BACKEND=cpu
if [ -x "$BENCH" ]; then
  mh bench 2 1 "$BENCH" --max-mib 16
  ok bench
  sed -n '/size/,$p' "$TMP/bench" | sed 's/^/bench (2 hosts, 1 Gbit\/s): /'
fi
for mode in overlap no-overlap; do
  extra=""; [ $mode = no-overlap ] && extra=--no-overlap
  mh "cnn-$mode" 2 1 "$TRAIN" --distributed --model cnn --slices 2 --steps 60 --bucket-kb 1 $extra
  ok "cnn-$mode"
  grep ' step ' "$TMP/cnn-$mode" | awk -v m="$mode" 'NR > 10 { t += $(NF - 1); n++ }
    END { printf "cnn, 2 hosts x 1 rank, bucketed all-reduce %s: %.3f ms per step (16 images: %.0f images/s)\n", m, t / n, 16000 * n / t }'
done
[ "$(curve cnn-overlap)" = "$(curve cnn-no-overlap)" ] || fail "the overlapped curve differs from the one without overlap"
echo "multihost: ok"
