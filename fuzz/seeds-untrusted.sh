#!/usr/bin/env bash
# Seeds of the targets for untrusted peers and key texts (plugin, part_key, armor_push, opener,
# ssh_key, ssh_recipient, identity_file, c2sp), written into fuzz/corpus/TARGET/. Run from the
# repository root after fuzz/seeds.sh (it reuses that corpus) with ssh-keygen, openssl and the
# project venv (`make venv`: pyca/cryptography) at hand. Keys made here are throwaway; the
# protected ones use the passphrase "password" and the cheapest work factors (bcrypt 1 round,
# scrypt 2^10), so that a fuzzer's 64 MiB and 5 s budget admits them.
set -euo pipefail
cd "$(dirname "$0")/.."
C=fuzz/corpus
PY=${PY:-.tools/venv/bin/python}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/{plugin,part_key,armor_push,opener,ssh_key,ssh_recipient,identity_file,c2sp}

# SSH and PEM keys, plain and protected, and their public lines.
ssh-keygen -q -t ed25519 -N '' -C fuzz -f $T/ed
ssh-keygen -q -t ed25519 -N password -a 1 -C fuzz -f $T/ed-pw
ssh-keygen -q -t rsa -b 1024 -N '' -C fuzz -f $T/rsa
ssh-keygen -q -t rsa -b 1024 -N password -a 1 -Z aes256-gcm@openssh.com -C fuzz -f $T/rsa-pw
cp $T/rsa $T/rsa-pem && ssh-keygen -q -p -N '' -m PEM -f $T/rsa-pem
cp $T/rsa $T/rsa-p8 && ssh-keygen -q -p -N '' -m PKCS8 -f $T/rsa-p8
openssl genpkey -algorithm ed25519 -out $T/ed-p8 2>/dev/null
for k in ed ed-pw rsa rsa-pw rsa-pem rsa-p8 ed-p8; do cp $T/$k $C/ssh_key/$k; done
for k in ed rsa; do
  { printf '\0'; cat $T/$k.pub; } > $C/ssh_recipient/$k.line
  { printf '\0'; printf 'no-pty,command="echo a b" '; cat $T/$k.pub; } > $C/ssh_recipient/$k.options
  { printf '\1'; cut -d' ' -f2 $T/$k.pub | base64 -d; } > $C/ssh_recipient/$k.blob
done

# Identity files: ours, the test kit's, an SSH key, and passphrase-encrypted ones (scrypt 2^10).
cp crates/hyperseal-fuzz/fixtures/{x25519,hybrid}.key $C/identity_file/
cp $T/ed $C/identity_file/ssh-ed25519
"$PY" - crates/hyperseal-fuzz/fixtures/x25519.key $C <<'PY'
import base64, hashlib, hmac, os, sys
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import hashes
def b64(b): return base64.b64encode(b).decode().rstrip("=")
def hkdf(salt, ikm, info): return HKDF(hashes.SHA256(), 32, salt or None, info).derive(ikm)
def age_scrypt(plain, log_n=10, pw=b"password"):
    fk, salt = os.urandom(16), os.urandom(16)
    k = hashlib.scrypt(pw, salt=b"age-encryption.org/v1/scrypt" + salt, n=1 << log_n, r=8, p=1, dklen=32)
    body = b64(ChaCha20Poly1305(k).encrypt(bytes(12), fk, None))
    head = "age-encryption.org/v1\n-> scrypt %s %d\n%s\n---" % (b64(salt), log_n, body)
    mac = hmac.new(hkdf(b"", fk, b"header"), head.encode(), hashlib.sha256).digest()
    nonce = os.urandom(16)
    pk = ChaCha20Poly1305(hkdf(nonce, fk, b"payload"))
    out, chunks = b"", [plain[i:i + 65536] for i in range(0, len(plain), 65536)] or [b""]
    for i, c in enumerate(chunks):
        last = i == len(chunks) - 1
        out += pk.encrypt(i.to_bytes(11, "big") + (b"\1" if last else b"\0"), c, None)
    return (head + " " + b64(mac) + "\n").encode() + nonce + out
