#!/bin/sh
# The distributed tests, one per invocation: run_dist_tests.sh TEST MPIEXEC BUILD_DIR
# Every check looks at exit statuses and exact messages; a crash never passes.
# mpirun: root allowed, oversubscribed (2 cores), loopback only. PARITY_MPIEXEC_FLAGS overrides.
set -u
T=$1 MPIEXEC=$2 B=$3
FLAGS=${PARITY_MPIEXEC_FLAGS:---allow-run-as-root --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none --mca oob_tcp_if_include lo}
CHECK=$B/tests/dist_check TRAIN=$B/bin/parity-train
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
export PARITY_LOG=quiet
fail() { echo "FAIL: $*"; exit 1; }
mpi() { n=$1; shift; $MPIEXEC $FLAGS -np "$n" "$@"; }
has_backend() { # 0 when PARITY_BACKEND=$1 opens a device here
  PARITY_BACKEND=$1 "$TRAIN" --model mlp --steps 0 > "$TMP/probe" 2>&1 && return 0
  grep -q "names no plugin\|unavailable" "$TMP/probe" && return 1
  cat "$TMP/probe"; fail "probing backend $1"
}
# run NAME CMD...: stdout+stderr to $TMP/NAME, exit status to $TMP/NAME.rc, seconds to $TMP/NAME.s
run() {
  name=$1; shift
  t0=$(date +%s)
  "$@" > "$TMP/$name" 2>&1
  echo $? > "$TMP/$name.rc"
  echo $(( $(date +%s) - t0 )) > "$TMP/$name.s"
}
ok() { [ "$(cat "$TMP/$1.rc")" = 0 ] || { cat "$TMP/$1"; fail "$1 exited with $(cat "$TMP/$1.rc")"; }; }
curve() { grep ' step ' "$TMP/$1" | sed 's/ time .*//'; }

grads() { # the same gradient bits on 1, 2, 4 ranks, on backend $1
  has_backend "$1" || { echo "backend $1 not available here: skipped"; exit 77; }
  for n in 1 2 4; do
    PARITY_BACKEND=$1 run g$n mpi $n "$CHECK" grads
    ok g$n
    grep "^grads " "$TMP/g$n" | sed 's/ ranks [0-9]*:/:/' > "$TMP/g$n.bits"
    [ -s "$TMP/g$n.bits" ] || { cat "$TMP/g$n"; fail "no gradients printed on $n ranks"; }
    grep "full-batch gradient" "$TMP/g$n"
  done
  cmp -s "$TMP/g1.bits" "$TMP/g2.bits" || fail "$1: 2 ranks give other gradient bits than 1"
  cmp -s "$TMP/g1.bits" "$TMP/g4.bits" || fail "$1: 4 ranks give other gradient bits than 1"
  echo "$1: 1, 2 and 4 ranks give bitwise the same gradients"
}

case $T in
grads_cpu) grads cpu ;;
grads_opencl) grads opencl ;;
broadcast)
  for n in 2 4; do
    PARITY_BACKEND=cpu run b$n mpi $n "$CHECK" bcast
    ok b$n
    [ "$(grep -c 'broadcast ok' "$TMP/b$n")" = $n ] || { cat "$TMP/b$n"; fail "not every rank of $n checked its broadcast"; }
  done
  echo "broadcast from rank 0 and from the last rank, on 2 and 4 ranks" ;;
mismatch)
  for m in shape:2 dtype:2 count:2 step:2 shape:4; do
    what=${m%:*} n=${m#*:}
    case $what in
    shape) msg="allreduce: tensor 1 differs across ranks: rank 1 has f32[3,5], rank 0 has f32[3,4]" ;;
    dtype) msg="allreduce: tensor 0 differs across ranks: rank 1 has f64[7], rank 0 has f32[7]" ;;
    count) msg="allreduce: rank 1 passed 2 tensors, rank 0 passed 3" ;;
    step) msg="ranks out of step: rank 1 is in broadcast #1 while rank 0 is in allreduce #1" ;;
    esac
    PARITY_BACKEND=cpu run m mpi $n "$CHECK" $what
    ok m
    got=$(grep -cxF -e "rank 0: $msg" -e "rank 1: $msg" -e "rank 2: $msg" -e "rank 3: $msg" "$TMP/m")
    [ "$got" = $n ] || { cat "$TMP/m"; fail "$what on $n ranks: expected on every rank: $msg"; }
    echo "$what mismatch on $n ranks: $msg"
  done ;;
