# conv.comp (host: conv.c): conv2d forward, backward data, backward weight and bias gradient
foreach(dt ${vk_floats})
  foreach(k conv_fwd conv_bwd_data conv_bwd_weight conv_bwd_bias)
    string(TOUPPER ${k} K)
    vk_variant_math(${k}_${dt} conv.comp ${dt} K_${K} DT=${vk_code_${dt}} ${vk_flags_${dt}})
  endforeach()
endforeach()
