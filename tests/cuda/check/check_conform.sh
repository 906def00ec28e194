#!/bin/sh
# check_conform.sh CONFORM LIBCUDA SEED [parity-conform options...]
# parity-conform on the CUDA plugin under the checking executor (tests/cuda/check/README.md):
# the plugin opens LIBCUDA (PARITY_CUDA_DRIVER_LIBRARY, so every reproduce command carries it)
# with PARITY_CUDA_CHECK_SEED=SEED. Passes only when parity-conform passes, its report names the
# checking executor with that seed, and the executor saw shared or global accesses and switched
# threads (a driver that checks nothing fails here, not silently).
conform=$1 lib=$2 seed=$3
shift 3
[ -x "$conform" ] && [ -f "$lib" ] || { echo "check_conform.sh: usage: CONFORM LIBCUDA SEED [options]" >&2; exit 2; }
stats=$(mktemp) out=$(mktemp)
trap 'rm -f "$stats" "$out"' EXIT
CUDA_CHECK_STATS=$stats "$conform" --backend cuda --env "PARITY_CUDA_DRIVER_LIBRARY=$lib" \
  --env "PARITY_CUDA_CHECK_SEED=$seed" "$@" >"$out" 2>&1
rc=$?
cat "$out"
if ! grep -q "cuda-check: checking executor, seed $seed," "$out"; then
  echo "check_conform.sh: the report does not name the checking executor with seed $seed"
  exit 1
fi
# "launches L blocks B accesses A switches S barriers R reports P" (check_launch.c)
set -- $(tail -n 1 "$stats")
if [ "${6:-0}" -eq 0 ] || [ "${8:-0}" -eq 0 ]; then
  echo "check_conform.sh: the checking executor checked no access or switched no thread: $(cat "$stats")"
  exit 1
fi
echo "check_conform.sh: checker counters: $(tail -n 1 "$stats")"
exit $rc