stall_lib)
  PARITY_DIST_TIMEOUT=1 PARITY_BACKEND=cpu run s mpi 2 -x PARITY_DIST_TIMEOUT "$CHECK" stall
  [ "$(cat "$TMP/s.rc")" != 0 ] || { cat "$TMP/s"; fail "a stalled rank: mpirun exited 0"; }
  grep -q "FAILED" "$TMP/s" && { cat "$TMP/s"; fail "the all-reduce returned without rank 1"; }
  grep -qF "parity-dist: rank 0: rank 1 did not respond within 1 s (signature exchange of allreduce #2); aborting the job" "$TMP/s" ||
    { cat "$TMP/s"; fail "no message naming rank 1"; }
  [ "$(cat "$TMP/s.s")" -le 20 ] || fail "took $(cat "$TMP/s.s") s with a 1 s timeout"
  echo "stalled rank 1 named by rank 0 after the 1 s timeout; job ended with status $(cat "$TMP/s.rc") in $(cat "$TMP/s.s") s"
  # a timeout that is no bounded wait (nan, inf: endless; abc, -5: used to be 60 s; 1e-300: aborted
  # a healthy job) is refused by parity_dist_init, quoted, before MPI starts. The five jobs run at
  # once: each is mpirun's start and its teardown after a rank exits early, about 2 s of waiting
  # and little CPU
  i=0
  for v in nan inf abc -5 1e-300; do
    i=$((i + 1))
    PARITY_DIST_TIMEOUT=$v PARITY_BACKEND=cpu run t$i mpi 1 -x PARITY_DIST_TIMEOUT "$CHECK" bcast &
  done
  wait
  i=0
  for v in nan inf abc -5 1e-300; do
    i=$((i + 1))
    [ "$(cat "$TMP/t$i.rc")" != 0 ] || { cat "$TMP/t$i"; fail "PARITY_DIST_TIMEOUT=$v accepted"; }
    grep -qF "PARITY_DIST_TIMEOUT='$v' is" "$TMP/t$i" || { cat "$TMP/t$i"; fail "PARITY_DIST_TIMEOUT=$v: no message quoting it"; }
    [ "$(cat "$TMP/t$i.s")" -le 20 ] || fail "PARITY_DIST_TIMEOUT=$v: took $(cat "$TMP/t$i.s") s"
  done
  echo "PARITY_DIST_TIMEOUT nan, inf, abc, -5, 1e-300: refused at init with the value quoted" ;;
