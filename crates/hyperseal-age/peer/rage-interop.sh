#!/usr/bin/env bash
# rage 0.12.1, built unchanged against hyperseal-age through [patch.crates-io] (mk/age-crate.mk),
# against the real age v1.3.1, both ways: X25519, age1pq1 (the real rage cannot do these: that
# they work shows the patch took), SSH, tag recipients (age's test plugin holds the keys), armor.
# Passphrases too: both tools read them from the terminal, so they run on a pseudo-terminal
# (the CLI tests' pty_run.py types the answers at each prompt).
# Usage: rage-interop.sh RAGE_BIN_DIR TOOLS_BIN_DIR HYPERSEAL_TEST_DATA PTY_RUN
set -euo pipefail
rage_bin=$1 tools=$2 data=$3 pty_run=$4
export PATH="$tools:$PATH"
rage="$rage_bin/rage" age="$tools/age"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
head -c 200000 /dev/urandom > "$dir/plain"
checks=0

# Encrypts with one tool and decrypts with the other, both ways, armored and not.
# $1: name; $2: rage's encrypt flags; $3: age's decrypt flags; $4: age's encrypt flags; $5: rage's decrypt flags
both() {
  local name=$1 armor
  for armor in "" "-a"; do
    $rage -e $armor $2 -o "$dir/r.age" "$dir/plain"
    $age -d $3 -o "$dir/r.out" "$dir/r.age"
    cmp -s "$dir/plain" "$dir/r.out" || { echo "FAIL rage -> age: $name $armor"; exit 1; }
    $age -e $armor $4 -o "$dir/a.age" "$dir/plain"
    $rage -d $5 -o "$dir/a.out" "$dir/a.age"
    cmp -s "$dir/plain" "$dir/a.out" || { echo "FAIL age -> rage: $name $armor"; exit 1; }
    rm -f "$dir"/r.age "$dir"/r.out "$dir"/a.age "$dir"/a.out
    checks=$((checks + 4))
  done
  echo "ok: $name"
}

"$rage_bin/rage-keygen" -o "$dir/x25519.txt" 2>/dev/null
x=$(grep -o 'age1[0-9a-z]*' "$dir/x25519.txt" | head -1)
both "X25519 (rage-keygen)" "-r $x" "-i $dir/x25519.txt" "-r $x" "-i $dir/x25519.txt"

"$tools/age-keygen" -pq -o "$dir/pq.txt" 2>/dev/null
pq=$("$tools/age-keygen" -y "$dir/pq.txt")
both "age1pq1 (age-keygen -pq)" "-r $pq" "-i $dir/pq.txt" "-r $pq" "-i $dir/pq.txt"

ssh-keygen -q -t ed25519 -N "" -f "$dir/id_ed25519"
both "SSH ed25519" "-R $dir/id_ed25519.pub" "-i $dir/id_ed25519" "-R $dir/id_ed25519.pub" "-i $dir/id_ed25519"

tag=age1tag1qwe0kafsjrar4txm6heqnhpfuggzr0gvznz7fvygxrlq90u5mq2pysxtw6h
both "age1tag1 (age-plugin-tagtest)" "-r $tag" "-j tagtest" "-r $tag" "-i $data/age_tagtest_identities.txt"
tagpq=$(tr -d '[:space:]' < "$data/age_tagtest_hybrid_recipient.txt")
both "age1tagpq1 (age-plugin-tagtest)" "-r $tagpq" "-j tagtest" "-r $tagpq" "-i $data/age_tagtest_identities.txt"

# One command on a pseudo-terminal, typing $1 at each of $2 prompts; fails unless it succeeds.
at_terminal() {
  local pass=$1 prompts=$2; shift 2
  local argv typed
  argv=$(printf '%s\n' "$@" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().split("\n")[:-1]))')
  typed=$(python3 -c 'import json,sys; print(json.dumps([sys.argv[1]] * int(sys.argv[2])))' "$pass" "$prompts")
  echo "{\"argv\": $argv, \"cwd\": \"$dir\", \"type\": $typed, \"timeout\": 120}" | python3 "$pty_run" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); sys.exit(0 if r["status"] == 0 else print(r["stderr"], r["tty"]) or 1)'
}
pass="correct horse battery staple"
at_terminal "$pass" 2 $rage -e -p -o "$dir/r.age" "$dir/plain"
at_terminal "$pass" 1 $age -d -o "$dir/r.out" "$dir/r.age"
cmp -s "$dir/plain" "$dir/r.out" || { echo "FAIL rage -> age: passphrase"; exit 1; }
at_terminal "$pass" 2 $age -e -p -o "$dir/a.age" "$dir/plain"
at_terminal "$pass" 1 $rage -d -o "$dir/a.out" "$dir/a.age"
cmp -s "$dir/plain" "$dir/a.out" || { echo "FAIL age -> rage: passphrase"; exit 1; }
checks=$((checks + 2))
echo "ok: passphrase (scrypt)"

echo "rage 0.12.1 on hyperseal-age with age v1.3.1: $checks checks passed"
