/* The GPU host kit (parity_support/gpu_kit.h) on a fake plugin: messages carry the backend prefix
 * once; slots fill, overflow with a warning, and device info is copied by the caller's
 * struct_size; supports() checks alignment, the operand contract, the plugin's shared check and the
 * family's, in that order, and declares a missing family unsupported; an entry refuses the wrong
 * family, enters the device, then runs; buffer entries refuse bad arguments before the plugin's
 * transfer function is called; a prepared plan records its commands through those same entries
 * between the plugin's begin and end, and a failing command discards the recording; an allocation past
 * the device's limit is refused naming the limit; scratch memory is sized and reused by one rule
 * (rounded, or exact under the knob); psup_grow (grow.h) doubles a list or leaves it. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parity_support/gpu_kit.h"
#include "parity_support/grow.h"

/* ---- a fake plugin ------------------------------------------------------------------------------ */
struct parity_plugin_buffer_t {
  uint64_t size;
};
struct parity_plugin_device_t {
  psup_kit_slot_t *slot;
  int entered, enter_status;
  int recording, recorded, fail_at; /* plans: launches and fills recorded; fail the n-th (1-based) */
};
struct parity_plugin_plan_t {
  int commands;
};

static char last_error[600], last_log[600];
static int32_t last_status;
static int ran, family_checked, shared_checked, transfers;
static void on_error(void *data, int32_t status, const char *message) {
  (void)data;
  last_status = status;
  snprintf(last_error, sizeof last_error, "%s", message);
}
static void on_log(void *data, int32_t level, const char *message) {
  (void)data, (void)level;
  snprintf(last_log, sizeof last_log, "%s", message);
}
static const parity_host_api_t host = {.struct_size = sizeof host, .report_error = on_error, .log = on_log};

static int32_t run(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)d;
  ran++;
  cr_expect(dev->entered, "the family ran before the device was entered");
  if (dev->recording && ++dev->recorded == dev->fail_at) return PARITY_STATUS_DEVICE_ERROR;
  return PARITY_STATUS_OK;
}
static int32_t family_supports(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev, (void)d;
  family_checked++;
  return PARITY_STATUS_OK;
}
static int32_t shared_check(parity_plugin_device_t *dev, const parity_op_desc_t *d) {
  (void)dev, (void)d;
  shared_checked++;
  return PARITY_STATUS_OK;
}
static int32_t enter(parity_plugin_device_t *dev) {
  dev->entered = 1;
  return dev->enter_status;
}
static const psup_kit_slot_t *slot_of(const parity_plugin_device_t *dev) { return dev->slot; }
static psup_kit_slot_t slots[2];
static psup_kit_t kit;
static int closed, init_status;
static int32_t device_init(parity_plugin_device_t *dev, uint32_t index) {
  dev->slot = psup_kit_slot_at(&kit, index);
  return init_status;
}
static void device_close(parity_plugin_device_t *dev) {
  closed++;
  free(dev);
}
static uint64_t size_of(const parity_plugin_buffer_t *b) { return b->size; }
static int32_t write_fn(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, const void *src,
                        uint64_t size) {
  (void)dev, (void)b, (void)off, (void)src, (void)size;
  transfers++;
  return PARITY_STATUS_OK;
}
static int32_t read_fn(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, void *dst, uint64_t size) {
  (void)dev, (void)b, (void)off, (void)dst, (void)size;
  transfers++;
  return PARITY_STATUS_OK;
}
static int32_t copy_fn(parity_plugin_device_t *dev, parity_plugin_buffer_t *s, uint64_t so, parity_plugin_buffer_t *t,
                       uint64_t to, uint64_t size) {
  (void)dev, (void)s, (void)so, (void)t, (void)to, (void)size;
  transfers++;
  return PARITY_STATUS_OK;
}
static int32_t fill_fn(parity_plugin_device_t *dev, parity_plugin_buffer_t *b, uint64_t off, uint64_t size,
                       const void *pattern, uint32_t psize) {
  (void)dev, (void)b, (void)off, (void)size, (void)pattern, (void)psize;
  transfers++;
  if (dev->recording && ++dev->recorded == dev->fail_at) return PARITY_STATUS_DEVICE_ERROR;
  return PARITY_STATUS_OK;
}