train_cpu|train_opencl)
  be=${T#train_}
  has_backend "$be" || { echo "backend $be not available here: skipped"; exit 77; }
  export PARITY_BACKEND=$be
  A="--steps 8 --seed 3"
  run plain "$TRAIN" $A; ok plain
  run s4 "$TRAIN" $A --slices 4; ok s4
  run s2 "$TRAIN" $A --slices 2; ok s2
  [ "$(curve s4 | wc -l)" = 16 ] || { cat "$TMP/s4"; fail "expected 8 mlp and 8 cnn steps"; }
  for n in 1 2 4; do
    run d$n mpi $n "$TRAIN" --distributed $A; ok d$n
    if [ $n -gt 1 ]; then
      for mdl in mlp cnn; do
        grep -qx "$mdl parameters bitwise identical on all $n ranks" "$TMP/d$n" || { cat "$TMP/d$n"; fail "$be: $n ranks: $mdl replicas not confirmed identical"; }
      done
    fi
    [ "$(curve d$n)" = "$(curve s4)" ] || { diff "$TMP/s4" "$TMP/d$n"; fail "$be: $n ranks differ from one process with --slices 4"; }
  done
  run db mpi 2 "$TRAIN" --distributed $A --bucket-kb 0.25; ok db
  [ "$(curve db)" = "$(curve s4)" ] || { diff "$TMP/s4" "$TMP/db"; fail "$be: bucketed all-reduce differs"; }
  # one slice per rank: each bucket starts from backward's gradient hook, and the curve is the same
  run do mpi 4 "$TRAIN" --distributed $A --bucket-kb 0.25; ok do
  for mdl in mlp cnn; do
    grep -qx "$mdl: 32 gradients handed to the all-reduce from inside backward" "$TMP/do" ||
      { cat "$TMP/do"; fail "$be: 4 ranks, one slice each: $mdl's buckets did not start from inside backward"; }
  done
  [ "$(curve do)" = "$(curve s4)" ] || { diff "$TMP/s4" "$TMP/do"; fail "$be: the all-reduce overlapped with backward differs"; }
  run d2s2 mpi 2 "$TRAIN" --distributed $A --slices 2; ok d2s2
  [ "$(curve d2s2)" = "$(curve s2)" ] || { diff "$TMP/s2" "$TMP/d2s2"; fail "$be: 2 ranks, 2 slices differ from one process with --slices 2"; }
  # against the plain one-process curve: the documented bound (docs/distributed.md)
  curve plain > "$TMP/p.c"; curve s4 > "$TMP/s.c"
  paste -d' ' "$TMP/p.c" "$TMP/s.c" | awk '{ r = $5; d = $10; e = r - d; if (e < 0) e = -e; a = r < 0 ? -r : r;
      if (e > 1e-4 * a + 1e-6) { print "step", $3, $1, "plain", r, "sliced", d; bad = 1 }
      if (a > 0 && e / a > w) w = e / a }
      END { printf "plain vs sliced: worst relative loss difference %.3g over %d steps\n", w, NR; exit bad }' ||
    fail "$be: the sliced curve leaves the bound around the plain one-process curve"
  echo "$be: mpirun -np 1/2/4 --distributed (and bucketed, and overlapped with backward) give the one-process --slices 4 curve bit for bit" ;;
train_faults)
  export PARITY_BACKEND=cpu
  PARITY_DIST_TIMEOUT=2 run st mpi 2 -x PARITY_DIST_TIMEOUT "$TRAIN" --distributed --steps 6 --fault stall --fault-rank 1 --fault-step 3
  [ "$(cat "$TMP/st.rc")" != 0 ] || { cat "$TMP/st"; fail "stalled rank: mpirun exited 0"; }
  grep -qF "parity-dist: rank 0: rank 1 did not respond within 2 s" "$TMP/st" || { cat "$TMP/st"; fail "stall: no message naming rank 1"; }
  [ "$(cat "$TMP/st.s")" -le 30 ] || fail "stall: took $(cat "$TMP/st.s") s with a 2 s timeout"
  echo "parity-train, rank 1 stalls at step 3: $(grep -F 'did not respond' "$TMP/st" | head -1) (status $(cat "$TMP/st.rc"), $(cat "$TMP/st.s") s)"
  run k mpi 4 "$TRAIN" --distributed --steps 6 --fault kill --fault-rank 2 --fault-step 3
  [ "$(cat "$TMP/k.rc")" != 0 ] || { cat "$TMP/k"; fail "killed rank: mpirun exited 0"; }
  grep -q "process rank 2 .*signal 9" "$TMP/k" || { cat "$TMP/k"; fail "kill: mpirun did not name rank 2"; }
  grep -q "mlp step   3" "$TMP/k" && { cat "$TMP/k"; fail "kill: step 3 completed without rank 2"; }
  [ "$(cat "$TMP/k.s")" -le 30 ] || fail "kill: took $(cat "$TMP/k.s") s"
  echo "parity-train, rank 2 killed at step 3: $(grep 'process rank 2' "$TMP/k" | head -1) (status $(cat "$TMP/k.rc"), $(cat "$TMP/k.s") s)" ;;
