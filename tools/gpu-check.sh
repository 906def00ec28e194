#!/bin/sh
# gpu-check.sh — the checks that need a real NVIDIA GPU, in one run, everything written to a folder
# ($OUT when set, e.g. on the device machine, else gpu-check-out/):
#   1. the GPU and driver version (nvidia-smi) and the toolkit (nvcc), first;
#   2. configure and build (tests included), then the CUDA plugin's tests (ctest -R cuda);
#   3. parity-info (text and JSON);
#   4. the full conformance suite on cuda, and on vulkan when the Vulkan plugin sees a real GPU
#      (the NVIDIA Vulkan driver), with JSON and HTML reports;
#   5. parity-train on cuda in shadow mode against the CPU plugin (--verify), and the same run on cpu;
#   6. prepared plans on cuda (CUDA graphs): conformance's replay hazard, failing if the plugin
#      declined the plan, and the MLP training step replayed bitwise against eager;
#   7. parity-bench on cpu and cuda (and vulkan when present), and its prepared section (eager vs
#      replayed from a plan: the CUDA graph's figure) on cpu and cuda.
# Each step's output goes to <folder>/<step>.log; <folder>/summary.txt lists every step with its
# exit status. Exit status 1 when any step failed. Environment: BUILD (build folder, default
# build-gpu; an existing one keeps its configuration), JOBS (default nproc), STEPS (training steps,
# default 50), CONFORM (parity-conform's selection, default --full).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
DIR=${OUT:-gpu-check-out}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
STEPS=${STEPS:-50}
CONFORM=${CONFORM---full}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
SUMMARY="$DIR/summary.txt"
: > "$SUMMARY"
status=0

# step NAME COMMAND...: run, log to $DIR/NAME.log, show the tail, record the status (77: skipped)
step() {
  name=$1
  shift
  echo "== $name: $*"
  "$@" > "$DIR/$name.log" 2>&1
  rc=$?
  tail -n 25 "$DIR/$name.log"
  if [ $rc -eq 0 ]; then
    echo "ok       $name" >> "$SUMMARY"
  elif [ $rc -eq 77 ]; then
    echo "skipped  $name" >> "$SUMMARY"
  else
    echo "FAILED   $name (exit $rc): $*" >> "$SUMMARY"
    echo "== FAILED ($rc): $name"
    status=1
  fi
  return $rc
}

# 1. the driver first
{
  date -u
  if command -v nvidia-smi > /dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,driver_version,compute_cap,memory.total --format=csv
    nvidia-smi
  else
    echo "nvidia-smi not found: no NVIDIA driver on this machine?"
  fi
  command -v nvcc > /dev/null 2>&1 && nvcc --version || ls /usr/local/cuda/bin/nvcc 2> /dev/null
} > "$DIR/driver.log" 2>&1
cat "$DIR/driver.log"
grep -q "driver_version" "$DIR/driver.log" && echo "ok       driver" >> "$SUMMARY" || {
  echo "FAILED   driver (no nvidia-smi)" >> "$SUMMARY"
  status=1
}

# 2. build and the plugin's own tests
if [ -f "$BUILD/CMakeCache.txt" ]; then
  step configure cmake -S . -B "$BUILD" || { cat "$SUMMARY"; exit 1; }
else
  step configure cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo || { cat "$SUMMARY"; exit 1; }
fi
step build cmake --build "$BUILD" -j "$JOBS" || { cat "$SUMMARY"; exit 1; }
step ctest-cuda sh -c "cd '$BUILD' && ctest -R cuda --output-on-failure"
BIN="$BUILD/bin"

# 3. what is there
step info "$BIN/parity-info"
"$BIN/parity-info" --json > "$DIR/info.json" 2>&1
has_gpu() { # plugin name: loaded, with a device of type gpu (one line per plugin object)
  "$BIN/parity-info" --json 2> /dev/null | tr -d '\n' | sed 's/{"name":/\n&/g' |
    grep "^{\"name\":\"$1\"," | grep '"state":"loaded"' | grep -q '"type":"gpu"'
}

# 4. conformance, full sweep
if has_gpu cuda; then
  step conform-cuda "$BIN/parity-conform" --backend cuda $CONFORM --json "$DIR/conform-cuda.json" \
    --html "$DIR/conform-cuda.html"
else
  echo "FAILED   conform-cuda: the CUDA plugin has no usable GPU (see info.log)" >> "$SUMMARY"
  status=1
fi
if has_gpu vulkan; then
  step conform-vulkan "$BIN/parity-conform" --backend vulkan $CONFORM --json "$DIR/conform-vulkan.json" \
    --html "$DIR/conform-vulkan.html"
else
  echo "skipped  conform-vulkan: no Vulkan GPU (NVIDIA Vulkan driver) here" >> "$SUMMARY"
fi

# 5. training: cuda in shadow mode against cpu (every op checked), and the same run on cpu
if has_gpu cuda; then
  step train-cuda env PARITY_BACKEND=cuda "$BIN/parity-train" --model both --steps "$STEPS" --verify
  step train-cpu env PARITY_BACKEND=cpu "$BIN/parity-train" --model both --steps "$STEPS"
fi

# 6. prepared plans as CUDA graphs: the replay hazard (a decline, the host replaying op by op, fails
#    it: the log says so) and the MLP step replayed 100 times bitwise against eager
replay_hazard() {
  PARITY_LOG=debug "$BIN/parity-conform" --backend cuda --in-process --case hazard.eager-vs-replay > "$DIR/replay.tmp" 2>&1
  rc=$?
  cat "$DIR/replay.tmp"
  if grep -q "declined to prepare" "$DIR/replay.tmp"; then
    echo "the CUDA plugin declined the plan: no CUDA graph was replayed"
    rc=1
  fi
  rm -f "$DIR/replay.tmp"
  return $rc
}
if has_gpu cuda; then
  step replay-cuda replay_hazard
  step prepared-step-cuda "$BUILD/tests/core_prepared_step" --filter 'prepared_step/mlp_step_replays_bitwise_on_cuda'
fi

# 7. benchmarks beside the CPU plugin, in the same run; the prepared section (plan replay) apart
set -- --backend cpu
has_gpu cuda && set -- "$@" --backend cuda
has_gpu vulkan && set -- "$@" --backend vulkan
step bench "$BIN/parity-bench" "$@" --reps 5 --no-torch --json "$DIR/bench.json"
if has_gpu cuda; then
  step bench-prepared "$BIN/parity-bench" --backend cpu --backend cuda --section prepared --reps 5 --no-torch \
    --json "$DIR/bench-prepared.json"
fi

echo "== summary ($DIR)"
cat "$SUMMARY"
exit $status
