#!/bin/sh
# ci-extra.sh — the extra CI builds (.ci/run runs it after `make test`):
#   tsan    ThreadSanitizer build of libparity and the CPU plugin (OpenMP off: libgomp is not
#           instrumented); runs tests/core/threads_check.c, several threads each training in its
#           own context, with halt_on_error.
#   strict  every target with -Werror and without OpenMP; runs the core, CPU and loader tests
#           (the CPU plugin's results do not depend on its thread count, so they hold unchanged).
# Usage: tools/ci-extra.sh [tsan] [strict]   (no argument: both). Build folders: build-tsan,
# build-strict. Exit status: 0 when every job passed.
set -eu
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
jobs=${*:-tsan strict}
log() { echo "ci-extra: $*"; }

quiet() { # quiet LOG COMMAND...: run it, showing its output only when it fails
  out=$1; shift
  mkdir -p "$(dirname "$out")"
  if ! "$@" > "$out" 2>&1; then tail -n 60 "$out"; log "failed (full log: $out)"; return 1; fi
}

for job in $jobs; do
  case $job in
    tsan)
      log "ThreadSanitizer build"
      flags="-fsanitize=thread -g -O1"
      quiet build-tsan/configure.log cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
        -DCMAKE_MODULE_LINKER_FLAGS=-fsanitize=thread -DPARITY_WITH_OPENMP=OFF -DPARITY_WITH_VULKAN=OFF \
        -DPARITY_WITH_OPENCL=OFF -DPARITY_WITH_CUDA=OFF
      quiet build-tsan/build.log cmake --build build-tsan -j "$JOBS" --target parity parity_plugin_cpu threads_check
      log "ThreadSanitizer: threads training at once"
      (cd build-tsan && env PARITY_LOG=quiet PARITY_BACKEND= PARITY_PLUGIN_PATH= TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
         ./tests/threads_check)
      ;;
    strict)
      log "strict build: -Werror, no OpenMP"
      quiet build-strict/configure.log cmake -S . -B build-strict -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Werror \
        -DPARITY_WITH_OPENMP=OFF
      quiet build-strict/build.log cmake --build build-strict -j "$JOBS"
      log "strict build: core, CPU and loader tests"
      (cd build-strict && ctest -j "$JOBS" --output-on-failure -R '^(core|cpu|loader)_')
      ;;
    *) log "unknown job '$job' (tsan, strict)"; exit 2 ;;
  esac
done
log "all passed: $jobs"
