# Every SPIR-V variant the plugin embeds: vk_variant(<name> <file> <defines...>). Host code finds
# a variant by name with vkp_spv_find("<kernel>_<dtype>"). Included by ../CMakeLists.txt.

# Math paths (common.glsl, mathpath.glsl): f32, f16 and bf16 variants use the float32 library
# and no double. vk_variant_math() adds, for those dtypes, a twin "<name>_dmath" built with
# -DDMATH: the software double path that PARITY_VULKAN_FP64=on selects (benchmarks, comparison).
# Only kernels whose math differs between the paths get a twin.
function(vk_variant_math name file dt)
  vk_variant(${name} ${file} ${ARGN})
  if(dt STREQUAL "f32" OR dt STREQUAL "f16" OR dt STREQUAL "bf16")
    vk_variant(${name}_dmath ${file} ${ARGN} DMATH)
  endif()
endfunction()

# elementwise.comp. Floating unary and binary kernels get one variant per op (FIXED_OP): a module
# holding every op would carry the whole math library, which lavapipe compiles in tens of seconds
# per pipeline. Integer kernels take the op as a specialization constant. Ops flagged FLOAT in
# parity_ops.def (the math ops and leaky_relu) differ between the math paths.
file(READ ${PROJECT_SOURCE_DIR}/abi/parity_ops.def vk_ops_def)
string(REGEX MATCHALL "PARITY_OP\\( *[0-9]+, *[A-Z_0-9]+, *\"[a-z_0-9]+\", *(UNARY|BINARY)[^)]*" vk_ew_ops "${vk_ops_def}")
foreach(e ${vk_ew_ops})
  string(REGEX REPLACE "PARITY_OP\\( *[0-9]+, *([A-Z_0-9]+), *\"([a-z_0-9]+)\", *([A-Z]+).*$" "\\1;\\2;\\3" parts "${e}")
  list(GET parts 0 OPN)
  list(GET parts 1 opn)
  list(GET parts 2 kind)
  string(TOLOWER ${kind} k)
  string(FIND "${e}" "PARITY_OPF_FLOAT" has_math)
  foreach(dt ${vk_floats})
    set(fn vk_variant)
    set(dtarg "")
    if(NOT has_math EQUAL -1)
      set(fn vk_variant_math)
      set(dtarg ${dt})
    endif()
    cmake_language(CALL ${fn} ew_${k}_${dt}_${opn} elementwise.comp ${dtarg} K_${kind} FIXED_OP=OP_${OPN}
                   DT=${vk_code_${dt}} ${vk_flags_${dt}})
    cmake_language(CALL ${fn} ew_${k}_bwd_${dt}_${opn} elementwise.comp ${dtarg} K_${kind}_BWD FIXED_OP=OP_${OPN}
                   DT=${vk_code_${dt}} ${vk_flags_${dt}})
  endforeach()
endforeach()
foreach(dt i32 i64)
  vk_variant(ew_unary_${dt} elementwise.comp K_UNARY DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant(ew_binary_${dt} elementwise.comp K_BINARY DT=${vk_code_${dt}} ${vk_flags_${dt}})
endforeach()
foreach(dt ${vk_all})
  vk_variant(ew_compare_${dt} elementwise.comp K_COMPARE DT=${vk_code_${dt}} ${vk_flags_${dt}} USES_8BIT_STORAGE)
endforeach()
vk_variant(ew_select_1 elementwise.comp K_SELECT ES=1 USES_8BIT_STORAGE)
vk_variant(ew_select_2 elementwise.comp K_SELECT ES=2 USES_8BIT_STORAGE USES_F16_STORAGE)
vk_variant(ew_select_4 elementwise.comp K_SELECT ES=4 USES_8BIT_STORAGE)
vk_variant(ew_select_8 elementwise.comp K_SELECT ES=8 USES_8BIT_STORAGE)
vk_variant(ew_select_bwd_2 elementwise.comp K_SELECT_BWD ES=2 USES_8BIT_STORAGE USES_F16_STORAGE)
vk_variant(ew_select_bwd_4 elementwise.comp K_SELECT_BWD ES=4 USES_8BIT_STORAGE)
vk_variant(ew_select_bwd_8 elementwise.comp K_SELECT_BWD ES=8 USES_8BIT_STORAGE)
foreach(s ${vk_all})
  foreach(d ${vk_all})
    set(f ${vk_flags_${s}} ${vk_flags_${d}} USES_FLOAT)
    list(REMOVE_DUPLICATES f)
    vk_variant(ew_cast_${s}_${d} elementwise.comp K_CAST SDT=${vk_code_${s}} DDT=${vk_code_${d}} ${f})
  endforeach()
endforeach()

# Other families add their variants here (reduce.comp, softmax.comp, matmul.comp, conv.comp).
file(GLOB vk_family_variant_files ${CMAKE_CURRENT_LIST_DIR}/variants_*.cmake)
foreach(f ${vk_family_variant_files})
  include(${f})
endforeach()

# probe.comp: device capabilities measured at open (vk_probe.c); probe_fma32 without double
vk_variant(probe_fma probe.comp)
vk_variant(probe_fma32 probe.comp PROBE_F32)
