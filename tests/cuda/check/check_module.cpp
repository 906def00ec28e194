/* check_module.cpp — one kernel family in one compute class for the checking executor: the
 * emulated module (../emu/emu_module.cpp, from plugins/kernels/cuda_module.cu) with check_shim.h's
 * shared arrays and kernel table. Built with -DEMU_FAM, -DCU_CLASS and -fsanitize=thread. */
#include "emu_shim.h"
#include "check_shim.h"
#include "emu_module.cpp"
