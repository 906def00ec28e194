#!/bin/sh
# check-format.sh — the tree follows .clang-format: every tracked C, C++ and CUDA source (the
# kernels' .k.h included) is what clang-format 14 (Debian 12's; other majors format differently)
# would write. Lists the files that differ and exits 1; `sh tools/check-format.sh --fix` rewrites
# them. Run by .ci/run.
set -eu
cd "$(dirname "$0")/.."
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" > /dev/null 2>&1 && "$c" --version | grep -q "version 14\."; then cf=$c; break; fi
done
if [ -z "$cf" ]; then
  echo "check-format: needs clang-format 14 (Debian 12: clang-format-14, installed by tools/install-deps.sh)" >&2
  exit 2
fi
files=$(git ls-files '*.c' '*.h' '*.cpp' '*.cu')
if [ "${1:-}" = --fix ]; then
  # shellcheck disable=SC2086
  "$cf" -i $files
  exit 0
fi
bad=0
for f in $files; do
  if ! "$cf" --dry-run --Werror "$f" > /dev/null 2>&1; then echo "check-format: $f differs from .clang-format"; bad=1; fi
done
[ "$bad" = 0 ] && echo "check-format: $(echo "$files" | wc -l) files follow .clang-format"
exit "$bad"