def armor(b):
    t = base64.b64encode(b).decode()
    return ("-----BEGIN AGE ENCRYPTED FILE-----\n" + "\n".join(t[i:i+64] for i in range(0, len(t), 64))
            + "\n-----END AGE ENCRYPTED FILE-----\n").encode()
key, out = open(sys.argv[1], "rb").read(), sys.argv[2]
open(out + "/identity_file/encrypted", "wb").write(age_scrypt(key))
open(out + "/identity_file/encrypted-armored", "wb").write(armor(age_scrypt(key)))
open(out + "/identity_file/encrypted-nested", "wb").write(age_scrypt(age_scrypt(key)))
open(out + "/identity_file/encrypted-binary", "wb").write(age_scrypt(b"\xff\xfe"))

# Plugin output: every message of the recipient-v1 and identity-v1 state machines, a grease
# command, an error, and several in a row.
msgs = [b"-> recipient-stanza 0 X25519 abc\n" + b"A" * 64 + b"\nAAAA\n",
        b"-> done\n\n", b"-> msg\naGVsbG8gd29ybGQ\n", b"-> confirm eWVz bm8\nc3VyZT8\n",
        b"-> request-secret\ncGluPw\n", b"-> request-public\nd2hhdD8\n",
        b"-> error internal\nb29wcw\n", b"-> error recipient 1\nYmFk\n",
        b"-> file-key 0\nAAECAwQFBgcICQoLDA0ODw\n", b"-> grease-x y z\n" + b"q" * 64 + b"\n\n",
        b"-> labels postquantum\n\n"]
for i, m in enumerate(msgs):
    open(out + "/plugin/msg%d" % i, "wb").write(m)
open(out + "/plugin/exchange", "wb").write(b"".join(msgs))

# Part keys: raw to_bytes spellings (mode 0x00), and layouts for the target to MAC (0x80+).
def part_key(role, suite, chunk, start, length, key):
    lay = b"hs-part2" + bytes([role, len(suite)]) + suite + chunk.to_bytes(4, "big") \
        + start.to_bytes(8, "big") + length.to_bytes(8, "big")
    return lay + key + hmac.new(hkdf(b"", key, b"hyperseal/v1 part key layout"), lay, hashlib.sha256).digest()
for i, (role, suite, chunk, start, n) in enumerate([(0, b"aes-256-gcm", 16384, 120, 16400),
        (1, b"chacha20-poly1305", 65536, 300, 200000), (0, b"sm4-gcm", 16384, 64, 16)]):
    open(out + "/part_key/raw%d" % i, "wb").write(b"\0" + part_key(role, suite, chunk, start, n, os.urandom(32)))
for mode in (0x80, 0x81, 0x82, 0x84, 0xc1):
    open(out + "/part_key/layout%02x" % mode, "wb").write(bytes([mode]) + os.urandom(8) + bytes([0, 0, 0x10, 0x40, 0, 0xb8, 0x03, 0, 1, 0, 0x40, 0x10]))
PY

# Push decoders: the armor and decrypt corpora with a cut seed in front (first byte: its length).
# Whole armored files (those with an END line), and binary files and recipes of at most 20 KB.
for f in $(grep -l -- '-----END' $C/armor/* | head -40); do
  { printf '\3\5\100\361'; cat $f; } > $C/armor_push/$(basename $f)
done
for f in $(find $C/decrypt -type f -size -20k | sort | head -400); do
  if head -c 1 $f | LC_ALL=C grep -q '[ah\x80-\xff]'; then { printf '\2\7\362'; cat $f; } > $C/opener/$(basename $f); fi
done

# C2SP recipes: flags (key, context length, recipe bit), context, seed, how, length, where.
printf '\x80\x00\x00\x05\x40\x00\x00seed' > $C/c2sp/oneshot-128
printf '\x87ctx\x02\x10\xf1\x01\xff\x7f\x00\x00seed' > $C/c2sp/push-256-ctx
printf '\x81\x01\x07\x06\x00\x40\x10\x00seed' > $C/c2sp/stream-cut
printf '\x80\x00\x28\x00\x10\x10\x00seed' > $C/c2sp/flip
printf '\x81\x00\x0c\x33\x00\x01\x00tail' > $C/c2sp/extend
printf '\x00\x00' > $C/c2sp/raw-empty
echo "corpus: $(du -sh $C | cut -f1)"
