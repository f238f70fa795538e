# The Python wheels of `make dist`, sourced by packaging/dist.sh (it uses that script's ROOT, WORK,
# DIST, AUDITWHEEL, say and expect_release; the wheel tools come from `make wheel-tools`).
#
# One abi3 wheel (CPython 3.11+) per Linux architecture, x86-64 and aarch64, both
# manylinux_2_28: pip installs them where glibc is 2.28 or newer (Debian 10+, Ubuntu 20.04+,
# RHEL/Alma/Rocky 8+, Fedora 29+, Amazon Linux 2023), not on Amazon Linux 2 or Ubuntu 18.04
# (glibc 2.26, 2.27), nor on musl (Alpine). Linked against this machine's glibc (2.36) the
# extension would need symbol versions up to GLIBC_2.34 (the libpthread merge, stat64), so maturin
# builds with zig (`--zig`) as C compiler and linker: zig compiles aws-lc's and ring's C and
# assembly for the target and links against stubs of glibc 2.28's symbols, for both
# architectures, from this one machine. Every other platform gets the sdist (pip builds it, with
# Rust and a C compiler).
#
# The zig builds have a target directory of their own, target/zig: aws-lc-sys runs its build
# script again whenever the C compiler changes (CC_<target>), so sharing target/ with the gcc
# builds of the same targets would rebuild aws-lc and everything above it on every switch. They
# take the lock of target/release (WHEEL_LOCK), which every release build in target/ takes, so
# that a developer's `make dist` and a build in target/ do not share 2 cores; `make test` builds
# them in the background beside its tests (the Makefile's dist-builds), under a lock of its own.
#
# Run as a command, `packaging/wheels.sh compile OUT-DIR` makes the wheels without the checks
# below (which need dist.sh): the same maturin calls, so dist.sh's later ones find them built.

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then # run as a command: `compile OUT-DIR`
  set -euo pipefail
  ROOT=$(cd "$(dirname "$0")/.." && pwd)
fi
WHEEL_TOOLS=${WHEEL_TOOLS:-$ROOT/.tools/wheel-tools}
WHEEL_POLICY=manylinux_2_28
WHEEL_TARGETS=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)

# The platform tag of a target's wheel: manylinux_2_28_x86_64, manylinux_2_28_aarch64.
wheel_platform() { echo "${WHEEL_POLICY}_${1%%-*}"; }

# Builds every wheel into OUT-DIR. SOURCE_DATE_EPOCH (the commit's time) gives the zip entries
# their times; it must be the same in every call, since cc-rs rebuilds aws-lc when it changes.
wheels_compile() { # OUT-DIR
  local out=$1 target lock=${WHEEL_LOCK:-$ROOT/target/release/.cargo-lock}
  rm -rf "$out"
  mkdir -p "$(dirname "$lock")"
  for target in "${WHEEL_TARGETS[@]}"; do
    (cd "$ROOT/bindings/python" && PATH="$WHEEL_TOOLS/bin:$PATH" CARGO_TARGET_DIR="$ROOT/target/zig" \
      flock "$lock" \
      maturin build --release --quiet --zig --compatibility "$WHEEL_POLICY" --target "$target" \
        --auditwheel check --out "$out")
  done
}

# Builds every wheel into OUT-DIR and checks that each extension carries this release (HYPERSEAL_COMMIT).
wheels_build() { # OUT-DIR
  local out=$1 target wheel
  wheels_compile "$out"
  for target in "${WHEEL_TARGETS[@]}"; do
    wheel=$(ls "$out"/hyperseal-*-cp311-abi3-"$(wheel_platform "$target")".whl)
    expect_release "$(basename "$wheel")" "$(python3 - "$wheel" <<'PY'
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
so = z.read("hyperseal/_hyperseal.abi3.so")
m = re.search(rb"\d+\.\d+\.\d+ \([0-9a-f]{7,}\)", so)
print(m.group().decode() if m else "no release string")
PY
)"
  done
}

# Each wheel checked by auditwheel (the policy it reports must be the one in its name) and copied
# to dist/.
wheels_ship() { # WHEEL-DIR
  local target platform wheel n
  n=$(ls "$1"/*.whl | wc -l)
  [ "$n" -eq ${#WHEEL_TARGETS[@]} ] || { echo "dist: $n wheels, expected ${#WHEEL_TARGETS[@]}" >&2; exit 1; }
  for target in "${WHEEL_TARGETS[@]}"; do
    platform=$(wheel_platform "$target")
    wheel=$(ls "$1"/hyperseal-*-cp311-abi3-"$platform".whl)
    "$AUDITWHEEL" show "$wheel" | tee "$WORK/auditwheel-$platform.txt"
    tr '\n' ' ' < "$WORK/auditwheel-$platform.txt" | grep -q "consistent with the following platform tag: \"$platform\"" ||
      { echo "dist: auditwheel does not find $(basename "$wheel") $platform" >&2; exit 1; }
    cp "$wheel" "$DIST/"
  done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  [ "${1:-}" = compile ] && [ -n "${2:-}" ] || { echo "usage: packaging/wheels.sh compile OUT-DIR" >&2; exit 2; }
  : "${SOURCE_DATE_EPOCH:?set it to the time of the commit, as dist.sh does}"
  wheels_compile "$2"
fi
