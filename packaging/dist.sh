#!/usr/bin/env bash
# `make dist`: the release artifacts in dist/, from what the test target already built (the static
# CLI in target/release, the addon in bindings/node, the wasm build in bindings/wasm/pkg), so a
# release costs the Python wheels' builds (zig, two targets: packaging/wheels.sh) and some packing,
# not a second build of everything.
#
# Same commit, same bytes: every timestamp is the commit's (SOURCE_DATE_EPOCH), archives are
# sorted with owner 0 and gzip without a name or time, and the version string is the commit's
# (build.rs). The SBOM's timestamp and serial number are pinned here, since the generator
# writes the clock and a random UUID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARGO=${CARGO:-cargo}
AUDITWHEEL=${AUDITWHEEL:-$ROOT/.tools/auditwheel/bin/auditwheel}

VERSION=$(awk -F'"' '/^\[workspace.package\]/{w=1} w && /^version =/{print $2; exit}' Cargo.toml)
DIST=$ROOT/dist
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
rm -rf "$DIST"
mkdir -p "$DIST"
say() { printf '== %s\n' "$*"; }
source packaging/wheels.sh

# Deterministic tar.gz of the files under DIR (relative to the current directory): names sorted,
# the commit's time, root-owned, modes normalised, GNU format (no pax atime/ctime records), gzip -n.
# Files only, no directory entries: tar applies a directory entry's mode and time to a directory
# that already exists, so `tar -C ~/.local` would turn a private ~/.local/share into 0755. Without
# them tar creates only the directories that are missing (from the files' paths, under the
# user's umask) and leaves existing ones as they are, whichever tar line installs it.
pack() {
  find "$1" ! -type d -print0 | LC_ALL=C sort -z |
    tar --null --no-recursion -T - --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
      --mode='u+rw,go-w,a+rX' --format=gnu -cf - | gzip -9n > "$2"
}

# An artifact built from another commit (a stale build) must not be shipped under this one.
expect_release() {
  [[ "$2" == *"$RELEASE"* ]] || { echo "dist: $1 says '$2', expected '$RELEASE' (rebuild it)" >&2; exit 1; }
}

# cc-rs, which builds aws-lc's and ring's C, runs their build scripts again when SOURCE_DATE_EPOCH
# changes, and cargo then rebuilds everything above them. Their sources use neither __DATE__ nor
# __TIME__, so the bytes do not depend on it: the native builds run without it, and are the very
# builds that `make test` made and tested. Only the archives and the wheels (maturin's zip times)
# take the commit's time.
native() { env -u SOURCE_DATE_EPOCH "$@"; }

# --- The builds that carry the commit: the static CLI, the Python extension, the Node addon.
# HYPERSEAL_COMMIT pins the one commit read here for all three build scripts, so that a HEAD
# moving during the builds (a shared tree) cannot give them different names.
build_all() {
  say "builds for $RELEASE"
  # target/release/hyperseal is shared with every cargo build of the workspace (`cargo test` links
  # it dynamically), so the static one `make build` links is copied at once and checked.
  BIN=$WORK/hyperseal
  for try in 1 2 3; do
    native make --no-print-directory -s build CARGO="$CARGO"
    cp target/release/hyperseal "$BIN"
    if file -b "$BIN" | grep -q 'static-pie linked\|statically linked'; then break; fi
    [ $try -lt 3 ] || { echo "dist: target/release/hyperseal is not static: $(file -b "$BIN")" >&2; exit 1; }
    touch crates/hyperseal-cli/build.rs
  done
  expect_release "hyperseal --version" "$("$BIN" --version)"
  # The command line for Windows x86-64 and Linux ARM64 (cross-compiled: `make build-windows
  # build-arm64`); their release string is checked in their bytes (they run under Wine and
  # qemu in dist-test).
  native make --no-print-directory -s build-windows build-arm64 CARGO="$CARGO" > "$WORK/cross-build.log" 2>&1 ||
    { cat "$WORK/cross-build.log" >&2; exit 1; }
  cp target/cross/x86_64-pc-windows-gnu/release/hyperseal.exe "$WORK/hyperseal.exe"
  cp target/cross/aarch64-unknown-linux-gnu/release/hyperseal "$WORK/hyperseal-aarch64"
  for b in "$WORK/hyperseal.exe" "$WORK/hyperseal-aarch64"; do
    grep -qaF "$RELEASE" "$b" || { echo "dist: $b does not carry '$RELEASE' (rebuild it)" >&2; exit 1; }
  done
  wheels_build "$WORK/wheel"
  native make --no-print-directory -s -C bindings/node addon > "$WORK/node-build.log" 2>&1 || { cat "$WORK/node-build.log" >&2; exit 1; }
  node -e "const v = require('./bindings/node').VERSION; if (!v.includes(process.argv[1])) { console.error('dist: the addon says ' + v); process.exit(1) }" "$RELEASE"
}
for attempt in 1 2 3; do
  COMMIT=$(git rev-parse --short=7 HEAD)
  export SOURCE_DATE_EPOCH=$(git log -1 --format=%ct "$COMMIT")
  export HYPERSEAL_COMMIT=$COMMIT
  RELEASE="$VERSION ($COMMIT)"
  set +e; (set -e; build_all); rc=$?; set -e
  [ $rc -eq 0 ] && break
  [ $attempt -lt 3 ] || exit 1
