#!/bin/sh
# ci-extra.sh — the extra CI builds (.ci/run runs it after `make test`):
#   asan    AddressSanitizer + UndefinedBehaviorSanitizer build of everything, with -Werror (every
#           target with warnings as errors, OpenMP on), the CPU plugin's kernel paths narrowed to
#           the one this machine runs and the portable one (PARITY_CPU_PATHS=native;portable: the
#           paths these tests run; .ci/run's make test is the -Werror build of the others); runs the whole test
#           suite (the conformance subsets on cpu, opencl, vulkan and the emulated cuda among it)
#           with leak checking (tools/lsan.supp: only libraries outside parity), less the CPU kernel
#           tests' AVX2 variants (PARITY_CPU_ISA=avx2) and the GPU plugins' launch-configuration
#           reruns of the conformance subset (make test runs both). Tests whose
#           third-party libraries are unloaded before exit (Open MPI's components, the Vulkan
#           validation layer), so that their leaks cannot be told apart, run without leak checking;
#           install_kit is left out (it links an uninstrumented out-of-tree plugin).
#   tsan    ThreadSanitizer build of libparity and the CPU plugin (OpenMP off: libgomp is not
#           instrumented; the portable kernel path only, PARITY_CPU_PATHS=portable: the races it
#           looks for are in the core and the plugin's host code, which every path shares); runs
#           tests/core/threads_check.c, several threads each training in its own context, with
#           halt_on_error.
#   strict  -Werror without OpenMP: the core, the CPU plugin, the tools and their tests, where
#           OpenMP is used (the GPU plugins, which never use it, are off here: the asan build
#           compiles them with -Werror); the CPU plugin's portable kernel path only (what OpenMP
#           changes is the code every path shares; the asan build compiles the AVX2 and AVX-512
#           paths' own code with -Werror); runs the core, CPU and loader tests (the CPU plugin's
#           results do not depend on its thread count, so they hold unchanged), on that path
#           (make test runs the kernel tests on every path).
#   fuzz    clang build of tests/fuzz (libFuzzer + AddressSanitizer + UBSan; OpenMP, OpenCL, Vulkan
#           and CUDA off; the CPU plugin's portable kernel path only: the fuzzers aim at
#           validation, shapes, the loader and the readers); each fuzzer runs FUZZ_SECONDS (default 20), two at a time, from a copy
#           of its committed corpus (tests/fuzz/corpus/<name>); any finding fails the job and leaves
#           the input in build-fuzz/fuzz/.
# Usage: tools/ci-extra.sh [asan] [tsan] [strict] [fuzz]   (no argument: all). Build folders: build-asan,
# build-tsan, build-strict, build-fuzz. Exit status: 0 when every job passed.
set -eu
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
jobs=${*:-asan tsan strict fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
t0=$(date +%s)
log() { echo "ci-extra: $* (at $(($(date +%s) - t0)) s)"; }
# Line tables only (-g1) in these builds: the sanitizers' reports and a crash's backtrace need file
# and line, not variables, and full -g costs a quarter of the compile time (var-tracking: the CPU
# plugin's reduce_float.c under ASan 40 s with -g, 30 s with -g1)
reldbg="-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
reldbg_cxx="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

quiet() { # quiet LOG COMMAND...: run it, showing its output only when it fails
  out=$1; shift
  mkdir -p "$(dirname "$out")"
  if ! "$@" > "$out" 2>&1; then tail -n 60 "$out"; log "failed (full log: $out)"; return 1; fi
}

fuzz_one() { # fuzz_one NAME: run it FUZZ_SECONDS from a copy of its corpus; 1 on a finding
  rm -rf "build-fuzz/corpus-$1" && mkdir -p "build-fuzz/corpus-$1"
  cp tests/fuzz/corpus/$1/* "build-fuzz/corpus-$1/" 2>/dev/null || true
  if ! (cd build-fuzz/fuzz && env PARITY_LOG=quiet ASAN_OPTIONS=allocator_may_return_null=1 \
          ./$1 -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "../corpus-$1" > "../$1.log" 2>&1); then
    tail -n 40 "build-fuzz/$1.log"; log "fuzzer $1 found a problem"; return 1
  fi
  log "fuzzer $1: $FUZZ_SECONDS s, $(grep -E '^stat::number_of_executed_units' "build-fuzz/$1.log" || echo 'no stats')"
}

for job in $jobs; do
  case $job in
    asan)
      log "AddressSanitizer + UBSan build"
      # the Vulkan SPIR-V from make test's build (the same source tree, brought up to date first)
      # instead of compiling it again: glslc's output does not depend on the C flags
      spirv=""
      if [ -f build/CMakeCache.txt ] && cmake --build build --target parity_plugin_vulkan > /dev/null 2>&1; then
        spirv="-DPARITY_VULKAN_SPIRV_FROM_BUILD=$PWD/build"
      fi
      flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Werror"
      link="-fsanitize=address,undefined"
      quiet build-asan/configure.log cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "$reldbg" "$reldbg_cxx" $spirv -DCMAKE_C_FLAGS="$flags" \
        "-DPARITY_CPU_PATHS=native;portable" \
        -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" -DCMAKE_MODULE_LINKER_FLAGS="$link"
      quiet build-asan/build.log cmake --build build-asan -j "$JOBS"
      log "AddressSanitizer + UBSan: the test suite, leaks checked"
      # Left to make test, to keep CI under 45 minutes:
      # - the CPU kernel tests' AVX2 variants (about 80 s of the job's 14 minutes): ASan sees the
      #   default path (AVX2 on a machine without AVX-512) and the portable one, but not the AVX2
      #   kernels on a machine with AVX-512 (this build has no such path: it is not compiled here);
      # - the portable path's reruns of the elementwise, softmax and pooling tests (121 s of test
      #   time): their kernels are the same source on every path (no intrinsics, no #if on
      #   the instruction set; only gemm, direct conv and the max/argmax reductions have
      #   path-specific code, and their portable reruns stay here);
      # - the GPU plugins' launch-configuration reruns of the conformance subset (one group, one
      #   block, subgroup 4, the strided layout, the optimised tier: about 200 s of test time).
      #   Their device code is not instrumented, and ASan sees the same host paths in the
      #   default-configuration runs;
      # - the no-float64 device profile's conformance runs (PoCL and lavapipe without f64: the same
      #   f32/f16/bf16 kernels and host paths as the default runs, less f64) and OpenCL's run on the
      #   float32 library's division (a launch configuration of the same host code);
      # - the Vulkan GPU-assisted validation run and the check of the shaders' instrumented control
      #   flow (about 60 s and 40 s): what they check is the shaders, not host code.
      skip='^(dist_|install_kit$|vulkan_conform_validation$|cpu_.*_on_avx2$|cpu_(elementwise_[a-z]+|softmax|pool)_on_portable$'
      skip="$skip|conform_opencl_(strided_layout|one_group|optimised_tier)$|vulkan_conform_(one_group|subgroup4|matmul_simple)$"
      skip="$skip|cuda_emulated_conform_one_block$|conform_opencl_(no_fp64|pmathf_div)$|vulkan_conform_(validation_)?no_fp64$"
      skip="$skip|vulkan_conform_gpu_validation(_shared_memory)?$|vulkan_spirv_gpuav_cfg$)"
      # Vulkan drivers stay mapped until exit (tools/lsan_keep_drivers.c says why): preloaded, and
      # ASan told that a library ahead of its runtime is expected.
      cc -O2 -shared -fPIC -o build-asan/lsan-keep-drivers.so tools/lsan_keep_drivers.c -ldl
      (cd build-asan && env LSAN_OPTIONS="suppressions=$PWD/../tools/lsan.supp" LD_PRELOAD="$PWD/lsan-keep-drivers.so" \
         ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 ctest -j "$JOBS" --output-on-failure -E "$skip")
      # (dist_multihost, the same parity-train and core/dist code over TCP between namespaces,
      # runs in make test only: about a minute)
      log "AddressSanitizer + UBSan: MPI and validation-layer tests, leaks not checked"
      (cd build-asan && env ASAN_OPTIONS=detect_leaks=0 ctest -j "$JOBS" --output-on-failure -R '^(dist_|vulkan_conform_validation$)' -E '^dist_multihost$')
      ;;
    tsan)
      log "ThreadSanitizer build"
      flags="-fsanitize=thread -O1"
      quiet build-tsan/configure.log cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "$reldbg" -DCMAKE_C_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
        -DCMAKE_MODULE_LINKER_FLAGS=-fsanitize=thread -DPARITY_WITH_OPENMP=OFF -DPARITY_WITH_VULKAN=OFF \
        -DPARITY_WITH_OPENCL=OFF -DPARITY_WITH_CUDA=OFF -DPARITY_CPU_PATHS=portable
      quiet build-tsan/build.log cmake --build build-tsan -j "$JOBS" --target parity parity_plugin_cpu threads_check
      log "ThreadSanitizer: threads training at once"
      (cd build-tsan && env PARITY_LOG=quiet PARITY_BACKEND= PARITY_PLUGIN_PATH= TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
         ./tests/threads_check)
      ;;
    strict)
      log "strict build: -Werror, no OpenMP (core, CPU plugin, tools)"
      quiet build-strict/configure.log cmake -S . -B build-strict -DCMAKE_BUILD_TYPE=RelWithDebInfo "$reldbg" -DCMAKE_C_FLAGS=-Werror \
        -DPARITY_WITH_OPENMP=OFF -DPARITY_WITH_VULKAN=OFF -DPARITY_WITH_OPENCL=OFF -DPARITY_WITH_CUDA=OFF \
        -DPARITY_CPU_PATHS=portable
      quiet build-strict/build.log cmake --build build-strict -j "$JOBS"
      log "strict build: core, CPU and loader tests"
      # (the reruns on the other paths, cpu_*_on_avx2 and cpu_*_on_portable, are skipped: this
      # build has the portable path only)
      (cd build-strict && ctest -j "$JOBS" --output-on-failure -R '^(core|cpu|loader)_' -E '^cpu_.*_on_(avx2|portable)$')
      ;;
    fuzz)
      log "fuzzers: clang build"
      flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
      link="-fsanitize=address,undefined"
      quiet build-fuzz/configure.log env CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo "$reldbg" \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" \
        -DCMAKE_MODULE_LINKER_FLAGS="$link" -DPARITY_BUILD_FUZZERS=ON -DPARITY_PLUGIN_NO_UNDEFINED=OFF \
        -DPARITY_WITH_OPENMP=OFF -DPARITY_WITH_VULKAN=OFF -DPARITY_WITH_OPENCL=OFF -DPARITY_WITH_CUDA=OFF \
        -DPARITY_CPU_PATHS=portable
      quiet build-fuzz/build.log cmake --build build-fuzz -j "$JOBS" --target fuzz_desc fuzz_shape fuzz_loader fuzz_cache fuzz_note fuzz_idx fuzz_safetensors parity_plugin_cpu
      # two fuzzers at a time where there are two cores (each keeps one busy)
      set -- fuzz_desc fuzz_shape fuzz_loader fuzz_cache fuzz_note fuzz_idx fuzz_safetensors
      while [ $# -gt 0 ]; do
        pids=""
        for f in $1 ${2:-}; do
          [ "$JOBS" -gt 1 ] || [ -z "$pids" ] || break
          fuzz_one "$f" & pids="$pids $!"
          shift
        done
        for pid in $pids; do wait "$pid" || { log "a fuzzer found a problem (input and log in build-fuzz/)"; exit 1; }; done
      done
      ;;
    *) log "unknown job '$job' (asan, tsan, strict, fuzz)"; exit 2 ;;
  esac
done
log "all passed: $jobs"
