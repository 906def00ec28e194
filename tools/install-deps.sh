#!/bin/sh
# Install the Debian packages parity needs, if any are missing. Fast when nothing is missing.
# As root: installs with apt-get. Otherwise: prints the exact apt-get line and exits 1.
#   sh tools/install-deps.sh         what the build and the tests need (make test, CI)
#   sh tools/install-deps.sh bench   only the optional references of parity-bench (make bench):
#                                    PyTorch and OpenBLAS; never installed by make test or CI
set -u
PACKAGES="build-essential cmake pkg-config libcriterion-dev ocl-icd-opencl-dev opencl-c-headers \
pocl-opencl-icd clinfo libvulkan-dev mesa-vulkan-drivers glslc vulkan-validationlayers spirv-tools \
libopenmpi-dev openmpi-bin iproute2 clang libclang-rt-14-dev clang-format-14 zlib1g-dev \
dataset-fashion-mnist"
# parity-bench's references: torch through /usr/bin/python3, libopenblas.so.0 through dlopen
BENCH_PACKAGES="python3-torch libopenblas0"
case "${1:-}" in
  "") ;;
  bench) PACKAGES=$BENCH_PACKAGES ;;
  *) echo "usage: sh tools/install-deps.sh [bench]" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian system; make sure these (or equivalents) are installed: $PACKAGES" >&2
  exit 0
fi
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing packages:$missing" >&2
  echo "install-deps: run as root: apt-get update && $line" >&2
  exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q && $line
