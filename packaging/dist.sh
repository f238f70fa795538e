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

# --- The builds that carry the commit: the static CLI, the Python extension, the Node addon.
# HYPERSEAL_COMMIT pins the one commit read here for all three build scripts, so that a HEAD
# moving during the builds (a shared tree) cannot give them different names.
build_all() {
  say "builds for $RELEASE"
  # target/release/hyperseal is shared with every cargo build of the workspace (`cargo test` links
  # it dynamically), so the static one `make build` links is copied at once and checked.
  BIN=$WORK/hyperseal
  for try in 1 2 3; do
    make --no-print-directory -s build CARGO="$CARGO"
    cp target/release/hyperseal "$BIN"
    if file -b "$BIN" | grep -q 'static-pie linked\|statically linked'; then break; fi
    [ $try -lt 3 ] || { echo "dist: target/release/hyperseal is not static: $(file -b "$BIN")" >&2; exit 1; }
    touch crates/hyperseal-cli/build.rs
  done
  expect_release "hyperseal --version" "$("$BIN" --version)"
  wheels_build "$WORK/wheel"
  make --no-print-directory -s -C bindings/node build > "$WORK/node-build.log" 2>&1 || { cat "$WORK/node-build.log" >&2; exit 1; }
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

# --- The CLI: static x86-64 Linux binary, man page, completions, licences, README, laid out as a
# prefix (bin/, share/) so that `tar -C ~/.local --strip-components=1` installs it.
say "CLI tarball"
NAME=hyperseal-$VERSION-x86_64-linux
P=$WORK/$NAME
install -Dm755 "$BIN" "$P/bin/hyperseal"
mkdir -p "$P/share/man/man1" "$P/share/bash-completion/completions" "$P/share/zsh/site-functions" \
  "$P/share/fish/vendor_completions.d" "$P/share/doc/hyperseal"
"$BIN" man > "$P/share/man/man1/hyperseal.1"
"$BIN" completions bash > "$P/share/bash-completion/completions/hyperseal"
"$BIN" completions zsh > "$P/share/zsh/site-functions/_hyperseal"
"$BIN" completions fish > "$P/share/fish/vendor_completions.d/hyperseal.fish"
cp README.md LICENSE-MIT LICENSE-APACHE "$P/share/doc/hyperseal/"
(cd "$WORK" && pack "$NAME" "$DIST/$NAME.tar.gz")

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

# --- CycloneDX SBOM of the Rust dependencies of each shipped build: the CLI for x86-64 Linux,
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
sbom x86_64-unknown-linux-gnu crates/hyperseal-cli
sbom wasm32-unknown-unknown bindings/wasm
parts=(hyperseal-cli:cli wasm:wasm)
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

# --- Checksums, names sorted.
(cd "$DIST" && LC_ALL=C sha256sum -- * > SHA256SUMS)
say "dist/ ($RELEASE, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
(cd "$DIST" && ls -l --time-style=+ | awk 'NR > 1 {printf "  %10d  %s\n", $5, $NF}')
