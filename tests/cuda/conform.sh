#!/bin/sh
# parity-conform on the CUDA plugin where a CUDA device is available; skipped (77) elsewhere.
set -u
INFO=$1
CONFORM=$2
shift 2
if ! "$INFO" --json 2>/dev/null | grep -q '"name":"cuda","backend":"cuda","path":"[^"]*","state":"loaded"'; then
  echo "no usable CUDA device here: skipped"
  "$INFO" 2>&1 | grep -A1 '^  cuda '
  exit 77
fi
exec "$CONFORM" --backend cuda "$@"
