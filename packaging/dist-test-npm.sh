#!/usr/bin/env bash
# The npm packages in dist/ (packaging/npm.sh), each installed with npm into an empty directory
# and used as a user would (called by packaging/dist-test.sh; RELEASE is what the CLI says, e.g.
# "0.1.0 (abc1234)"): the repository README's Node example
#   - on this machine (linux-x64-gnu): the native addon, then the same installed package's
#     WebAssembly build in Chromium, whose file the installed CLI (HS) opens;
#   - on arm64 Linux: npm told it is one (--cpu/--os/--libc), then Node for arm64 under
#     qemu-aarch64-static: the cross-compiled addon;
#   - on Windows x64 likewise (--os=win32), with Node for Windows under Wine: the mingw-w64 addon;
#   - on musl Linux and on Windows arm64, for which there is no addon: the WebAssembly fallback
#     (run by this machine's Node and by Node for Windows x64 under Wine).
# Every run checks which backend ran and that VERSION names the release.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=${DIST:-$ROOT/dist}
RELEASE=${1:?usage: packaging/dist-test-npm.sh RELEASE CLI KEY-FILE PUBLIC-KEY}
HS=$2 KEYFILE=$3 PUBKEY=$4
T=$(mktemp -d /tmp/hyperseal-dist-test-npm.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home"
bare() { env -i PATH=/usr/bin:/bin HOME="$T/home" LANG=C.UTF-8 TMPDIR="$T" "$@"; }
now() { date +%s.%N; }
took() { printf '   %s: %.1f s\n' "$1" "$(echo "$(now) - $2" | bc)"; }
one() { local f=("$DIST"/$1); [[ ${#f[@]} -eq 1 && -f ${f[0]} ]] || { echo "dist-test-npm: expected one $1 in dist/ (make dist)" >&2; exit 1; }; echo "${f[0]}"; }

MAIN=$(one 'hyperseal-[0-9]*.tgz')
X64=$(one 'hyperseal-linux-x64-gnu-*.tgz')
ARM64=$(one 'hyperseal-linux-arm64-gnu-*.tgz')
WIN64=$(one 'hyperseal-win32-x64-gnu-*.tgz')
printf '   %s\n' "$(cd "$DIST" && ls -l hyperseal-*.tgz | awk '{printf "%s %d bytes; ", $NF, $5}')"
tar tzf "$MAIN" > "$T/main.list"
if grep '\.node$' "$T/main.list" >&2; then echo "dist-test-npm: the main package carries an addon (above)" >&2; exit 1; fi
for p in "$X64" "$ARM64" "$WIN64"; do
  tar tzf "$p" | grep -q '^package/hyperseal\..*\.node$' || { echo "dist-test-npm: $p has no addon" >&2; exit 1; }
done

# The README's ```js blocks, with the repository path replaced by the installed package.
cat > "$T/readme.cjs" <<'EOF'
const fs = require('node:fs')
const blocks = [...fs.readFileSync(process.argv[2], 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
if (blocks.length === 0) throw new Error('no js block in README.md')
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor
;(async () => {
  for (const code of blocks) {
    await new AsyncFunction('require', code.replaceAll("require('./bindings/node')", "require('hyperseal')"))(require)
  }
  if (!(fs.statSync('in.bin.hs').size > 100000)) throw new Error('the example wrote no in.bin.hs')
  if (!require.resolve('hyperseal').replaceAll('\\', '/').includes('/node_modules/hyperseal/')) throw new Error(require.resolve('hyperseal'))
  const hs = require('hyperseal')
  // Marked: the example's own progress lines may still arrive after this one.
  console.log(`RESULT=${hs.backend} ${process.platform}-${process.arch} ${hs.VERSION}`)
})().catch((e) => { console.error(e); process.exit(1) })
EOF

# install DIR NPM-ARGS… : an empty project that depends on `hyperseal`, installed offline. npm
# resolves the platform packages, as it would from the registry, to the tarballs here (overrides)
# and installs only those whose os/cpu/libc fields match the machine (or what --cpu, --os,
# --libc say it is).
install() {
  local app=$1; shift
  mkdir -p "$app"
  cat > "$app/package.json" <<EOF
{
  "private": true,
  "dependencies": { "hyperseal": "file:$MAIN" },
  "overrides": {
    "hyperseal-linux-x64-gnu": "file:$X64",
    "hyperseal-linux-arm64-gnu": "file:$ARM64",
    "hyperseal-win32-x64-gnu": "file:$WIN64"
  }
}
EOF
  local t1; t1=$(now)
  (cd "$app" && bare npm install --silent --no-audit --no-fund --offline "$@")
  took "npm install $*" "$t1"
  echo "   node_modules: $(ls "$app/node_modules" | tr '\n' ' ')"
  head -c 100000 /dev/urandom > "$app/in.bin"
}
# expect DIR WANT [NODE…]: runs the README example there; WANT is "BACKEND ARCH VERSION".
expect() {
  local app=$1 want=$2; shift 2
  local got
  cp "$T/readme.cjs" "$app/"  # beside node_modules: `require('hyperseal')` resolves from the script
  # Output to a file: Node for Windows under Wine cannot write to a pipe.
  (cd "$app" && bare "$@" readme.cjs "$ROOT/README.md" > "$T/out.log" 2> "$T/err.log") || { cat "$T/err.log" >&2; exit 1; }
  got=$(sed -n 's/^RESULT=//p' "$T/out.log")
  [ "$got" = "$want" ] || { cat "$T/err.log" >&2; echo "dist-test-npm: in $app the example says '$got', expected '$want'" >&2; exit 1; }
  echo "   $got"
}

echo '   linux-x64-gnu: npm install, the README example on the native addon'
t0=$(now)
install "$T/x64"
only() { # DIR PACKAGE: the one platform package npm installed there
  [ "$(cd "$1/node_modules" && ls -d hyperseal-* 2>/dev/null)" = "$2" ] ||
    { echo "dist-test-npm: $1 has $(ls "$1/node_modules"), expected $2 alone" >&2; exit 1; }
}
only "$T/x64" hyperseal-linux-x64-gnu
expect "$T/x64" "native linux-x64 $RELEASE" node
took "linux-x64-gnu" "$t0"

echo '   the same package in Chromium: its WebAssembly build, opened by the installed CLI'
APP=$T/x64
cat > "$APP/page.html" <<'EOF'
<!doctype html>
<meta charset="utf-8">
<script type="module">
  import init, * as hs from "./web/browser/js/index.js"
  window.hyperseal = init().then(() => hs)
</script>
EOF
bare HS="$HS" node "$ROOT/packaging/dist-test-browser.mjs" "$APP" "$KEYFILE" "$PUBKEY"

echo '   linux-x64-musl (no addon for it): the WebAssembly fallback'
t0=$(now)
install "$T/wasm" --libc=musl
only "$T/wasm" ""
# The WebAssembly build names the release only (README.md).
expect "$T/wasm" "wasm linux-x64 ${RELEASE%% *}" node
took "fallback" "$t0"

echo '   linux-arm64-gnu: npm install --cpu=arm64, the README example under qemu-aarch64-static'
t0=$(now)
make --no-print-directory -s -C bindings/node node-linux-arm64 > /dev/null
NODE_ARM64=$(make --no-print-directory -s -C bindings/node node-linux-arm64-path)
install "$T/arm64" --cpu=arm64 --os=linux --libc=glibc
only "$T/arm64" hyperseal-linux-arm64-gnu
expect "$T/arm64" "native linux-arm64 $RELEASE" qemu-aarch64-static -L /usr/aarch64-linux-gnu "$NODE_ARM64"
took "linux-arm64-gnu" "$t0"

echo '   win32-x64-gnu: npm install --os=win32, the README example under Wine'
t0=$(now)
make --no-print-directory -s -C bindings/node node-win-x64 > /dev/null
declare $(make --no-print-directory -s -C bindings/node node-win-x64-env)  # WINEPREFIX WINEDEBUG WINE NODE_WIN64
install "$T/win64" --os=win32 --cpu=x64
only "$T/win64" hyperseal-win32-x64-gnu
expect "$T/win64" "native win32-x64 $RELEASE" env WINEPREFIX="$WINEPREFIX" WINEDEBUG="$WINEDEBUG" "$WINE" "$NODE_WIN64"
took "win32-x64-gnu" "$t0"

echo '   win32-arm64 (no addon for it): the WebAssembly fallback and its node:fs file writing on Windows'
t0=$(now)
install "$T/win-fallback" --os=win32 --cpu=arm64
only "$T/win-fallback" ""
expect "$T/win-fallback" "wasm win32-x64 ${RELEASE%% *}" env WINEPREFIX="$WINEPREFIX" WINEDEBUG="$WINEDEBUG" "$WINE" "$NODE_WIN64"
took "win32 fallback" "$t0"
