# softmax.comp (host: softmax.c): softmax and log_softmax (OP), forward and backward, for the
# floating dtypes.
foreach(dt ${vk_floats})
  vk_variant_math(smx_fwd_${dt} softmax.comp ${dt} K_FWD DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant_math(smx_bwd_${dt} softmax.comp ${dt} K_BWD DT=${vk_code_${dt}} ${vk_flags_${dt}})
endforeach()