static int discarded, plan_runs, released;
static int32_t plan_begin(parity_plugin_device_t *dev) {
  dev->recording = 1;
  dev->recorded = 0;
  return PARITY_STATUS_OK;
}
static int32_t plan_end(parity_plugin_device_t *dev, int ok, parity_plugin_plan_t **out) {
  dev->recording = 0;
  if (!ok) {
    discarded++;
    return PARITY_STATUS_OK;
  }
  *out = calloc(1, sizeof **out);
  (*out)->commands = dev->recorded;
  return PARITY_STATUS_OK;
}
static int32_t plan_run(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  cr_expect(dev->entered, "a plan ran before the device was entered");
  plan_runs += p->commands;
  return PARITY_STATUS_OK;
}
static void plan_release(parity_plugin_device_t *dev, parity_plugin_plan_t *p) {
  (void)dev;
  released++;
  free(p);
}

static psup_kit_t kit = {
    .backend = "fake",
    .host = &host,
    .slots = slots,
    .slot_size = sizeof slots[0],
    .max_slots = 2,
    .slot_of = slot_of,
    .device_size = sizeof(struct parity_plugin_device_t),
    .device_init = device_init,
    .device_close = device_close,
    .check = shared_check,
    .enter = enter,
    .family = {[PARITY_FAMILY_ELEMENTWISE] = {run, run, family_supports}},
    .buffers = {size_of, write_fn, read_fn, copy_fn, fill_fn},
};

static void setup(void) {
  ran = family_checked = shared_checked = transfers = closed = init_status = 0;
  last_error[0] = last_log[0] = 0;
  psup_kit_slots_reset(&kit);
  psup_kit_slot_t *s = psup_kit_slot_add(&kit, "one");
  cr_assert_not_null(s);
  snprintf(s->info.name, sizeof s->info.name, "fake device");
  s->info.dtype_mask = PARITY_DTYPE_BIT(PARITY_DTYPE_F32);
  s->info.memory_bytes = 1234;
  psup_kit_slot_ready(&kit, s);
}
TestSuite(gpu_kit, .init = setup);

/* a contiguous f32 [4] tensor in b at byte offset off */
static parity_tensor_desc_t f32_vec(parity_plugin_buffer_t *b, uint64_t off) {
  parity_tensor_desc_t t = {
      .struct_size = sizeof t, .dtype = PARITY_DTYPE_F32, .rank = 1, .buffer = b, .offset_bytes = off};
  t.shape[0] = 4;
  t.strides[0] = 1;
  return t;
}

Test(gpu_kit, messages_carry_the_backend_prefix_once) {
  cr_expect_eq(psup_kit_fail(&kit, PARITY_STATUS_OUT_OF_MEMORY, "cannot allocate %d bytes", 8),
               PARITY_STATUS_OUT_OF_MEMORY);
  cr_expect_str_eq(last_error, "fake: cannot allocate 8 bytes");
  psup_kit_log(&kit, PARITY_LOG_DEBUG, "device %u", 0u);
  cr_expect_str_eq(last_log, "fake: device 0");
  cr_expect_eq(psup_kit_driver_fail(&kit, PARITY_STATUS_OK, "drvCall", NULL, "DRV error", -5, "what"),
               PARITY_STATUS_INTERNAL, "a failed call mapped to OK is INTERNAL");
  cr_expect_str_eq(last_error, "fake: drvCall: unknown DRV error -5 (what)");
  psup_kit_driver_fail(&kit, PARITY_STATUS_DEVICE_ERROR, "drvLaunch", "DRV_LOST", "DRV error", 3, "");
  cr_expect_str_eq(last_error, "fake: drvLaunch: DRV_LOST");
}

Test(gpu_kit, an_allocation_past_the_device_limit_is_refused_naming_the_limit) {
  slots[0].info.max_buffer_bytes = 1024;
  cr_expect_eq(psup_kit_check_alloc(&kit, &slots[0], 1024, "maxAlloc"), PARITY_STATUS_OK);
  cr_expect_eq(psup_kit_check_alloc(&kit, &slots[0], 1025, "maxAlloc"), PARITY_STATUS_OUT_OF_MEMORY);
  cr_expect_str_eq(last_error, "fake: cannot allocate 1025 bytes: larger than maxAlloc (1024 bytes) of fake device");
}

