# pool.comp (host: pool.c): max/avg pooling forward and backward, for the floating dtypes
foreach(dt ${vk_floats})
  foreach(k pool_fwd pool_bwd)
    string(TOUPPER ${k} K)
    vk_variant_math(${k}_${dt} pool.comp ${dt} K_${K} DT=${vk_code_${dt}} ${vk_flags_${dt}})
  endforeach()
endforeach()
