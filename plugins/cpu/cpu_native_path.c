/* cpu_native_path.c — run by CMake at configure time (try_run) for -DPARITY_CPU_PATHS=native:
 * prints the best kernel path this machine's CPU runs, by the rule the plugin uses
 * (cpu_features.h). Compiled with -DPARITY_CPU_X86_ISAS=0|1 as the plugin is. */
#include <stdio.h>

#include "cpu_features.h"

int main(void) {
  unsigned f = cpu_features_detect();
  int best = CPU_ISA_PORTABLE;
  for (int i = CPU_ISA_COUNT - 1; i > CPU_ISA_PORTABLE && best == CPU_ISA_PORTABLE; i--)
    if (!(cpu_isa_needs[i] & ~f)) best = i;
  printf("%s", cpu_isa_names[best]);
  return 0;
}