done
BIN=$WORK/hyperseal

# --- The CLI for Linux (x86-64, ARM64): the static binary, man page, completions, licences,
# README, laid out as a prefix (bin/, share/) so that `tar -C ~/.local --strip-components=1`
# installs it. The man page and completions come from the x86-64 binary: one command tree.
say "CLI: Linux x86-64 and ARM64 tarballs, Windows x86-64 zip"
cli_tarball() { # BINARY ARCH
  local name=hyperseal-$VERSION-$2-linux p=$WORK/hyperseal-$VERSION-$2-linux
  install -Dm755 "$1" "$p/bin/hyperseal"
  # age and its clients reach the identity agent through this name (`hyperseal agent identity`).
  ln -s hyperseal "$p/bin/age-plugin-hyperseal"
  mkdir -p "$p/share/man/man1" "$p/share/bash-completion/completions" "$p/share/zsh/site-functions" \
    "$p/share/fish/vendor_completions.d" "$p/share/doc/hyperseal"
  "$BIN" man > "$p/share/man/man1/hyperseal.1"
  "$BIN" completions bash > "$p/share/bash-completion/completions/hyperseal"
  "$BIN" completions zsh > "$p/share/zsh/site-functions/_hyperseal"
  "$BIN" completions fish > "$p/share/fish/vendor_completions.d/hyperseal.fish"
  cp README.md LICENSE-MIT LICENSE-APACHE "$p/share/doc/hyperseal/"
  (cd "$WORK" && pack "$name" "$DIST/$name.tar.gz")
}
cli_tarball "$BIN" x86_64
cli_tarball "$WORK/hyperseal-aarch64" aarch64
# Windows: hyperseal.exe (static: no DLLs beside it), the PowerShell completion, licences,
# README, in one folder; a zip with sorted names, the commit's time and fixed attributes.
W=$WORK/hyperseal-$VERSION-x86_64-windows
mkdir -p "$W"
cp "$WORK/hyperseal.exe" README.md LICENSE-MIT LICENSE-APACHE "$W/"
# age and its clients reach the identity agent through this name; Windows has no links to rely on.
cp "$WORK/hyperseal.exe" "$W/age-plugin-hyperseal.exe"
"$BIN" completions powershell > "$W/hyperseal.ps1"
python3 - "$W" "$DIST/$(basename "$W").zip" <<'PY'
import os, sys, time, zipfile
src, dst = sys.argv[1:]
when = time.gmtime(max(int(os.environ["SOURCE_DATE_EPOCH"]), 315532800))[:6]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for name in sorted(os.listdir(src)):
        info = zipfile.ZipInfo(f"{os.path.basename(src)}/{name}", when)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, open(os.path.join(src, name), "rb").read())