resume_cpu|resume_opencl)
  # Checkpoints: a run killed with SIGKILL at a random step (one process; one rank of 2 and of 4)
  # and resumed from its last checkpoint ends with bitwise the parameters of a run never stopped,
  # also on another rank count; a cut newest checkpoint falls back to the previous one; another
  # run's checkpoint is refused.
  be=${T#resume_}
  has_backend "$be" || { echo "backend $be not available here: skipped"; exit 77; }
  export PARITY_BACKEND=$be
  A="--steps 8 --seed 3 --slices 4"
  fnv() { grep 'final parameters fnv1a' "$TMP/$1"; }
  run ref "$TRAIN" $A; ok ref
  [ "$(fnv ref | wc -l)" = 2 ] || { cat "$TMP/ref"; fail "no final fingerprints"; }
  K=$(( $(od -An -N1 -tu1 /dev/urandom) % 6 + 2 )) # 2..7: at least two checkpoints (the cut check below needs a .prev)
  echo "killing at step $K"
  resumed() { # NAME: the resumed run's fingerprints are the uninterrupted run's
    [ "$(fnv "$1")" = "$(fnv ref)" ] || { cat "$TMP/$1"; fnv ref; fail "$be: $1: resumed run ends elsewhere"; }
    grep -q "mlp: resumed from .* at step $K" "$TMP/$1" || { cat "$TMP/$1"; fail "$be: $1: not resumed at step $K"; }
  }
  for n in 1 2 4; do
    mkdir "$TMP/c$n"
    if [ $n = 1 ]; then
      run k$n "$TRAIN" $A --checkpoint-every 1 --checkpoint-dir "$TMP/c$n" --fault kill --fault-rank 0 --fault-step $K
    else
      run k$n mpi $n "$TRAIN" --distributed $A --checkpoint-every 1 --checkpoint-dir "$TMP/c$n" --fault kill --fault-rank $((n - 1)) --fault-step $K
    fi
    [ "$(cat "$TMP/k$n.rc")" != 0 ] || { cat "$TMP/k$n"; fail "$be: $n: the killed run exited 0"; }
    cp -r "$TMP/c$n" "$TMP/c${n}x" # for the other rank count
    if [ $n = 1 ]; then run r$n "$TRAIN" $A --resume "$TMP/c$n" --checkpoint-every 1
    else run r$n mpi $n "$TRAIN" --distributed $A --resume "$TMP/c$n" --checkpoint-every 1; fi
    ok r$n; resumed r$n
    [ $n = 1 ] || grep -qx "mlp checkpoints bitwise identical on all $n ranks" "$TMP/r$n" ||
      { cat "$TMP/r$n"; fail "$be: $n ranks: what the ranks loaded was not compared"; }
  done
  run r2on4 mpi 4 "$TRAIN" --distributed $A --resume "$TMP/c2x"; ok r2on4; resumed r2on4
  echo "$be: killed at step $K and resumed (1 process, 2 and 4 ranks, and 2 ranks' checkpoint on 4): final parameters bitwise those of the uninterrupted run"
  # the newest checkpoint cut in half: the previous one is used, with a note, and the end is the same
  f="$TMP/c1x/mlp.safetensors"; size=$(wc -c < "$f"); head -c $((size / 2)) "$f" > "$f.cut"; mv "$f.cut" "$f"
  run cut "$TRAIN" $A --resume "$TMP/c1x"; ok cut
  grep -q "the newest checkpoint was refused (.*); resumed from .*mlp.prev.safetensors" "$TMP/cut" || { cat "$TMP/cut"; fail "$be: a cut checkpoint: no fallback note"; }
  [ "$(fnv cut)" = "$(fnv ref)" ] || { cat "$TMP/cut"; fail "$be: resumed from the previous checkpoint, the run ends elsewhere"; }
  # another run's checkpoints (another seed): refused, exit 1, the reason named
  run foreign "$TRAIN" --steps 8 --seed 4 --slices 4 --resume "$TMP/c1"
  [ "$(cat "$TMP/foreign.rc")" = 1 ] || { cat "$TMP/foreign"; fail "$be: another run's checkpoint: exit $(cat "$TMP/foreign.rc")"; }
  grep -q "written by another run: parity-train.seed is '3', here 4" "$TMP/foreign" || { cat "$TMP/foreign"; fail "$be: another run's checkpoint: no reason"; }
  echo "$be: a cut newest checkpoint falls back to the previous one; another run's is refused: $(grep -o 'written by another run[^;]*' "$TMP/foreign" | head -1)" ;;
*) fail "unknown test $T" ;;
esac
exit 0
