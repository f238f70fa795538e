# The Python wheels of dist/ installed and used as a user would, sourced by packaging/dist-test.sh
# (it uses that script's ROOT, DIST, T, RELEASE, HS, bare, say, now, took and one).
#
# x86-64: a fresh venv of this machine's python3, pip with no index, the README's example.
# aarch64: an arm64 Debian bookworm (`make arm64-root`: Python 3.11, glibc 2.36) whose own
# python3 runs under qemu-user (`qemu-aarch64-static -L ROOT`: the arm64 loader and libraries come
# from ROOT; no chroot, no binfmt_misc). Its pip installs the wheel (`--target`, so pip checks the
# wheel's tags against that interpreter and glibc), then the READMEs' examples and the package
# tests that need neither a subprocess nor a package the root lacks run there, and files cross
# between that Python and the installed x86-64 CLI both ways.
ARM64_ROOT=${ARM64_ROOT:-$ROOT/.tools/arm64-root}

WHEEL_X86=$(one 'hyperseal-*-cp311-abi3-manylinux_2_28_x86_64.whl')
WHEEL_ARM=$(one 'hyperseal-*-cp311-abi3-manylinux_2_28_aarch64.whl')
[ "$(ls "$DIST"/*.whl | wc -l)" -eq 2 ] || { echo "dist-test: dist/ has other wheels: $(ls "$DIST"/*.whl)" >&2; exit 1; }

# --- x86-64: a fresh venv, pip with no index, the README's Python example.
say "Python wheel (x86_64): fresh venv, pip install --no-index, the README's example"
t0=$(now)
bare python3 -m venv "$T/venv"
t1=$(now)
bare "$T/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$WHEEL_X86"
took "pip install (bare venv)" "$t1"
mkdir -p "$T/py"
cat > "$T/py/readme.py" <<'EOF'
import pathlib, re, sys
import hyperseal
readme = pathlib.Path(sys.argv[1]).read_text()
blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
assert blocks, "no python block in README.md"
for code in blocks:
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
assert "site-packages" in hyperseal.__file__, hyperseal.__file__
print(hyperseal.__version__)
EOF
PYV=$(cd "$T/py" && bare "$T/venv/bin/python" readme.py "$ROOT/README.md")
[ "$PYV" = "$RELEASE" ] || { echo "dist-test: hyperseal.__version__ is '$PYV', the CLI says '$RELEASE'" >&2; exit 1; }
echo "   hyperseal.__version__: $PYV"
took "Python wheel (x86_64)" "$t0"

# --- aarch64: the arm64 Debian's python3 under qemu-user.
say "Python wheel (aarch64): pip, the READMEs' examples and part of the tests in arm64 Debian under qemu"
t0=$(now)
[ -x "$ARM64_ROOT/usr/bin/python3" ] || { echo "dist-test: no arm64 root at $ARM64_ROOT (make arm64-root)" >&2; exit 1; }
A=$T/arm64
mkdir -p "$A/home" "$A/work"
arm64() { env -i PATH=/usr/bin:/bin HOME="$A/home" LANG=C.UTF-8 TMPDIR="$A" PYTHONPATH="$A/site" \
  qemu-aarch64-static -L "$ARM64_ROOT" "$ARM64_ROOT/usr/bin/python3" "$@"; }
t1=$(now)
arm64 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-index --no-deps \
  --target "$A/site" "$WHEEL_ARM"
took "pip install --target (qemu)" "$t1"
# The README's example and the package README's, but for those that need packages this root
# lacks (dask, fsspec, s3fs; dask's workers are also processes, which qemu-user does not start
# as arm64 without binfmt_misc). Then a file each way with the x86-64 CLI.
cat > "$A/check.py" <<'EOF'
import os, pathlib, platform, re, sys
import hyperseal
root_readme, pkg_readme, step = sys.argv[1:]
assert platform.machine() == "aarch64", platform.machine()
assert hyperseal.__file__.startswith(os.environ["PYTHONPATH"]), hyperseal.__file__
if step == "seal":
    ran = 0
    for readme in (root_readme, pkg_readme):
        for code in re.findall(r"```python\n(.*?)```", pathlib.Path(readme).read_text(), re.S):
            if re.search(r"^\s*(import|from) (hyperseal\.)?(dask|fsspec|s3fs)", code, re.M):
                continue
            os.makedirs(f"readme-{ran}")
            os.chdir(f"readme-{ran}")
            exec(compile(code, readme, "exec"), {"__name__": "readme"})
            os.chdir("..")
            ran += 1
    assert ran >= 4, f"only {ran} README examples ran"
    me = hyperseal.generate_key()
    open("me.key", "w").write(me.secret + "\n")
    open("me.pub", "w").write(me.public + "\n")
    open("plain", "wb").write(os.urandom(3 << 20))
    hyperseal.encrypt_file("plain", "from-arm64.hs", me.public)
    print(f"{ran} README examples;", hyperseal.__version__)
else:
    hyperseal.decrypt_file("from-x86.hs", "from-x86", open("me.key").read().strip())
    assert open("from-x86", "rb").read() == open("plain", "rb").read()
    print("opened the CLI's file")
EOF
out=$(cd "$A/work" && arm64 "$A/check.py" "$ROOT/README.md" "$ROOT/bindings/python/README.md" seal)
echo "   $out"
[ "${out#*; }" = "$RELEASE" ] || { echo "dist-test: the aarch64 wheel says '${out#*; }', the CLI says '$RELEASE'" >&2; exit 1; }
bare "$HS" decrypt -i "$A/work/me.key" "$A/work/from-arm64.hs" | cmp - "$A/work/plain"
bare "$HS" encrypt -R "$A/work/me.pub" -o "$A/work/from-x86.hs" "$A/work/plain"
(cd "$A/work" && arm64 "$A/check.py" "$ROOT/README.md" "$ROOT/bindings/python/README.md" open) | sed 's/^/   /'
# The package tests that run in-process on the root's pytest, from a copy of the tests: their
# CLI and age paths are relative to the test files, so the tests that start those (x86-64
# programs) skip there; at least 30 must pass, so a wholesale skip fails here.
mkdir -p "$A/tests"
cp "$ROOT"/bindings/python/tests/{conftest.py,s3_server.py,s3_local.py,gil.py,test_open.py,test_core.py,test_api.py,test_files.py,test_rekey.py} "$A/tests/"
t1=$(now)
(cd "$A/tests" && arm64 -m pytest -q -p no:cacheprovider . 2>&1) > "$A/pytest.log" || { cat "$A/pytest.log" >&2; exit 1; }
summary=$(tail -1 "$A/pytest.log")
echo "   pytest (aarch64): $summary"
passed=$(grep -o '[0-9]* passed' <<< "$summary" | cut -d' ' -f1)
[ "${passed:-0}" -ge 30 ] || { echo "dist-test: only ${passed:-0} tests passed on aarch64" >&2; exit 1; }
took "pytest (qemu)" "$t1"
took "Python wheel (aarch64)" "$t0"
