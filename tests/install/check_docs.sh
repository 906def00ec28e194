#!/bin/sh
# README and docs describe what exists: every plugins/<name> folder they name must exist.
set -eu
SRC=$1
status=0
# top-level plugins/<name> only (not tests/plugins/..., not build/lib/parity-plugin-...)
for name in $(grep -ohE '(^|[^/[:alnum:]_.-])plugins/[a-z0-9_]+' "$SRC/README.md" "$SRC"/docs/*.md |
              sed 's|.*plugins/||' | sort -u); do
  [ -n "$name" ] || continue
  if [ ! -d "$SRC/plugins/$name" ]; then
    echo "README/docs name plugins/$name, which does not exist"
    status=1
  fi
done
[ $status = 0 ] && echo "docs name only plugin folders that exist"
exit $status