PY

# --- The Python wheels (abi3: CPython 3.11+) and the sdist. manylinux_2_28 for x86-64 and aarch64,
# built with zig (glibc 2.28 or newer: Debian 10+, Ubuntu 20.04+, RHEL 8+; packaging/wheels.sh
# says why and which platforms miss out); everywhere else pip builds the sdist.
say "Python wheels ($WHEEL_POLICY: ${WHEEL_TARGETS[*]%%-*}, abi3) and sdist"
wheels_ship "$WORK/wheel"
# The sdist is made from the commit (git archive), not from the working tree. cargo refuses to
# list hyperseal-toolkit's files while its build script lives in ../hyperseal, so that copy gets
# the script beside its manifest (the same file, the same cfg it sets).
SRC=$WORK/src
mkdir -p "$SRC"
git archive --format=tar "$COMMIT" | tar -xf - -C "$SRC"
cp "$SRC/crates/hyperseal/build.rs" "$SRC/crates/hyperseal-toolkit/build.rs"
sed -i 's|^build = "../hyperseal/build.rs"$|build = "build.rs"|' "$SRC/crates/hyperseal-toolkit/Cargo.toml"
(cd "$SRC/bindings/python" && maturin sdist --out "$DIST" > "$WORK/sdist.log" 2>&1) || { cat "$WORK/sdist.log" >&2; exit 1; }
ls "$DIST"/hyperseal-"$VERSION".tar.gz > /dev/null

