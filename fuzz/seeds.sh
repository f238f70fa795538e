#!/usr/bin/env bash
# Writes the seed corpus of every fuzz target into fuzz/corpus/TARGET/ from the project's own
# test vectors (the C2SP age test kit in crates/hyperseal/tests/data, vectors/) and from files
# the release binary makes with the fixed fuzzing keys (crates/hyperseal-fuzz/fixtures).
# Run once from the repository root after `cargo build --release -p hyperseal-cli`; the corpus
# is committed, and `make fuzz-cmin` later keeps only what adds coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
H=${H:-target/release/hyperseal}
FIX=crates/hyperseal-fuzz/fixtures
KIT=crates/hyperseal/tests/data/age-testkit
C=fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/{header,armor,stanza,decrypt,token,keys,checklist}

# The age test kit: each file is "key: value" lines, a blank line, then the age file (zlib for
# some). Files go to decrypt (whole), header and stanza (the header part), armor (armored ones).
python3 - "$KIT" "$C" <<'PY'
import os, sys, zlib, hashlib
kit, out = sys.argv[1], sys.argv[2]
def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    open(os.path.join(out, target, name), "wb").write(data)
for f in sorted(os.listdir(kit)):
    if f.upper().startswith(("LICENSE", "README")):
        continue
    raw = open(os.path.join(kit, f), "rb").read()
    meta, _, body = raw.partition(b"\n\n")
    if b"compressed: zlib" in meta:
        body = zlib.decompress(body)
    if len(body) > 70000:
        continue
    put("decrypt", body)
    if b"armored: yes" in meta:
        put("armor", body)
        continue
    end = body.find(b"\n---")
    if end < 0:
        put("header", body[:2000])
        continue
    nl = body.find(b"\n", end + 1)
    header = body[: nl + 1] if nl >= 0 else body
    put("header", header)
    first = header.find(b"\n")
    put("stanza", header[first + 1:])
PY

# Files made by hyperseal with the fuzzing keys, every recipient kind, suite and profile.
for k in x25519 hybrid mlkem1024 rsa3072; do
  $H pubkey -i $FIX/$k.key > $T/$k.pub
done
printf 'password\n' > $T/pass
printf 'x' > $T/p1
head -c 40000 /dev/urandom > $T/p40k
: > $T/p0
n=0
enc() { # enc OUT ARGS...: encrypt, then file the result by kind
  local out=$1; shift
  $H encrypt -q "$@" -o $T/$out
  n=$((n + 1))
}
for k in x25519 hybrid mlkem1024 rsa3072; do
  enc $k.hs -R $T/$k.pub $T/p1
  enc $k.age.hs --format age -R $T/$k.pub $T/p1 2>/dev/null || true
done
enc pass.hs --passphrase-file $T/pass $T/p1
for s in aes-256-gcm chacha20-poly1305 sm4-gcm; do
  for p in p0 p1 p40k; do
    enc $s.$p.hs --suite $s --chunk-size 16K -R $T/x25519.pub $T/$p
  done
  enc $s.a.hs -a --suite $s --chunk-size 16K -R $T/x25519.pub $T/p40k
done
enc age.hs --format age -R $T/x25519.pub $T/p40k
enc age.a.hs --format age -a -R $T/x25519.pub $T/p1
for f in $T/*.hs; do
  h=$(sha1sum "$f" | cut -c1-40)
  cp "$f" $C/decrypt/$h
  if head -c 5 "$f" | grep -q -- '-----'; then
    cp "$f" $C/armor/$h
  else
    # Header through the MAC line, and the same without its version line for stanza.
    awk '{print} /^---/{exit}' "$f" > $C/header/$h
    tail -n +2 $C/header/$h > $C/stanza/$h
  fi
done
# Recipes for the decrypt target (first byte >= 0x80, see crates/hyperseal-fuzz/src/decrypt.rs).
printf '\x80\x00\x10\x40\x00\x00seed' > $C/decrypt/recipe-hyperseal
printf '\xa0\x01\x00\x40\x05\x00seed' > $C/decrypt/recipe-age-cut
printf '\xc3\x0c\xff\x7f\x10\x00seed' > $C/decrypt/recipe-sm4-armor-flip

# Keys: our key files, their recipients, signing PEMs, a token key, the test kit's identities.
cp $FIX/{x25519,hybrid,mlkem1024,rsa3072,token}.key $C/keys/
for k in x25519 hybrid mlkem1024 rsa3072; do cp $T/$k.pub $C/keys/$k.pub; done
for k in ed25519 ecdsa-p256; do
  $H keygen --kind $k -o $T/$k.pem 2>/dev/null
  cp $T/$k.pem $C/keys/$k.pem
  $H pubkey -i $T/$k.pem > $C/keys/$k.pub
done
grep -ah '^identity: ' $KIT/* | sort -u | cut -c11- > $C/keys/testkit-identities

# Tokens: byte 0 = length of the associated data that follows, then the token.
for aad in "" "ab"; do
  tok=$(printf 'hello token' | $H token seal --key $FIX/token.key --aad "$aad")
  printf "\\x0${#aad}%s%s" "$aad" "$tok" > $C/token/seal-${#aad}
done
printf '\x00' > $C/token/empty

# Checksum lists as coreutils writes them, GNU and --tag, with names that need escaping.
( cd $T && printf 'x' > 'a\b' && printf 'y' > "$(printf 'new\nline')" && printf 'z' > 'pa(re)n = s'
  sha256sum p1 'a\b' "$(printf 'new\nline')" 'pa(re)n = s' > $OLDPWD/$C/checklist/sha256sum
  sha256sum --tag p1 'a\b' "$(printf 'new\nline')" 'pa(re)n = s' > $OLDPWD/$C/checklist/sha256sum-tag
  b2sum --tag p1 > $OLDPWD/$C/checklist/b2sum-tag
  sha256sum -b p1 > $OLDPWD/$C/checklist/sha256sum-binary )
echo "seeded $n encrypted files; corpus: $(du -sh $C | cut -f1)"