/* the scratch rule every GPU plugin follows: rounded to 64 KiB and reused while large enough, or
 * (PARITY_<BACKEND>_SCRATCH=exact, the checking runs) exactly the request, reused only for the same
 * size; a bad value is refused naming the variable */
Test(gpu_kit, scratch_is_rounded_and_reused_or_exact_as_the_knob_says) {
  const uint64_t big = 1ull << 40;
  cr_expect_eq(psup_kit_scratch_size(PSUP_SCRATCH_ROUNDED, 1, big), 65536u);
  cr_expect_eq(psup_kit_scratch_size(PSUP_SCRATCH_ROUNDED, 65537, big), 131072u);
  cr_expect_eq(psup_kit_scratch_size(PSUP_SCRATCH_ROUNDED, 70000, 100000), 70000u, "rounding past the device limit");
  cr_expect_eq(psup_kit_scratch_size(PSUP_SCRATCH_ROUNDED, UINT64_MAX - 3, UINT64_MAX), UINT64_MAX - 3);
  cr_expect_eq(psup_kit_scratch_size(PSUP_SCRATCH_EXACT, 96, big), 96u);
  cr_expect(psup_kit_scratch_fits(PSUP_SCRATCH_ROUNDED, 65536, 96));
  cr_expect(!psup_kit_scratch_fits(PSUP_SCRATCH_ROUNDED, 65536, 65537));
  cr_expect(!psup_kit_scratch_fits(PSUP_SCRATCH_ROUNDED, 0, 1), "no buffer yet");
  cr_expect(psup_kit_scratch_fits(PSUP_SCRATCH_EXACT, 96, 96));
  cr_expect(!psup_kit_scratch_fits(PSUP_SCRATCH_EXACT, 104, 96), "a larger buffer would hide an overrun");
  cr_expect(!psup_kit_scratch_fits(PSUP_SCRATCH_EXACT, 96, 104));
  char err[200] = "";
  int mode = -1;
  unsetenv("PARITY_FAKE_SCRATCH");
  cr_expect_eq(psup_kit_scratch_mode(&kit, &mode, err, sizeof err), 0);
  cr_expect_eq(mode, PSUP_SCRATCH_ROUNDED);
  setenv("PARITY_FAKE_SCRATCH", "exact", 1);
  cr_expect_eq(psup_kit_scratch_mode(&kit, &mode, err, sizeof err), 0);
  cr_expect_eq(mode, PSUP_SCRATCH_EXACT);
  setenv("PARITY_FAKE_SCRATCH", "tight", 1);
  cr_expect_eq(psup_kit_scratch_mode(&kit, &mode, err, sizeof err), -1);
  cr_expect(strstr(err, "PARITY_FAKE_SCRATCH='tight' is not one of rounded, exact"), "%s", err);
  unsetenv("PARITY_FAKE_SCRATCH");
}

Test(gpu_kit, grow_makes_room_doubling_and_keeps_the_array_when_it_cannot) {
  int *a = NULL;
  uint32_t cap = 0, n = 0;
  for (int i = 0; i < 100; i++) {
    cr_assert(psup_grow(&a, &cap, n, sizeof *a, 4));
    a[n++] = i;
  }
  cr_expect_eq(cap, 128, "4 doubled to hold 100: %u", cap);
  for (int i = 0; i < 100; i++) cr_assert_eq(a[i], i);
  /* a full array whose next size cannot be allocated: refused, array and capacity unchanged */
  int *before = a;
  uint32_t huge = 0x80000001u;
  cr_expect_eq(psup_grow(&a, &huge, huge, sizeof *a, 4), 0);
  cr_expect_eq(huge, 0x80000001u);
  cap = 0x40000000u;
  cr_expect_eq(psup_grow(&a, &cap, cap, (size_t)1 << 62, 4), 0, "the byte size overflows");
  cr_expect_eq(a, before);
  cr_expect_eq(cap, 0x40000000u);
  cr_expect_eq(psup_grow(&a, &cap, 7, sizeof *a, 4), 1, "room already there");
  free(a);
}

