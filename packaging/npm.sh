#!/usr/bin/env bash
# The npm packages, as napi-rs packages are laid out (called by packaging/dist.sh; OUT is where
# the tarballs go):
#   hyperseal-VERSION.tgz                   the package users install: JS, types, and the
#                                           WebAssembly build (browsers, and Node's fallback
#                                           where no addon fits); optionalDependencies name
#                                           the platform packages below, at this exact version
#   hyperseal-<os>-<cpu>-<libc>-VERSION.tgz one addon each, with os/cpu/libc fields so that npm
#                                           installs only the one for the machine
# Only platforms whose addon was built here are listed and shipped; OUT/platforms records them
# (name, Rust target) for the SBOMs. Addons: linux-x64-gnu is bindings/node/hyperseal.node (the
# test build, made by dist.sh from this commit); linux-arm64-gnu and win32-x64-gnu (mingw-w64)
# are cross-compiled here.
#
# Reproducible as the other artifacts: npm pack writes fixed times and modes, and every input
# (the addons, the staged WebAssembly build) comes from this commit (HYPERSEAL_COMMIT, set by dist.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:?usage: packaging/npm.sh OUT-DIR}
VERSION=$(node -p "require('./bindings/node/package.json').version")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
: > "$OUT/platforms"

# name  Rust target  os  cpu  libc  what `file` says of the addon  how it is described
PLATFORMS=(
  "linux-x64-gnu x86_64-unknown-linux-gnu linux x64 glibc x86-64 Linux x64 (glibc)"
  "linux-arm64-gnu aarch64-unknown-linux-gnu linux arm64 glibc aarch64 Linux arm64 (glibc)"
  "win32-x64-gnu x86_64-pc-windows-gnu win32 x64 - PE32+ Windows x64 (built with mingw-w64)"
)

make --no-print-directory -s -C bindings/wasm stage > "$W/stage.log" 2>&1 || { cat "$W/stage.log" >&2; exit 1; }
for addon in addon-linux-arm64-gnu addon-win32-x64-gnu; do
  # Without SOURCE_DATE_EPOCH, as dist.sh's native builds (it says why).
  env -u SOURCE_DATE_EPOCH make --no-print-directory -s -C bindings/node "$addon" CARGO="${CARGO:-cargo}" > "$W/$addon.log" 2>&1 ||
    { cat "$W/$addon.log" >&2; exit 1; }
done

addon() { # the built addon for platform NAME
  if [ "$1" = linux-x64-gnu ]; then echo bindings/node/hyperseal.node; else echo "bindings/node/hyperseal.$1.node"; fi
}

optional='{}'
for p in "${PLATFORMS[@]}"; do
  read -r name target os cpu libc arch desc <<< "$p"
  src=$(addon "$name")
  file -b "$src" | grep -q "$arch" || { echo "npm.sh: $src is not a $arch addon: $(file -b "$src")" >&2; exit 1; }
  dir=$W/hyperseal-$name
  mkdir -p "$dir"
  cp "$src" "$dir/hyperseal.$name.node"
  cp LICENSE-MIT LICENSE-APACHE "$dir/"
  printf '# hyperseal-%s\n\nThe native addon of [hyperseal](https://www.npmjs.com/package/hyperseal) for %s. npm installs it with `hyperseal` on such machines; it is not used on its own.\n' \
    "$name" "$desc" > "$dir/README.md"
  node - "$dir/package.json" "$name" "$VERSION" "$os" "$cpu" "$libc" "$desc" <<'JS'
const [file, name, version, os, cpu, libc, desc] = process.argv.slice(2)
const pkg = {
  name: `hyperseal-${name}`,
  version,
  description: `hyperseal's native addon for ${desc}: installed by the hyperseal package`,
  license: 'MIT OR Apache-2.0',
  os: [os],
  cpu: [cpu],
  ...(libc === '-' ? {} : { libc: [libc] }),
  main: `hyperseal.${name}.node`,
  files: [`hyperseal.${name}.node`, 'LICENSE-MIT', 'LICENSE-APACHE'],
  engines: { node: '>= 18' },
}
require('node:fs').writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n')
JS
  (cd "$dir" && npm pack --silent --pack-destination "$OUT" > /dev/null)
  optional=$(node -e 'const o = JSON.parse(process.argv[1]); o[process.argv[2]] = process.argv[3]; console.log(JSON.stringify(o))' \
    "$optional" "hyperseal-$name" "$VERSION")
  printf '%s %s\n' "$name" "$target" >> "$OUT/platforms"
done

# The main package: package.json's `files` (the addon is not among them), the licences, and
# the platform packages as optional dependencies. Its `prepack` (staging the WebAssembly build)
# ran above, so the copy has no scripts.
M=$W/hyperseal
mkdir -p "$M"
node - "$M" "$optional" <<'JS'
const fs = require('node:fs')
const path = require('node:path')
const [dest, optional] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync('bindings/node/package.json', 'utf8'))
for (const f of [...pkg.files, 'README.md']) fs.cpSync(path.join('bindings/node', f), path.join(dest, f), { recursive: true })
delete pkg.scripts
delete pkg.devDependencies
pkg.files.push('LICENSE-MIT', 'LICENSE-APACHE')
pkg.optionalDependencies = JSON.parse(optional)
fs.writeFileSync(path.join(dest, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
JS
cp LICENSE-MIT LICENSE-APACHE "$M/"
[ ! -e "$M/hyperseal.node" ] || { echo "npm.sh: the main package must not carry an addon" >&2; exit 1; }
(cd "$M" && npm pack --silent --pack-destination "$OUT" > /dev/null)
ls "$OUT/hyperseal-$VERSION.tgz" > /dev/null
