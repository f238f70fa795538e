#!/usr/bin/env bash
# Builds the page into $1 (target/web): its own files, the browser package's modules and
# WebAssembly as they are published (js/, pkg/), the guide, then the service worker with the
# list of every file and a version made from their SHA-256 sums, and SHA256SUMS over all of it.
# Same inputs, same bytes: no dates, no absolute paths, files listed in a fixed order.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wasm=$(dirname "$here")
root=$(cd "$wasm/../.." && pwd)
out=$1

for f in "$wasm/pkg/hyperseal.js" "$wasm/pkg/hyperseal_bg.wasm"; do
  [ -f "$f" ] || { echo "$f is missing: run \`make wasm\` first" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/app" "$out/js" "$out/pkg"
cp "$here/index.html" "$here/app.css" "$here/manifest.webmanifest" "$here/icon.svg" "$out/"
cp "$here"/app/*.js "$out/app/"
# The package's browser entry and what it imports (worker.js: the WorkerPool's workers).
cp "$wasm"/js/{index,core,passkeys,workers,worker,blob-reader,plan}.js "$out/js/"
cp "$wasm/pkg/hyperseal.js" "$wasm/pkg/hyperseal_bg.wasm" "$out/pkg/"
cp "$root/docs/WEB.md" "$out/WEB.md"

cd "$out"
# Every file but the worker itself, which the browser fetches on its own; './' is the page.
files=$(find . -type f ! -name sw.js | sed 's#^\./##' | LC_ALL=C sort)
version=$(for f in $files; do sha256sum "$f"; done | sha256sum | cut -c1-16)
list=$(printf '%s\n' './' $files | sed 's/.*/  "&",/')
{
  sed -n '1,/^const FILES = /p' "$here/sw.js" | sed '$d' | sed "s/__VERSION__/$version/"
  printf 'const FILES = [\n%s\n]\n' "${list%,}"
  sed -n '/^const FILES = /,$p' "$here/sw.js" | sed '1d'
} > sw.js
grep -q __ sw.js && { echo 'sw.js: a placeholder was left' >&2; exit 1; }
find . -type f ! -name SHA256SUMS | sed 's#^\./##' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS
echo "target/web: $(wc -l < SHA256SUMS) files, version $version"
