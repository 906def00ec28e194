# check_core.cmake — the checking executor's core (README.md here), shared by the CUDA checker
# (CMakeLists.txt here) and the OpenCL one (tests/opencl/check), whichever includes it first:
# cuda_check_core (fibers, scheduler, shadow memory, the __tsan_* hooks, reports: plain C11, not
# instrumented), the pads at both ends of the section of shared arrays (cuda_check_pad_head and
# _tail, linked first and last), and the kernels' compile flags (global property
# parity_chk_kernel_flags: -fsanitize=thread without its runtime). Sets PARITY_CHECKER_OFF in a
# sanitizer build, where nothing is defined: the executor is itself a sanitizer runtime (the
# __tsan_* hooks) and switches stacks under the sanitizer's feet (tools/ci-extra.sh).
set(PARITY_CHECKER_OFF OFF)
if(CMAKE_C_FLAGS MATCHES "-fsanitize" OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(PARITY_CHECKER_OFF ON)
elseif(NOT TARGET cuda_check_core)
  set(chk_core_dir ${CMAKE_CURRENT_LIST_DIR})
  # -fno-optimize-sibling-calls: a barrier that ends a code path must stay a call from the kernel's
  # line, not a tail jump that leaves the executor to find its caller inside itself (a false
  # divergent-barrier report, seen on a test kernel)
  set_property(GLOBAL PROPERTY parity_chk_kernel_flags -O2 -g -ffp-contract=off -fno-optimize-sibling-calls -fsanitize=thread
               --param=tsan-instrument-func-entry-exit=0 -fno-toplevel-reorder -Wall -Wextra -Wno-unused-parameter
               -Wno-missing-field-initializers)
  add_library(cuda_check_core OBJECT ${chk_core_dir}/check_fiber.c ${chk_core_dir}/check_sched.c
              ${chk_core_dir}/check_mem.c ${chk_core_dir}/check_shadow.c ${chk_core_dir}/check_shared.c
              ${chk_core_dir}/check_elf.c ${chk_core_dir}/check_hooks.c ${chk_core_dir}/check_launch.c
              ${chk_core_dir}/check_report.c)
  set_target_properties(cuda_check_core PROPERTIES POSITION_INDEPENDENT_CODE ON C_STANDARD 11
                        C_VISIBILITY_PRESET hidden)
  target_compile_options(cuda_check_core PRIVATE -O2 -g)
  target_link_libraries(cuda_check_core PRIVATE parity_warnings)
  add_library(cuda_check_pad_head OBJECT ${chk_core_dir}/check_pads.c)
  add_library(cuda_check_pad_tail OBJECT ${chk_core_dir}/check_pads.c)
  target_compile_definitions(cuda_check_pad_tail PRIVATE CHK_PAD_TAIL)
  set_target_properties(cuda_check_pad_head cuda_check_pad_tail PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
