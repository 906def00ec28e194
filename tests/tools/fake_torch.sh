#!/bin/sh
# fake_torch.sh — stands in for `python3 torch_ref.py` in test_bench (PARITY_BENCH_PYTHON): it
# answers parity-bench's handshake with the CPUs this process may run on (inherited from the
# bench's pin, read from /proc) and every request with one millisecond, in torch_ref.py's
# protocol (a prepare or release reads the extra key as harmless). With FAKE_TORCH_LOG set, each
# request line is appended to that file.
read -r cfg
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | sed 's/-/,/')
echo "{\"available\": true, \"torch\": \"fake\", \"threads\": 1, \"cpus\": \"$cpus\"}"
while read -r line; do
  [ -n "$FAKE_TORCH_LOG" ] && echo "$line" >> "$FAKE_TORCH_LOG"
  id=$(echo "$line" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
  echo "{\"id\": $id, \"seconds\": 0.001}"
done