Test(gpu_kit, slots_fill_overflow_with_a_warning_and_info_is_copied_by_struct_size) {
  cr_assert_not_null(psup_kit_slot_add(&kit, "two"));
  cr_expect_null(psup_kit_slot_add(&kit, "three"));
  cr_expect(strstr(last_log, "fake: more than 2 devices; ignoring 'three'") != NULL, "%s", last_log);
  uint32_t n = 0;
  psup_kit_device_count(&kit, &n);
  cr_expect_eq(n, 2);
  cr_expect_eq(psup_kit_device_info(&kit, 2, &(parity_device_info_t){.struct_size = sizeof(parity_device_info_t)}),
               PARITY_STATUS_OUT_OF_RANGE);
  cr_expect_str_eq(last_error, "fake: device 2 does not exist (2 devices)");
  /* an older caller's smaller record: nothing written past its struct_size */
  unsigned char buf[sizeof(parity_device_info_t)];
  memset(buf, 0xAB, sizeof buf);
  parity_device_info_t *out = (parity_device_info_t *)buf;
  uint32_t small = (uint32_t)offsetof(parity_device_info_t, memory_bytes);
  out->struct_size = small;
  cr_assert_eq(psup_kit_device_info(&kit, 0, out), PARITY_STATUS_OK);
  cr_expect_eq(out->struct_size, small);
  cr_expect_str_eq(out->name, "fake device");
  for (size_t i = small; i < sizeof buf; i++) cr_assert_eq(buf[i], 0xAB, "byte %zu past struct_size written", i);
  cr_expect_str_eq(slots[0].caps.backend, "fake");
  cr_expect_eq(slots[0].caps.dtype_mask, PARITY_DTYPE_BIT(PARITY_DTYPE_F32));
}

Test(gpu_kit, supports_checks_alignment_contract_shared_then_family) {
  parity_plugin_buffer_t b = {64};
  parity_plugin_device_t dev = {.slot = &slots[0]};
  parity_tensor_desc_t x = f32_vec(&b, 0), y = f32_vec(&b, 16), odd = f32_vec(&b, 2);
  parity_op_desc_t d = {.struct_size = sizeof d,
                        .op = PARITY_OP_RELU,
                        .direction = PARITY_DIRECTION_FORWARD,
                        .num_inputs = 1,
                        .num_outputs = 1,
                        .inputs = {&x},
                        .outputs = {&y}};
  cr_expect_eq(psup_kit_supports(&kit, &dev, &d), PARITY_STATUS_OK, "%s", last_error);
  cr_expect_eq(shared_checked, 1);
  cr_expect_eq(family_checked, 1);
  d.inputs[0] = &odd;
  cr_expect_eq(psup_kit_supports(&kit, &dev, &d), PARITY_STATUS_UNSUPPORTED);
  cr_expect_str_eq(last_error, "fake: relu: input 0 starts at byte offset 2, not a multiple of its 4-byte element");
  parity_tensor_desc_t xf64 = x;
  xf64.dtype = PARITY_DTYPE_F64;
  parity_tensor_desc_t yf64 = y;
  yf64.dtype = PARITY_DTYPE_F64;
  d.inputs[0] = &xf64;
  d.outputs[0] = &yf64;
  cr_expect_eq(psup_kit_supports(&kit, &dev, &d), PARITY_STATUS_UNSUPPORTED, "a dtype the device lacks");
  cr_expect(strncmp(last_error, "fake: ", 6) == 0 && strstr(last_error, "fake: fake") == NULL, "%s", last_error);
  cr_expect_eq(family_checked, 1, "the family was asked after the contract refused");
  /* a family the plugin does not implement */
  parity_op_desc_t s = {.struct_size = sizeof s,
                        .op = PARITY_OP_SUM,
                        .direction = PARITY_DIRECTION_FORWARD,
                        .num_inputs = 1,
                        .num_outputs = 1,
                        .inputs = {&x},
                        .outputs = {&y}};
  cr_expect_eq(psup_kit_supports(&kit, &dev, &s), PARITY_STATUS_UNSUPPORTED);
  cr_expect(strstr(last_error, "fake: sum: the reduce family is not implemented") != NULL, "%s", last_error);
}

