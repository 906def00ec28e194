#!/bin/sh
# ocl_check_conform.sh CONFORM VENDORS SEED [parity-conform options...]
# parity-conform on the OpenCL plugin under the OpenCL checking executor (README.md here): the ICD
# loader opens only the library of VENDORS/*.icd (OCL_ICD_VENDORS, passed with --env so every
# reproduce command carries it) with PARITY_OPENCL_CHECK_SEED=SEED. Passes only when parity-conform passes, its
# report names the checking executor with that seed, and the executor saw local or global accesses
# and switched work-items (an ICD that checks nothing fails here, not silently).
conform=$1 vendors=$2 seed=$3
shift 3
[ -x "$conform" ] && [ -d "$vendors" ] || { echo "ocl_check_conform.sh: usage: CONFORM VENDORS SEED [options]" >&2; exit 2; }
stats=$(mktemp) out=$(mktemp)
trap 'rm -f "$stats" "$out"' EXIT
OPENCL_CHECK_STATS=$stats "$conform" --backend opencl --env "OCL_ICD_VENDORS=$vendors" \
  --env "PARITY_OPENCL_CHECK_SEED=$seed" "$@" >"$out" 2>&1
rc=$?
cat "$out"
if ! grep -q "opencl-check: checking executor, seed $seed," "$out"; then
  echo "ocl_check_conform.sh: the report does not name the checking executor with seed $seed"
  exit 1
fi
# "launches L blocks B accesses A switches S barriers R reports P" (tests/cuda/check/check_launch.c)
set -- $(tail -n 1 "$stats")
if [ "${6:-0}" -eq 0 ] || [ "${8:-0}" -eq 0 ]; then
  echo "ocl_check_conform.sh: the checking executor checked no access or switched no work-item: $(cat "$stats")"
  exit 1
fi
echo "ocl_check_conform.sh: checker counters: $(tail -n 1 "$stats")"
exit $rc
