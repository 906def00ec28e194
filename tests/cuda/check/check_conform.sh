#!/bin/sh
# check_conform.sh cuda|opencl CONFORM DRIVER SEED [parity-conform options...]
# parity-conform on the CUDA or OpenCL plugin under the checking executor (README.md here;
# tests/opencl/check/README.md). cuda: the plugin opens DRIVER, the checking libcuda.so.1
# (PARITY_CUDA_DRIVER_LIBRARY); opencl: the ICD loader opens only the library of DRIVER/*.icd
# (OCL_ICD_VENDORS). Both are passed with --env, with PARITY_<CUDA|OPENCL>_CHECK_SEED=SEED, so
# every reproduce command carries them. Passes only when parity-conform passes, its report names
# the checking executor with that seed, and the executor saw shared/local or global accesses and
# switched threads (a driver that checks nothing fails here, not silently). CHECK_CONFORM_SPREAD=groups
# is for a launch layout of one work-item per work-group (the OpenCL plugin's CPU layout), which has
# nothing to switch within a group and whose races are between groups: it asks instead that some
# launch ran several blocks (work-groups), and that no thread was switched (a switch means a group
# of several: not that layout). CHECK_CONFORM_NAME=text: the report must also hold that text (the
# device's kind, e.g. "GPU without float64": a run on another device fails).
api=$1 conform=$2 driver=$3 seed=$4
case $api in
  cuda) driver_env=PARITY_CUDA_DRIVER_LIBRARY stats_env=CUDA_CHECK_STATS seed_env=PARITY_CUDA_CHECK_SEED ;;
  opencl) driver_env=OCL_ICD_VENDORS stats_env=OPENCL_CHECK_STATS seed_env=PARITY_OPENCL_CHECK_SEED ;;
  *) api= ;;
esac
[ -n "$api" ] && [ -x "$conform" ] && [ -e "$driver" ] && [ -n "$seed" ] ||
  { echo "check_conform.sh: usage: cuda|opencl CONFORM DRIVER SEED [options]" >&2; exit 2; }
shift 4
stats=$(mktemp) out=$(mktemp)
trap 'rm -f "$stats" "$out"' EXIT
env "$stats_env=$stats" "$conform" --backend "$api" --env "$driver_env=$driver" --env "$seed_env=$seed" "$@" \
  >"$out" 2>&1
rc=$?
cat "$out"
if ! grep -q "$api-check: checking executor, seed $seed," "$out"; then
  echo "check_conform.sh: the report does not name the checking executor with seed $seed"
  exit 1
fi
if [ -n "${CHECK_CONFORM_NAME:-}" ] && ! grep -qF "$CHECK_CONFORM_NAME" "$out"; then
  echo "check_conform.sh: the report does not name the device '$CHECK_CONFORM_NAME'"
  exit 1
fi
# "launches L blocks B accesses A switches S barriers R reports P" (check_launch.c)
set -- $(tail -n 1 "$stats")
if [ "${CHECK_CONFORM_SPREAD:-}" = groups ]; then
  if [ "${6:-0}" -eq 0 ] || [ "${4:-0}" -le "${2:-0}" ] || [ "${8:-0}" -ne 0 ]; then
    echo "check_conform.sh: the checking executor checked no access, ran no launch of several groups, or switched" \
      "threads (groups of several: not a layout of one per group): $(cat "$stats")"
    exit 1
  fi
elif [ "${6:-0}" -eq 0 ] || [ "${8:-0}" -eq 0 ]; then
  echo "check_conform.sh: the checking executor checked no access or switched no thread: $(cat "$stats")"
  exit 1
fi
echo "check_conform.sh: checker counters: $(tail -n 1 "$stats")"
exit $rc