Test(gpu_kit, an_entry_checks_its_family_enters_the_device_then_runs) {
  parity_plugin_buffer_t b = {64};
  parity_plugin_device_t dev = {.slot = &slots[0]};
  parity_tensor_desc_t x = f32_vec(&b, 0), y = f32_vec(&b, 16);
  parity_op_desc_t d = {.struct_size = sizeof d,
                        .op = PARITY_OP_RELU,
                        .direction = PARITY_DIRECTION_FORWARD,
                        .num_inputs = 1,
                        .num_outputs = 1,
                        .inputs = {&x},
                        .outputs = {&y}};
  cr_expect_eq(psup_kit_launch(&kit, &dev, &d, PARITY_FAMILY_REDUCE, PARITY_DIRECTION_FORWARD),
               PARITY_STATUS_INVALID_ARGUMENT, "relu through the reduce entry");
  cr_expect(strncmp(last_error, "fake: ", 6) == 0, "%s", last_error);
  cr_expect_eq(ran, 0);
  cr_expect_eq(psup_kit_launch(&kit, &dev, &d, PARITY_FAMILY_ELEMENTWISE, PARITY_DIRECTION_FORWARD), PARITY_STATUS_OK,
               "%s", last_error);
  cr_expect_eq(ran, 1);
  dev.entered = 0;
  dev.enter_status = PARITY_STATUS_DEVICE_ERROR; /* a poisoned context */
  cr_expect_eq(psup_kit_launch(&kit, &dev, &d, PARITY_FAMILY_ELEMENTWISE, PARITY_DIRECTION_FORWARD),
               PARITY_STATUS_DEVICE_ERROR);
  cr_expect_eq(ran, 1, "the family ran on a device that could not be entered");
}

