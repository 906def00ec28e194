#!/bin/sh
# The plugin author's and application developer's path, end to end, from this build:
# install to a fresh prefix; the installed tools run with no environment and find the installed
# plugins; the template plugin (examples/plugin-template) builds out of tree against the prefix
# with find_package(parity) and with pkg-config, loads through PARITY_PLUGIN_PATH, and the
# installed parity-conform passes on it, as it does on the GPU-style template on the host kit
# (examples/plugin-template-gpu: its elementwise family); docs/library.md's program and examples/mlp build against the
# prefix and run on cpu, opencl and vulkan with nothing on stderr. Any failed step exits non-zero
# (a crash too).
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
# the verdict names only the ops the template ran (max and min have refusal cases, which it passes
# without computing anything: not coverage)
grep -q "verdict template: PASS on [0-9]* of [0-9,]* cases ([0-9.]* %): add, sub, mul, cast, sum in f32;" "$T/conform-cm.txt" ||
  { grep verdict "$T/conform-cm.txt"; echo "the verdict lists ops the template does not run"; exit 1; }
# the template has no sqrt or div: parity-conform says the core cannot run Adam on it
grep -q "core needs (f32) not met by template.*sqrt: Adam; div: Adam" "$T/conform-cm.txt" ||
  { echo "the core-needs line is missing or wrong"; tail -3 "$T/conform-cm.txt"; exit 1; }

echo "== GPU-style template plugin (examples/plugin-template-gpu, on the host kit) with find_package(parity)"
cmake -S "$SRC/examples/plugin-template-gpu" -B "$T/gpu" -DCMAKE_PREFIX_PATH="$P" > "$T/gpu.log"
cmake --build "$T/gpu" > "$T/gpu-build.log" || { cat "$T/gpu-build.log"; exit 1; }
clean_env PARITY_PLUGIN_PATH="$T/gpu" "$P/bin/parity-conform" --backend template-gpu > "$T/conform-gpu.txt" ||
  { tail -20 "$T/conform-gpu.txt"; exit 1; }
grep -q "verdict template-gpu: PASS on [0-9]* of [0-9,]* cases ([0-9.]* %): add, sub, mul, cast in f32;" "$T/conform-gpu.txt" ||
  { grep verdict "$T/conform-gpu.txt"; echo "the GPU-style template does not pass its family"; exit 1; }
grep "verdict" "$T/conform-gpu.txt"

echo "== template plugin with pkg-config"
mkdir -p "$T/pc"
flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs parity-plugin)
# shellcheck disable=SC2086
cc -std=c11 -O2 -fPIC -shared -Wl,--no-undefined -o "$T/pc/parity-plugin-template.so" \
  "$SRC/examples/plugin-template/template_plugin.c" $flags -lm
clean_env PARITY_PLUGIN_PATH="$T/pc" "$P/bin/parity-conform" --backend template > "$T/conform-pc.txt" ||
  { tail -20 "$T/conform-pc.txt"; exit 1; }
grep -q "verdict template: PASS on" "$T/conform-pc.txt"
grep "verdict" "$T/conform-pc.txt"

echo "== the template README's walkthrough: exp added by its diff, then parity-conform --op exp"
mkdir -p "$T/walk"
cp "$SRC/examples/plugin-template/template_plugin.c" "$T/walk/"
awk '/^```diff$/{f=1; next} /^```$/{f=0} f' "$SRC/examples/plugin-template/README.md" > "$T/walk/exp.diff"
(cd "$T/walk" && patch -p1 < exp.diff > patch.log) || { cat "$T/walk/patch.log"; echo "the README's diff no longer applies"; exit 1; }
# shellcheck disable=SC2086
cc -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror -Wl,--no-undefined -o "$T/walk/parity-plugin-template.so" \
  "$T/walk/template_plugin.c" $flags -lm
clean_env PARITY_PLUGIN_PATH="$T/walk" "$P/bin/parity-conform" --backend template --op exp > "$T/conform-exp.txt" ||
  { tail -20 "$T/conform-exp.txt"; exit 1; }
grep -q "verdict template: PASS on .*: exp in f32" "$T/conform-exp.txt" || { tail -5 "$T/conform-exp.txt"; exit 1; }
grep "verdict" "$T/conform-exp.txt"

# The application developer's path: docs/library.md's code blocks (one program, in order) built with
# pkg-config, and examples/mlp built with find_package(parity); each run on every backend the
# installed parity-info lists as loaded, with nothing on stderr. HOME is kept (PoCL's and parity's
# kernel caches); the rest of the environment is not.
echo "== docs/library.md, compiled and run"
awk '/^```c$/{f=1; next} /^```$/{f=0} f' "$SRC/docs/library.md" > "$T/guide.c"
test "$(grep -c '^int main' "$T/guide.c")" = 1 || { echo "docs/library.md: the C blocks do not form one program"; exit 1; }
pcdir="$P/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -O1 -o "$T/guide" "$T/guide.c" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs parity) \
  -lm -Wl,-rpath,"$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir parity)"
echo "== examples/mlp with find_package(parity)"
cmake -S "$SRC/examples/mlp" -B "$T/mlp" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="-Werror" > "$T/mlp.log"
cmake --build "$T/mlp" > "$T/mlp-build.log" || { cat "$T/mlp-build.log"; exit 1; }
app_env() { env -i PATH=/usr/bin:/bin HOME="${HOME:-$T}" "$@"; }
ran=""
for b in cpu opencl vulkan; do
  grep -Eq "^ *$b .*loaded" "$T/info.txt" || { echo "-- $b: not loaded here, skipped"; continue; }
  for prog in guide mlp/parity-mlp; do
    name=$(basename "$prog")
    if ! (cd "$T" && app_env PARITY_BACKEND=$b "$T/$prog" "$T/$name-$b.safetensors" > "$T/$name-$b.out" 2> "$T/$name-$b.err"); then
      echo "$name on $b failed:"; cat "$T/$name-$b.out" "$T/$name-$b.err"; exit 1
    fi
    if [ -s "$T/$name-$b.err" ]; then echo "$name on $b wrote to stderr:"; cat "$T/$name-$b.err"; exit 1; fi
    tail -1 "$T/$name-$b.out" | sed "s/^/-- $b $name: /"
  done
  ran="$ran $b"
done
case "$ran" in *cpu*) ;; *) echo "the example never ran on cpu"; exit 1 ;; esac
echo "install kit: ok (applications ran on:$ran)"
