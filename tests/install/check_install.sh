#!/bin/sh
# The plugin author's and application developer's path, end to end, from this build:
# install to a fresh prefix; the installed tools run with no environment and find the installed
# plugins; the template plugin (examples/plugin-template) builds out of tree against the prefix
# with find_package(parity) and with pkg-config, loads through PARITY_PLUGIN_PATH, and the
# installed parity-conform passes on it. Any failed step exits non-zero (a crash too).
set -eu
BUILD=$1 SRC=$2
T=$(mktemp -d /tmp/parity-install-XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
clean_env() { env -i PATH=/usr/bin:/bin HOME="$T" "$@"; }

echo "== install to $P"
cmake --install "$BUILD" --prefix "$P" > "$T/install.log"
for f in bin/parity-info bin/parity-conform include/parity/parity.h include/parity/safetensors.h include/parity_plugin.h \
         include/parity_support/contract.h lib/libparity_support.a lib/pkgconfig/parity.pc \
         lib/pkgconfig/parity-plugin.pc lib/cmake/parity/parityConfig.cmake lib/parity/parity-plugin-cpu.so; do
  test -e "$P/$f" || { echo "missing after install: $f"; exit 1; }
done

echo "== installed parity-info, no environment"
clean_env "$P/bin/parity-info" > "$T/info.txt"
grep -q "cpu .*loaded .*$P/lib/parity/parity-plugin-cpu.so" "$T/info.txt" || { cat "$T/info.txt"; exit 1; }
if grep -q "$BUILD" "$T/info.txt"; then echo "the installed library searched the build tree"; cat "$T/info.txt"; exit 1; fi

echo "== template plugin with find_package(parity)"
cmake -S "$SRC/examples/plugin-template" -B "$T/cm" -DCMAKE_PREFIX_PATH="$P" > "$T/cm.log"
cmake --build "$T/cm" > "$T/cm-build.log"
clean_env PARITY_PLUGIN_PATH="$T/cm" "$P/bin/parity-conform" --backend template > "$T/conform-cm.txt" ||
  { tail -20 "$T/conform-cm.txt"; exit 1; }
grep -q "verdict template: PASS on" "$T/conform-cm.txt" || { tail -5 "$T/conform-cm.txt"; exit 1; }
# the template has no sqrt or div: parity-conform says the core cannot run Adam on it
grep -q "core needs (f32) not met by template.*sqrt: Adam; div: Adam" "$T/conform-cm.txt" ||
  { echo "the core-needs line is missing or wrong"; tail -3 "$T/conform-cm.txt"; exit 1; }

echo "== template plugin with pkg-config"
mkdir -p "$T/pc"
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs parity-plugin)
# shellcheck disable=SC2086
cc -std=c11 -O2 -fPIC -shared -Wl,--no-undefined -o "$T/pc/parity-plugin-template.so" \
  "$SRC/examples/plugin-template/template_plugin.c" $flags
clean_env PARITY_PLUGIN_PATH="$T/pc" "$P/bin/parity-conform" --backend template > "$T/conform-pc.txt" ||
  { tail -20 "$T/conform-pc.txt"; exit 1; }
grep -q "verdict template: PASS on" "$T/conform-pc.txt"
grep "verdict" "$T/conform-pc.txt"
echo "install kit: ok"