# --- The npm packages (packaging/npm.sh): `hyperseal` (JS and the WebAssembly build) and one
# package per platform with its addon, named by platform.
say "npm packages"
packaging/npm.sh "$WORK/npm"
cp "$WORK"/npm/*.tgz "$DIST/"

# --- CycloneDX SBOM of the Rust dependencies of each shipped build: the CLI for each platform,
# each wheel's Python extension, each npm platform package's addon, and the WebAssembly build. The
# generator writes one file next to
# every workspace member's Cargo.toml; they are moved out at once. It also writes the clock, a
# random serial number and this checkout's absolute path into bom-refs: those are pinned to the
# commit's time, a UUID derived from the release and a fixed root (as --remap-path-prefix does).
say "SBOM (CycloneDX $(cargo-cyclonedx cyclonedx --version 2>/dev/null | awk '{print $NF}'))"
SB=$WORK/sbom
mkdir -p "$SB"
members=(crates/* bindings/node bindings/wasm bindings/python)
sbom() { # TARGET PACKAGE-DIR...
  local target=$1; shift
  "$CARGO" cyclonedx --manifest-path Cargo.toml --format json --spec-version 1.5 --no-build-deps \
    --target "$target" --override-filename hyperseal-dist-sbom -qq
  for m in "${members[@]}"; do
    if [ -f "$m/hyperseal-dist-sbom.json" ]; then
      if printf '%s\n' "$@" | grep -qx "$m"; then mv "$m/hyperseal-dist-sbom.json" "$SB/$(basename "$m").json"
      else rm -f "$m/hyperseal-dist-sbom.json"; fi
    fi
  done
}
sbom wasm32-unknown-unknown bindings/wasm
parts=(wasm:wasm)
for t in x86_64-unknown-linux-gnu:x86_64-linux aarch64-unknown-linux-gnu:aarch64-linux x86_64-pc-windows-gnu:x86_64-windows; do
  sbom "${t%%:*}" crates/hyperseal-cli # the CLI of each platform (hyperseal-VERSION-cli-PLATFORM)
  mv "$SB/hyperseal-cli.json" "$SB/cli-${t#*:}.json"
  parts+=("cli-${t#*:}:cli-${t#*:}")
done
for target in "${WHEEL_TARGETS[@]}"; do # each wheel's extension (hyperseal-VERSION-python-PLATFORM)
  sbom "$target" bindings/python
  mv "$SB/python.json" "$SB/python-$(wheel_platform "$target").json"
  parts+=("python-$(wheel_platform "$target"):python-$(wheel_platform "$target")")
done
while read -r name target; do # each npm platform package's addon (hyperseal-VERSION-node-PLATFORM)
  sbom "$target" bindings/node
  mv "$SB/node.json" "$SB/node-$name.json"
  parts+=("node-$name:node-$name")
done < "$WORK/npm/platforms"
for part in "${parts[@]}"; do
  python3 - "$SB/${part%%:*}.json" "$DIST/hyperseal-$VERSION-${part#*:}.cdx.json" "$ROOT" "$RELEASE" <<'PY'
import datetime, json, os, sys, uuid
src, dst, root, release = sys.argv[1:]
text = open(src).read().replace("file://" + root, "file:///hyperseal")
bom = json.loads(text)
epoch = int(os.environ["SOURCE_DATE_EPOCH"])
bom["metadata"]["timestamp"] = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
bom["serialNumber"] = "urn:uuid:" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"hyperseal {release} {os.path.basename(dst)}"))
assert root not in json.dumps(bom)
open(dst, "w").write(json.dumps(bom, indent=2, sort_keys=True) + "\n")
PY
done

# --- The web app (docs/WEB.md): the page's files as `make web` builds them (its own
# SHA256SUMS inside, which docs/WEB.md tells a host to check), from this commit's sources and
# the WebAssembly build above.
say "web app"
bash bindings/wasm/web/build.sh "$WORK/hyperseal-web-$VERSION" > /dev/null
(cd "$WORK" && pack "hyperseal-web-$VERSION" "$DIST/hyperseal-web-$VERSION.tar.gz")

# --- The Rust crates (docs/RUST.md): hyperseal-age, the drop-in for the `age` crate, and the three
# workspace crates it depends on (the core and its two cipher crates), as `cargo publish` would
# upload them. Packaged from the commit's sources above (a plain folder: no dirty-tree check, no
# file of this checkout that git does not track), and verified: cargo builds each package from its
# own files alone, the path dependencies resolved to the packages beside it, so a file missing from
# a package fails here. The verify build is a debug one without debug info, in a per-machine
# target directory (CRATE_TARGET): the registry crates build once per machine.
say "Rust crates (cargo package)"
CRATE_TARGET=${CRATE_TARGET:-$ROOT/target/crate-package}
# cargo treats the packages it verifies as registry crates: it unpacks each into a local
# registry under CARGO_HOME once per name and version, and builds it once per version in the
# target directory. With the version unchanged, an earlier commit's sources would be built, so
# those copies (in registry/src/-HASH, never crates.io's index.crates.io-HASH) and the build
# records of these four go first; the registry crates below them stay built.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{chacha20-simd128,sm4-simd,hyperseal,hyperseal-age}-[0-9]* \
  "$CRATE_TARGET"/debug/.fingerprint/{chacha20-simd128,sm4-simd,hyperseal}-*
(cd "$SRC" && native env CARGO_PROFILE_DEV_DEBUG=0 "$CARGO" package -q --locked --target-dir "$CRATE_TARGET" \
  -p chacha20-simd128 -p sm4-simd -p hyperseal -p hyperseal-age > "$WORK/crates.log" 2>&1) || { cat "$WORK/crates.log" >&2; exit 1; }
AGE_CRATE_VERSION=$(awk -F'"' '/^version =/{print $2; exit}' crates/hyperseal-age/Cargo.toml)
for c in chacha20-simd128-$VERSION sm4-simd-$VERSION hyperseal-$VERSION hyperseal-age-$AGE_CRATE_VERSION; do
  cp "$CRATE_TARGET/package/$c.crate" "$DIST/"
done

# --- Checksums, names sorted.
(cd "$DIST" && LC_ALL=C sha256sum -- * > SHA256SUMS)
say "dist/ ($RELEASE, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
(cd "$DIST" && ls -l --time-style=+ | awk 'NR > 1 {printf "  %10d  %s\n", $5, $NF}')
