/* lsan_keep_drivers.c — preloaded into the leak-checked tests of tools/ci-extra.sh's ASan job:
 * dlclose() leaves Vulkan drivers (libvulkan_*.so, which the Vulkan loader opens and closes) mapped.
 * Mesa's lavapipe keeps memory from one-time initialisation (pthread_once inside
 * vkEnumeratePhysicalDevices) in its globals; once the loader unloads it, LeakSanitizer sees that
 * memory as a leak from "<unknown module>", which no suppression can name. Kept mapped, the memory
 * stays reachable and any real leak inside the driver still names libvulkan_lvp.so (tools/lsan.supp).
 * parity's own plugins are unloaded as usual, so their leaks are still reported. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
int dlclose(void *handle) {
  static int (*real)(void *);
  if (!real) real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  struct link_map *lm = NULL;
  if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && strstr(lm->l_name, "/libvulkan_"))
    return 0;
  return real(handle);
}
