# matmul.comp: K_MM (one output per invocation), K_MM_BLK (4 x 4 outputs per invocation) and
# K_MM_TILE (16 x 16 shared-memory tiles)
foreach(dt ${vk_floats})
  vk_variant_math(mm_${dt} matmul.comp ${dt} K_MM DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant_math(mm_blk_${dt} matmul.comp ${dt} K_MM_BLK DT=${vk_code_${dt}} ${vk_flags_${dt}})
  vk_variant_math(mm_tile_${dt} matmul.comp ${dt} K_MM_TILE DT=${vk_code_${dt}} ${vk_flags_${dt}})
endforeach()
