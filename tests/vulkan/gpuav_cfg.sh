#!/bin/sh
# gpuav_cfg.sh SPIRV_OPT SPIRV_VAL SPV_DIR — every SPIR-V module of the Vulkan plugin still has a
# structured control flow once GPU-assisted validation has instrumented it.
#
# The validation layer's GPU-assisted mode (PARITY_VULKAN_VALIDATION=gpu) passes each module
# through SPIRV-Tools' bounds-check instrumentation (spirv-opt --inst-bindless-check
# --inst-buff-oob-check) before the driver sees it. That pass splits the block of every buffer
# load; where the load sits in a loop header (a loop bound read from the parameter buffer:
# `for (...; i < p.n; ...)`), the loop's back edge then ends on a block that is no header, and Mesa
# refuses the pipeline ("Invalid back or cross-edge in the CFG"): the kernel cannot run under the
# layer at all. The shaders read their loop bounds before the loops (FOR_ITEMS, common.glsl); this
# finds a module that does not, without running the layer. Only the control-flow errors count:
# the instrumentation's other defects (8- and 16-bit constants, argument types) are its own, and
# the drivers accept them. spirv-val stops at the first error, so the modules with 8- or 16-bit
# storage (f16, bf16, bool; 237 of 442 on 2026-12-07) are validated only up to that defect: their
# loops are the same source as the f32, f64 and integer modules', which are validated whole.
# Exit status: 0 every module passed, 1 a module's instrumented CFG is invalid, 2 could not run.
set -u
opt=$1 val=$2 dir=$3
for t in "$opt" "$val"; do
  command -v "$t" > /dev/null 2>&1 ||
    { echo "gpuav_cfg: '$t' not found: install SPIRV-Tools (Debian: apt install spirv-tools; tools/install-deps.sh does)"; exit 2; }
done
[ -d "$dir" ] || { echo "gpuav_cfg: no folder $dir"; exit 2; }
ls "$dir"/*.spv > /dev/null 2>&1 || { echo "gpuav_cfg: no SPIR-V modules in $dir"; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
# one module: "BAD name: error" on a CFG error, "ERR name: ..." when the instrumentation fails
check_one='f=$1; k=$(basename "$f" .comp.spv); o="$GPUAV_TMP/$k.spv"
  if ! "$GPUAV_OPT" --target-env=vulkan1.2 --inst-bindless-check --inst-buff-oob-check "$f" -o "$o" 2> "$o.err"; then
    echo "ERR $k: spirv-opt: $(head -n 1 "$o.err")"; exit 0; fi
  v=$("$GPUAV_VAL" --target-env vulkan1.2 "$o" 2>&1)
  e=$(echo "$v" | grep -E "Back-edges|back or cross-edge|loop header|merge block|structured" | head -n 1)
  if [ -n "$e" ]; then echo "BAD $k: $e"; elif [ -n "$v" ]; then echo "PART $k"; fi
  rm -f "$o" "$o.err"'
n=$(ls "$dir"/*.spv | wc -l)
export GPUAV_OPT="$opt" GPUAV_VAL="$val" GPUAV_TMP="$tmp"
ls "$dir"/*.spv | xargs -P 2 -n 1 sh -c "$check_one" sh > "$tmp/report" 2>&1 ||
  { echo "gpuav_cfg: the check itself failed"; cat "$tmp/report"; exit 2; }
sed -i 's/^/  /' "$tmp/report"
if grep -q 'ERR ' "$tmp/report"; then
  echo "gpuav_cfg: spirv-opt could not instrument some modules (is it SPIRV-Tools with the instrumentation passes?)"
  cat "$tmp/report"
  exit 2
fi
bad=$(grep -c 'BAD ' "$tmp/report")
if [ "$bad" -gt 0 ]; then
  echo "gpuav_cfg: $bad of $n modules have an invalid control flow once instrumented for GPU-assisted validation"
  echo "(a buffer load in a loop condition: read the bound into a local before the loop, as FOR_ITEMS does):"
  cat "$tmp/report"
  exit 1
fi
part=$(grep -c 'PART ' "$tmp/report")
echo "gpuav_cfg: all $n modules keep a structured control flow under GPU-assisted instrumentation"
echo "($part of them validated only up to an error of the instrumentation's own, before the control-flow checks)"
