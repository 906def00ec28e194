# reduce.comp (host: reduce.c): one forward pass and the final combination of partials for every
# dtype; the backward kernels for the floating dtypes.
foreach(dt ${vk_all})
  vk_variant_math(red_pass_${dt} reduce.comp ${dt} K_PASS DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant_math(red_final_${dt} reduce.comp ${dt} K_FINAL DT=${vk_code_${dt}} ${vk_flags_${dt}})
endforeach()
foreach(dt ${vk_floats})
  vk_variant_math(red_bwd_sum_${dt} reduce.comp ${dt} K_BWD_SUM DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant_math(red_bwd_ext_${dt} reduce.comp ${dt} K_BWD_EXT DT=${vk_code_${dt}} ${vk_flags_${dt}})
endforeach()
