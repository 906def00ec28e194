# ocl_src.cmake — the build's copy of plugins/kernels for the OpenCL checking executor (README.md
# here), with the two OpenCL C forms that C++ reads otherwise rewritten, line for line (so reports
# name the original files and lines):
#   (float4)(a, b, c, d), (SX4)(x)  ->  chk_vlit<float4>(a, b, c, d), chk_vlit<SX4>(x)
#     for the OpenCL vector types and every typedef of one in these files (C++ would take the
#     parentheses as a comma expression: one value for all components, silently);
#   (local T *v, ...)  ->  (T *v, ...): `local` in a parameter list (ocl_shim.h's `local` declares
#     a static array in the checked section, which a parameter cannot be);
#   KERNEL_WG(x, y) name(  ->  OCL_KERNEL_WG(name, x, y) name(  at the start of a line (the name may
#     be on the next): the kernel's reqd_work_group_size, for the kernel table (ocl_shim.h).
# Run at build time: cmake -DSRC=<plugins/kernels> -DOUT=<dir> -P ocl_src.cmake
file(GLOB files "${SRC}/*.h")
set(vtypes "")
foreach(base char uchar short ushort int uint long ulong float double)
  foreach(n 2 3 4 8 16)
    list(APPEND vtypes "${base}${n}")
  endforeach()
endforeach()
# typedefs of vector types (typedef float4 SX4;), read from every file first
foreach(f IN LISTS files)
  file(READ "${f}" text)
  string(REPLACE ";" "@" text "${text}") # a list separator otherwise
  string(REGEX MATCHALL "typedef[ \t]+[a-z]+(2|3|4|8|16)[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*@" defs "${text}")
  foreach(d IN LISTS defs)
    string(REGEX REPLACE "typedef[ \t]+[a-z]+(2|3|4|8|16)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*@" "\\2" alias "${d}")
    list(APPEND vtypes "${alias}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES vtypes)
string(REPLACE ";" "|" alt "${vtypes}")
file(MAKE_DIRECTORY "${OUT}")
foreach(f IN LISTS files)
  file(READ "${f}" text)
  string(REGEX REPLACE "\\((${alt})\\)\\(" "chk_vlit<\\1>(" text "${text}")
  string(REGEX REPLACE "([(,][ \t]*)local[ \t]+" "\\1" text "${text}")
  string(REGEX REPLACE "(\n)KERNEL_WG\\(([^()\n]*)\\)([ \t\n]*)([A-Za-z_][A-Za-z0-9_]*)\\(" "\\1OCL_KERNEL_WG(\\4, \\2)\\3\\4("
                       text "${text}")
  get_filename_component(name "${f}" NAME)
  file(WRITE "${OUT}/${name}.tmp" "${text}")
  file(COPY_FILE "${OUT}/${name}.tmp" "${OUT}/${name}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUT}/${name}.tmp")
endforeach()
file(TOUCH "${OUT}/.stamp")
