#!/bin/sh
# parity-train --checkpoint-every / --resume on Fashion-MNIST (issue 39): a run killed with SIGKILL
# at a random step (whenever its second checkpoint appears) and resumed ends with the predictions
# of a run never stopped, bit for bit (the printed FNV-1a hash of the test set's predicted
# classes), on cpu and on opencl where present; a checkpoint of another seed is refused.
# usage: resume.sh BUILD_DIR
set -u
B=$1
T=$B/bin/parity-train
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -d /usr/share/datasets/fashion-mnist ] ||
  fail "Fashion-MNIST is missing (Debian: dataset-fashion-mnist; sh tools/install-deps.sh)"
A="--data fashion-mnist --train-images 3000 --test-images 1000 --epochs 2 --log-every 1000"
last_hash() { grep -o 'predictions [0-9a-f]*' "$1" | tail -1; }
for be in cpu opencl; do
  export PARITY_BACKEND=$be
  if ! "$T" --data fashion-mnist --epochs 0 --test-images 10 > "$TMP/probe" 2>&1; then echo "$be: not available here, skipped"; continue; fi
  "$T" $A > "$TMP/ref-$be" 2>&1 || { cat "$TMP/ref-$be"; fail "$be: the uninterrupted run"; }
  ck=$TMP/ck-$be; mkdir "$ck"
  "$T" $A --checkpoint-every 3 --checkpoint-dir "$ck" > "$TMP/k-$be" 2>&1 &
  pid=$!
  i=0; while [ ! -f "$ck/mlp.prev.safetensors" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1)); done
  kill -9 $pid 2> /dev/null; wait $pid; rc=$?
  [ -f "$ck/mlp.prev.safetensors" ] || { cat "$TMP/k-$be"; fail "$be: no checkpoint was written"; }
  "$T" $A --resume "$ck" --checkpoint-every 3 > "$TMP/r-$be" 2>&1 || { cat "$TMP/r-$be"; fail "$be: the resumed run"; }
  at=$(grep -o 'resumed from .* at step [0-9]*' "$TMP/r-$be" | grep -o '[0-9]*$')
  [ -n "$at" ] || { cat "$TMP/r-$be"; fail "$be: the run did not resume"; }
  [ "$(last_hash "$TMP/r-$be")" = "$(last_hash "$TMP/ref-$be")" ] ||
    { tail -3 "$TMP/ref-$be" "$TMP/r-$be"; fail "$be: resumed at step $at, the predictions differ from the uninterrupted run's"; }
  echo "$be: killed (status $rc) and resumed at step $at of 94: $(last_hash "$TMP/r-$be"), as the uninterrupted run"
  # another run's checkpoint: refused with the reason, exit 1
  "$T" $A --seed 2 --resume "$ck" > "$TMP/f-$be" 2>&1; frc=$?
  [ $frc = 1 ] && grep -q "written by another run: parity-train.seed is '1', here 2" "$TMP/f-$be" ||
    { cat "$TMP/f-$be"; fail "$be: another seed's checkpoint was not refused (exit $frc)"; }
done
echo "resume: ok"
