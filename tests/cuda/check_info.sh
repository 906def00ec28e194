#!/bin/sh
# parity-info on a machine without an NVIDIA driver lists the CUDA plugin as unavailable, with the
# reason, even with the toolkit's stub libcuda.so on LD_LIBRARY_PATH, and even when started in a
# folder that holds a libcuda.so.1 (the fake driver of the tests): no library or plugin of ours may
# search the current folder (an empty RUNPATH entry would). Exit 77 (skipped) where a driver is
# installed (cuda loads).
set -u
INFO=$1
STUBS=$2
FAKE=${3:-}
if [ -n "$FAKE" ]; then
  here=$(mktemp -d)
  trap 'rm -rf "$here"' EXIT
  cp "$FAKE" "$here/libcuda.so.1"
  cd "$here"
fi
out=$(LD_LIBRARY_PATH="$STUBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PARITY_BACKEND=cpu "$INFO" 2>&1)
echo "$out"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  echo "an NVIDIA driver is installed here: skipped"
  exit 77
fi
echo "$out" | grep -Eq '^  cuda +unavailable ' || { echo "FAIL: cuda is not listed as unavailable"; exit 1; }
echo "$out" | grep -Fq 'unavailable: cuda: no NVIDIA driver (libcuda.so.1 not found)' ||
  { echo "FAIL: the reason is missing"; exit 1; }
json=$(LD_LIBRARY_PATH="$STUBS" PARITY_BACKEND=cpu "$INFO" --json 2>&1)
echo "$json" | grep -Eq '"name":"cuda","backend":"cuda","path":"[^"]*","state":"unavailable","abi":"1\.[0-9]+","reason":"[^"]*no NVIDIA driver \(libcuda.so.1 not found\)' ||
  { echo "FAIL: --json does not list cuda as unavailable with the reason"; echo "$json"; exit 1; }
echo "parity-info lists cuda as unavailable with the reason"
