#!/usr/bin/env bash
# `make dist-test`: every artifact in dist/ installed and used as a user would, in a bare
# environment (`env -i`, PATH=/usr/bin:/bin, HOME in a temporary folder): no Rust toolchain, no
# project venv, no node_modules of this repository on the way. What it runs is the README's
# examples, so the README cannot promise what the artifacts do not do.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=$ROOT/dist
AGE=${AGE:-$ROOT/.tools/bin/age}
T=$(mktemp -d /tmp/hyperseal-dist-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home"
# Debian's node, npm, python3, man, bash, tar, openssl and ssh-keygen live in /usr/bin.
bare() { env -i PATH=/usr/bin:/bin HOME="$T/home" LANG=C.UTF-8 TMPDIR="$T" "$@"; }
say() { printf '== %s\n' "$*"; }
now() { date +%s.%N; }
took() { printf '   %s: %.1f s\n' "$1" "$(echo "$(now) - $2" | bc)"; }
one() { local f=("$DIST"/$1); [[ ${#f[@]} -eq 1 && -f ${f[0]} ]] || { echo "dist-test: expected one $1 in dist/ (make dist)" >&2; exit 1; }; echo "${f[0]}"; }

TARBALL=$(one 'hyperseal-*-x86_64-linux.tar.gz')
(cd "$DIST" && sha256sum --quiet -c SHA256SUMS)
for tool in cargo rustc rustup maturin; do
  if bare bash -c "command -v $tool" >/dev/null; then echo "dist-test: $tool is on the bare PATH" >&2; exit 1; fi
done

# --- The CLI: installed by the README's own tar line into ~/.local, then the README's
# five-minute tour. That prefix already has private (0700) bin/, share/ and share/man/ as a
# user's may: installing must add files without opening them up, so the tarball carries no
# directory entries (their modes and times would be applied to the existing directories).
say "CLI tarball: the README's install line, the five-minute tour, man page, bash completion, age"
t0=$(now)
PREFIX=$T/home/.local
PRIVATE=("$PREFIX" "$PREFIX/bin" "$PREFIX/share" "$PREFIX/share/man")
mkdir -p "${PRIVATE[@]}"
chmod 0700 "${PRIVATE[@]}"
tar tzf "$TARBALL" > "$T/tarball.list"
if grep '/$' "$T/tarball.list" >&2; then echo "dist-test: the tarball has directory entries (above)" >&2; exit 1; fi
INSTALL=$(grep -m1 '^tar xzf hyperseal-.*-x86_64-linux\.tar\.gz ' "$ROOT/README.md") ||
  { echo "dist-test: README.md has no 'tar xzf hyperseal-…-x86_64-linux.tar.gz' line" >&2; exit 1; }
# Run as written from where the tarball lies, with only the tarball's name made the built one's.
INSTALL=${INSTALL%%#*}
INSTALL=$(sed -E "s|hyperseal-[^ ]*-x86_64-linux\.tar\.gz|$(basename "$TARBALL")|" <<< "$INSTALL")
echo "   $INSTALL"
(cd "$DIST" && bare bash -c "set -e; $INSTALL")
for d in "${PRIVATE[@]}"; do
  mode=$(stat -c %a "$d")
  [ "$mode" = 700 ] || { echo "dist-test: installing made ${d#"$T/home/"} $mode (it was 700)" >&2; exit 1; }
done
HS=$PREFIX/bin/hyperseal
[ "$(readlink "$PREFIX/bin/age-plugin-hyperseal")" = hyperseal ] ||
  { echo "dist-test: the tarball has no bin/age-plugin-hyperseal link to hyperseal (the agent's plugin)" >&2; exit 1; }
RELEASE=$(bare "$HS" --version)
RELEASE=${RELEASE#hyperseal }
echo "   hyperseal --version: $RELEASE"
# The release names its commit; the wheel and the npm package must name the same (below).
[[ $RELEASE =~ ^[0-9]+\.[0-9]+\.[0-9]+\ \([0-9a-f]{7,}\)$ ]] || { echo "dist-test: '$RELEASE' names no commit" >&2; exit 1; }
mkdir -p "$T/tour/docs"
# The tour's inputs (report.pdf, docs/, notes.txt, an SSH key, a signing key) stand in for the
# README's; its commands run as written, with age1… replaced by the key just made.
cat > "$T/tour.sh" <<'EOF'
set -euxo pipefail
export PATH="$PREFIX/bin:$PATH"
head -c 3000000 /dev/urandom > report.pdf
echo 'the docs' > docs/a.txt
echo 'notes' > notes.txt
echo 'correct horse battery staple' > pass.txt
hyperseal keygen -o me.key
hyperseal pubkey -i me.key > me.pub
hyperseal encrypt -R me.pub -o report.pdf.hs report.pdf
hyperseal decrypt -i me.key -o copy.pdf report.pdf.hs
cmp report.pdf copy.pdf
tar c docs | hyperseal encrypt -r "$(cat me.pub)" -a > docs.tar.hs.asc
hyperseal decrypt -i me.key docs.tar.hs.asc | tar t | grep -qx docs/a.txt
hyperseal decrypt -i me.key --offset 1000000 --length 4096 report.pdf.hs > range
cmp range <(tail -c +1000001 report.pdf | head -c 4096)
hyperseal encrypt --passphrase-file pass.txt -o notes.hs notes.txt
[ "$(hyperseal decrypt --passphrase-file pass.txt notes.hs)" = notes ]
hyperseal age -r "$(cat me.pub)" -o notes.age notes.txt
ssh-keygen -q -t ed25519 -N '' -f id_ed25519
hyperseal age -R id_ed25519.pub -o notes-ssh.age notes.txt
[ "$(hyperseal decrypt -i id_ed25519 notes-ssh.age)" = notes ]
hyperseal hash --algo blake3 report.pdf > report.b3
hyperseal hash --algo blake3 --check report.b3
openssl genpkey -algorithm ed25519 -out sign.pem 2>/dev/null
openssl pkey -in sign.pem -pubout -out sign.pub
hyperseal sign -i sign.pem -o report.sig report.pdf
hyperseal verify --pubkey sign.pub --sig report.sig report.pdf
hyperseal token keygen -o token.key
[ "$(echo -n 'user=42' | hyperseal token seal --key token.key --ttl 15m | hyperseal token open --key token.key)" = user=42 ]
hyperseal keygen -o you.key
hyperseal rekey -i me.key --add "$(hyperseal pubkey -i you.key)" report.pdf.hs
hyperseal decrypt -i you.key -o again.pdf report.pdf.hs
cmp report.pdf again.pdf
hyperseal inspect --json report.pdf.hs > inspect.json
grep -q '"version": "hyperseal/v1"' inspect.json
hyperseal encrypt --format age -R me.pub -o report.pdf.age report.pdf
EOF
(cd "$T/tour" && bare PREFIX="$PREFIX" bash "$T/tour.sh" 2> "$T/tour.log") || { cat "$T/tour.log" >&2; exit 1; }
# age itself opens what the installed CLI wrote: its own command line and `encrypt --format age`.
[ "$("$AGE" -d -i "$T/tour/me.key" "$T/tour/notes.age")" = notes ]
"$AGE" -d -i "$T/tour/me.key" "$T/tour/report.pdf.age" | cmp - "$T/tour/report.pdf"
"$AGE" -d -i "$T/tour/id_ed25519" "$T/tour/notes-ssh.age" | grep -qx notes
bare MANPAGER=cat MANWIDTH=80 man -l "$PREFIX/share/man/man1/hyperseal.1" > "$T/man.txt"
grep -q 'hyperseal' "$T/man.txt" && grep -q 'keygen' "$T/man.txt"
bare bash -c "source '$PREFIX/share/bash-completion/completions/hyperseal' && complete -p hyperseal" | grep -q 'hyperseal$'
bare bash -c "source '$PREFIX/share/bash-completion/completions/hyperseal'
  COMP_WORDS=(hyperseal enc); COMP_CWORD=1; COMP_LINE='hyperseal enc'; COMP_POINT=\${#COMP_LINE}
  _hyperseal hyperseal enc hyperseal; printf '%s\n' \"\${COMPREPLY[@]}\"" | grep -qx encrypt
for f in share/doc/hyperseal/LICENSE-MIT share/doc/hyperseal/LICENSE-APACHE share/doc/hyperseal/README.md share/zsh/site-functions/_hyperseal share/fish/vendor_completions.d/hyperseal.fish; do
  [ -s "$PREFIX/$f" ] || { echo "dist-test: the tarball has no $f" >&2; exit 1; }
done
took "CLI tarball" "$t0"

# --- The CLI for Linux ARM64 and Windows x86-64 on their platforms: the tarball installed with the
# README's line into an ARM64 prefix and run under qemu-user; the zip unpacked and run under Wine.
# packaging/cross/smoke.py runs the tour, age round trips both ways (age built for the platform),
# rekey, the all-or-nothing output rules and (Windows) the console, Ctrl-C, a plugin and the
# identity agent over its named pipe (age through the zip's age-plugin-hyperseal.exe).
cli_arm64() {
  say "CLI for Linux ARM64 (qemu-user): installed, the tour, age, rekey, faults"
  local t0 && t0=$(now)
  local tarball && tarball=$(one 'hyperseal-*-aarch64-linux.tar.gz')
  local prefix=$T/arm64-cli/.local
  mkdir -p "$prefix"
  local install && install=$(sed -E "s|hyperseal-[^ ]*-x86_64-linux\.tar\.gz|$(basename "$tarball")|; s|~/.local|$prefix|" <<< "$INSTALL")
  (cd "$DIST" && bare bash -c "set -e; $install")
  file -b "$prefix/bin/hyperseal" | grep -q 'ARM aarch64.*statically linked' ||
    { echo "dist-test: the ARM64 binary is not a static aarch64 one: $(file -b "$prefix/bin/hyperseal")" >&2; return 1; }
  eval "$ARM_SMOKE --hyperseal '$prefix/bin/hyperseal'"
  took "CLI for ARM64 (qemu)" "$t0"
}
cli_windows() {
  say "CLI for Windows x86-64 (Wine): unpacked, the tour, age, rekey, faults, console, plugin, agent"
  local t0 && t0=$(now)
  local zip && zip=$(one 'hyperseal-*-x86_64-windows.zip')
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$T/windows"
  local exe && exe=$(echo "$T"/windows/hyperseal-*-x86_64-windows/hyperseal.exe)
  file -b "$exe" | grep -q 'PE32+ executable.*x86-64' || { echo "dist-test: $(file -b "$exe")" >&2; return 1; }
  cmp -s "$exe" "$(dirname "$exe")/age-plugin-hyperseal.exe" ||
    { echo "dist-test: the zip has no age-plugin-hyperseal.exe (a copy of hyperseal.exe: the agent's plugin)" >&2; return 1; }
  if x86_64-w64-mingw32-objdump -p "$exe" | grep 'DLL Name' | grep -viE 'kernel32|ntdll|advapi32|bcrypt|ws2_32|userenv|msvcrt|api-ms-win|user32|shell32|ole32|oleaut32|crypt32|secur32|synchronization' >&2; then
    echo "dist-test: hyperseal.exe needs DLLs Windows does not have (above)" >&2; return 1
  fi
  eval "$WINE_SMOKE --hyperseal '$exe'"
  took "CLI for Windows (Wine)" "$t0"
}

# --- The Python wheels (packaging/dist-test-wheels.sh): x86-64 in a fresh venv, aarch64 in an
# arm64 Debian under qemu-user.
wheels() { source packaging/dist-test-wheels.sh; }

# --- The npm packages (packaging/dist-test-npm.sh): installed by npm for this machine, for arm64
# Linux (run under qemu) and for musl Linux, which has no addon (the WebAssembly fallback); the
# browser build in Chromium, its file opened by the installed CLI.
npm_packages() {
  say "npm packages: npm install, the README's Node example on each platform, the browser build in Chromium"
  local t0 && t0=$(now)
  packaging/dist-test-npm.sh "$RELEASE" "$HS" "$T/tour/me.key" "$(cat "$T/tour/me.pub")"
  took "npm packages" "$t0"
}

# These wait on emulators (qemu-user, Wine) that keep one core busy at most, so they run side by
# side, each into a log of its own, printed whole and in order when it ends. The npm packages
# follow the Windows CLI: the smoke ends by stopping the prefix's Wine server, which would end
# the npm package's Node for Windows in the same prefix.
declare -a sections=() pids=()
side_by_side() { (set -e; for f in "$@"; do "$f"; done) > "$T/$1.log" 2>&1 & sections+=("$1"); pids+=($!); }
side_by_side cli_windows npm_packages
side_by_side cli_arm64
side_by_side wheels
failed=()
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then cat "$T/${sections[$i]}.log"; else cat "$T/${sections[$i]}.log" >&2; failed+=("${sections[$i]}"); fi
done
[ ${#failed[@]} = 0 ] || { echo "dist-test: failed: ${failed[*]} (its output above)" >&2; exit 1; }

# --- The web app: unpacked and checked as docs/WEB.md tells a host to (its browser tests are
# `make web-test`, on the same files built from the tree).
say "web app: unpacked, sha256sum -c SHA256SUMS"
WEB_TARBALL=$(one 'hyperseal-web-*.tar.gz')
mkdir -p "$T/web"
tar xzf "$WEB_TARBALL" -C "$T/web"
(cd "$T"/web/hyperseal-web-* && bare sha256sum --quiet -c SHA256SUMS && [ -f index.html ] && [ -f sw.js ] && [ -f pkg/hyperseal_bg.wasm ]) ||
  { echo "dist-test: $WEB_TARBALL does not hold the page whole" >&2; exit 1; }

# --- The Rust crates: what `cargo publish` would upload (dist.sh verified each builds from its
# own files). hyperseal-age keeps age's name-level contract: its version is 0.12.x and it has
# exactly age's features, and its README is the page crates.io shows.
say "Rust crates: hyperseal-age's manifest and README"
AGE_CRATE=$(one 'hyperseal-age-0.12.*.crate')
for c in chacha20-simd128 sm4-simd hyperseal; do one "$c-[0-9]*.crate" > /dev/null; done
mkdir -p "$T/crate"
tar xzf "$AGE_CRATE" -C "$T/crate"
python3 - "$T"/crate/hyperseal-age-*/Cargo.toml <<'PY' || { echo "dist-test: $AGE_CRATE's manifest (above)" >&2; exit 1; }
import sys, tomllib
m = tomllib.load(open(sys.argv[1], "rb"))
pkg, features = m["package"], set(m.get("features", {})) - {"default"}
assert pkg["name"] == "hyperseal-age" and pkg["version"].startswith("0.12."), pkg
assert pkg["readme"] == "README.md", pkg.get("readme")
assert features == {"armor", "ssh", "plugin", "cli-common", "async"}, features
assert m["dependencies"]["hyperseal"]["version"], m["dependencies"]["hyperseal"]
PY
grep -q 'package = "hyperseal-age"' "$T"/crate/hyperseal-age-*/README.md ||
  { echo "dist-test: $AGE_CRATE's README does not show the one-line switch" >&2; exit 1; }

say "dist-test: all artifacts passed"
