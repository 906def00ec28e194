/* check_pads.c — pads at the two ends of the section emu_shared (linked first and last, with
 * -DCHK_PAD_TAIL for the last): an access before the first or past the last shared array lands
 * in one of them, inside the section, and is reported out of bounds. */
#ifdef CHK_PAD_TAIL
__attribute__((section("emu_shared"), used)) char emu_shared_pad_tail[256];
#else
__attribute__((section("emu_shared"), used)) char emu_shared_pad_head[256];
#endif