Test(gpu_kit, buffer_entries_refuse_bad_arguments_before_the_plugin_sees_them) {
  parity_plugin_buffer_t b = {64}, c = {16};
  parity_plugin_device_t dev = {.slot = &slots[0]};
  char host_mem[64] = {0};
  cr_expect_eq(psup_kit_buffer_write(&kit, &dev, &b, 60, host_mem, 8), PARITY_STATUS_OUT_OF_RANGE);
  cr_expect(strncmp(last_error, "fake: buffer_write", 18) == 0, "%s", last_error);
  cr_expect_eq(psup_kit_buffer_write(&kit, &dev, &b, 0, NULL, 8), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_str_eq(last_error, "fake: buffer_write: source is NULL");
  cr_expect_eq(psup_kit_buffer_read(&kit, &dev, NULL, 0, host_mem, 8), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_eq(psup_kit_buffer_read(&kit, &dev, &b, 0, NULL, 8), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_eq(psup_kit_buffer_copy(&kit, &dev, &b, 0, &c, 8, 16), PARITY_STATUS_OUT_OF_RANGE);
  cr_expect(strstr(last_error, "buffer_copy destination") != NULL, "%s", last_error);
  uint32_t pattern = 7;
  cr_expect_eq(psup_kit_buffer_fill(&kit, &dev, &b, 0, 6, &pattern, 4), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_eq(psup_kit_buffer_fill(&kit, &dev, &b, 0, 8, &pattern, 3), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_eq(transfers, 0, "a transfer function ran with bad arguments");
  cr_expect_eq(psup_kit_buffer_write(&kit, &dev, &b, 56, host_mem, 8), PARITY_STATUS_OK);
  cr_expect_eq(psup_kit_buffer_read(&kit, &dev, &b, 0, host_mem, 64), PARITY_STATUS_OK);
  cr_expect_eq(psup_kit_buffer_copy(&kit, &dev, &b, 0, &c, 0, 16), PARITY_STATUS_OK);
  cr_expect_eq(psup_kit_buffer_fill(&kit, &dev, &b, 4, 8, &pattern, 4), PARITY_STATUS_OK);
  cr_expect_eq(transfers, 4);
  cr_expect(dev.entered, "transfers enter the device");
}

Test(gpu_kit, device_open_checks_the_slot_and_closes_a_device_that_failed_to_open) {
  parity_plugin_device_t *dev = NULL;
  cr_expect_eq(psup_kit_device_open(&kit, 1, &dev), PARITY_STATUS_OUT_OF_RANGE);
  cr_expect_str_eq(last_error, "fake: device 1 does not exist (1 devices)");
  init_status = PARITY_STATUS_UNAVAILABLE;
  cr_expect_eq(psup_kit_device_open(&kit, 0, &dev), PARITY_STATUS_UNAVAILABLE);
  cr_expect_null(dev, "a device that failed to open was handed out");
  cr_expect_eq(closed, 1, "the half-opened device was not closed");
  init_status = PARITY_STATUS_OK;
  cr_assert_eq(psup_kit_device_open(&kit, 0, &dev), PARITY_STATUS_OK);
  cr_expect_eq(dev->slot, &slots[0]);
  cr_expect_eq(dev->entered, 0, "the device was not zeroed");
  device_close(dev);
}

Test(gpu_kit, a_plan_records_its_commands_through_the_entries_and_a_failure_discards_it) {
  parity_plugin_buffer_t b = {64};
  parity_plugin_device_t dev = {.slot = &slots[0]};
  parity_tensor_desc_t x = f32_vec(&b, 0), y = f32_vec(&b, 16);
  parity_op_desc_t relu = {.struct_size = sizeof relu,
                           .op = PARITY_OP_RELU,
                           .direction = PARITY_DIRECTION_FORWARD,
                           .num_inputs = 1,
                           .num_outputs = 1,
                           .inputs = {&x},
                           .outputs = {&y}};
  parity_plan_command_t cmds[3] = {
      {.struct_size = sizeof cmds[0],
       .kind = PARITY_PLAN_COMMAND_FILL,
       .buffer = &b,
       .size_bytes = 16,
       .pattern_size = 4},
      {.struct_size = sizeof cmds[0], .kind = PARITY_PLAN_COMMAND_KERNEL, .op = &relu},
      {.struct_size = sizeof cmds[0], .kind = PARITY_PLAN_COMMAND_KERNEL, .op = &relu},
  };
  parity_plugin_plan_t *plan = (parity_plugin_plan_t *)&b; /* must be cleared */
  cr_expect_eq(psup_kit_plan_prepare(&kit, &dev, cmds, 3, &plan), PARITY_STATUS_UNSUPPORTED, "a kit without plans");
  cr_expect_str_eq(last_error, "fake: plan_prepare: this plugin has no prepared plans");
  psup_kit_t k = kit;
  k.plans = (psup_kit_plans_t){plan_begin, plan_end, plan_run, plan_release};
  discarded = plan_runs = released = 0;
  cr_assert_eq(psup_kit_plan_prepare(&k, &dev, cmds, 3, &plan), PARITY_STATUS_OK, "%s", last_error);
  cr_assert_not_null(plan);
  cr_expect_eq(plan->commands, 3, "the fill and both launches went through the entries");
  cr_expect_eq(ran, 2);
  cr_expect_eq(transfers, 1);
  cr_expect_eq(dev.recording, 0);
  cr_expect_eq(psup_kit_plan_run(&k, &dev, plan), PARITY_STATUS_OK);
  cr_expect_eq(plan_runs, 3);
  psup_kit_plan_release(&k, &dev, plan);
  cr_expect_eq(released, 1);
  /* the second launch fails: the recording is discarded, no plan comes back */
  dev.fail_at = 3;
  plan = NULL;
  cr_expect_eq(psup_kit_plan_prepare(&k, &dev, cmds, 3, &plan), PARITY_STATUS_DEVICE_ERROR);
  cr_expect_null(plan);
  cr_expect_eq(discarded, 1);
  cr_expect_eq(dev.recording, 0, "a failed recording was left open");
  /* a fill out of the buffer and an unknown kind never reach the plugin */
  dev.fail_at = 0;
  cmds[0].size_bytes = 128;
  cr_expect_eq(psup_kit_plan_prepare(&k, &dev, cmds, 3, &plan), PARITY_STATUS_OUT_OF_RANGE);
  cr_expect(strstr(last_error, "fake: buffer_fill") != NULL, "%s", last_error);
  cmds[0].size_bytes = 16;
  cmds[1].kind = 77;
  cr_expect_eq(psup_kit_plan_prepare(&k, &dev, cmds, 3, &plan), PARITY_STATUS_INVALID_ARGUMENT);
  cr_expect_str_eq(last_error, "fake: unknown command kind 77");
  cr_expect_eq(discarded, 3);
  cr_expect_eq(psup_kit_plan_run(&k, &dev, NULL), PARITY_STATUS_INVALID_ARGUMENT);
}
