'use strict'
// `{ sops: true }`: sops files made by the real sops 3.13.3 (`make sops`, in ../../.tools/bin)
// re-keyed through rekeyTree, rekeyFile and rekey, and judged by the real sops: the new key
// alone opens each file to the same plaintext, the removed key opens none, and every line
// outside the age entries is as it was. The WebAssembly fallback has no sops support and says
// so.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { hs, tmpdir, rejectsWith, throwsWith } = require('./helpers')

const TOOLS = path.resolve(__dirname, '../../../.tools/bin')
const SOPS = path.join(TOOLS, 'sops')
const NATIVE = hs.backend === 'native'
const skip = !fs.existsSync(SOPS) ? 'the real sops is not built (make sops)' : false

/** An age key made by age-keygen (`-pq`: ML-KEM-768 + X25519): its file and recipient. */
function keygen (dir, name, pq) {
  const file = path.join(dir, `${name}.txt`)
  execFileSync(path.join(TOOLS, 'age-keygen'), [...(pq ? ['-pq'] : []), '-o', file], { stdio: 'ignore' })
  const recipient = execFileSync(path.join(TOOLS, 'age-keygen'), ['-y', file]).toString().trim()
  return { file, recipient, secret: fs.readFileSync(file, 'utf8') }
}

/** The real sops in `cwd`, with only `keyFile` to open files with. */
function sops (cwd, keyFile, args) {
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(cwd, 'no-config') }
  delete env.SOPS_AGE_KEY
  if (keyFile) env.SOPS_AGE_KEY_FILE = keyFile
  else delete env.SOPS_AGE_KEY_FILE
  return spawnSync(SOPS, args, { cwd, env })
}

const rules = (dir, recipients) =>
  fs.writeFileSync(path.join(dir, '.sops.yaml'), `creation_rules:\n  - path_regex: \\.(yaml|json|env)$\n    age: ${recipients.join(',')}\n`)

const PLAIN = {
  'app.yaml': '# settings\npassword: p1 # keep me\nport: 8080\n',
  'sub/cfg.json': '{"user": "u2", "token": "t2"}',
  'sub/db.env': 'DB_USER=u3\nDB_PASS=p3\n'
}

/** Lines that are not part of an age entry (recipient, enc and its armor). */
const outsideAge = (text) => text.split('\n').filter((l) => {
  const t = l.trim()
  const armor = t.length > 0 && t.length <= 64 && /^[A-Za-z0-9+/=]+$/.test(t)
  return !(/recipient|"enc"|- enc: \||AGE ENCRYPTED FILE|__map_enc/.test(t) || armor)
})

/** A folder of sops files for `keep` and `gone`, and a file that is not a sops file. */
function repo (keys) {
  const dir = tmpdir()
  fs.mkdirSync(path.join(dir, 'sub'))
  rules(dir, [keys.keep.recipient, keys.gone.recipient])
  for (const [rel, text] of Object.entries(PLAIN)) {
    fs.writeFileSync(path.join(dir, rel), text)
    const o = sops(dir, null, ['-e', '-i', rel])
    assert.equal(o.status, 0, `sops -e ${rel}: ${o.stderr}`)
  }
  fs.writeFileSync(path.join(dir, 'README.md'), 'not a secret\n')
  return dir
}

function keys () {
  const dir = tmpdir()
  return { dir, keep: keygen(dir, 'keep'), gone: keygen(dir, 'gone'), pq: keygen(dir, 'pq', true) }
}

test('rekeyTree with sops: a folder moves to its new .sops.yaml, and the real sops agrees', { skip: skip || (!NATIVE && 'the native addon walks folders') }, async () => {
  const k = keys()
  const dir = repo(k)
  const before = Object.fromEntries(Object.keys(PLAIN).map((rel) => [rel, fs.readFileSync(path.join(dir, rel), 'utf8')]))
  const plain = Object.fromEntries(Object.keys(PLAIN).map((rel) => [rel, sops(dir, k.gone.file, ['-d', rel]).stdout.toString()]))
  rules(dir, [k.keep.recipient, k.pq.recipient])
  const calls = []
  const r = await hs.rekeyTree(dir, k.keep.secret, { sops: true, onProgress: (d, t) => calls.push([d, t]) })
  assert.deepEqual(
    { rewritten: r.summary.rewritten, unchanged: r.summary.unchanged, skipped: r.summary.skipped, failed: r.summary.failed },
    { rewritten: 3, unchanged: 0, skipped: 1, failed: 0 }, JSON.stringify(r.files))
  const readme = r.files.find((f) => f.path.endsWith('README.md'))
  assert.equal(readme.outcome, 'skipped')
  assert.match(readme.reason, /not a sops file/)
  for (const rel of Object.keys(PLAIN)) {
    const f = r.files.find((x) => x.path.endsWith(rel))
    assert.equal(f.outcome, 'rewritten', rel)
    assert.deepEqual([f.plan.added, f.plan.removed], [1, 1], rel)
    const now = fs.readFileSync(path.join(dir, rel), 'utf8')
    assert.ok(now.includes(k.pq.recipient) && !now.includes(k.gone.recipient), rel)
    assert.deepEqual(outsideAge(now), outsideAge(before[rel]), `${rel}: only age entries change`)
    const opened = sops(dir, k.pq.file, ['-d', rel])
    assert.equal(opened.status, 0, `${rel}: ${opened.stderr}`)
    assert.equal(opened.stdout.toString(), plain[rel], rel)
    assert.match(plain[rel], /p1|t2|p3/)
    assert.notEqual(sops(dir, k.gone.file, ['-d', rel]).status, 0, `${rel} still opens with the removed key`)
  }
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(calls.at(-1), [4, 4])
  const again = await hs.rekeyTree(dir, k.keep.secret, { sops: true })
  assert.equal(again.summary.unchanged, 3)
  assert.equal(again.summary.rewritten, 0)
})

test('rekeyFile with sops: explicit recipients, the lock-out guard, and rotate', { skip: skip || (!NATIVE && 'the WebAssembly build has no sops') }, async () => {
  const k = keys()
  const dir = repo(k)
  const file = path.join(dir, 'app.yaml')
  const old = fs.readFileSync(file)
  // Only the post-quantum key afterwards: nothing given here opens it, so refused unless removeOwn.
  await rejectsWith(hs.rekeyFile(file, k.keep.secret, { sops: true, recipients: [k.pq.recipient] }), 'ERR_HYPERSEAL_ARGUMENT')
  assert.deepEqual(fs.readFileSync(file), old, 'a refused file is untouched')
  const dry = await hs.rekeyFile(file, k.keep.secret, { sops: true, recipients: [k.pq.recipient], removeOwn: true, dryRun: true })
  assert.deepEqual([dry.added, dry.removed], [1, 2])
  assert.deepEqual(fs.readFileSync(file), old, 'a dry run writes nothing')
  const r = await hs.rekeyFile(file, k.keep.secret, { sops: true, recipients: [k.pq.recipient], removeOwn: true })
  assert.deepEqual([r.added, r.removed, r.inPlace], [1, 2, false])
  assert.equal(sops(dir, k.pq.file, ['-d', 'app.yaml']).status, 0)
  assert.notEqual(sops(dir, k.keep.file, ['-d', 'app.yaml']).status, 0)
  // A file that is not a sops file, given by name, fails.
  await rejectsWith(hs.rekeyFile(path.join(dir, 'README.md'), k.keep.secret, { sops: true, add: k.pq.recipient }), 'ERR_HYPERSEAL_ARGUMENT')

  // rotate: a fresh data key; sops opens the result to the same values.
  const env = path.join(dir, 'sub/db.env')
  const before = fs.readFileSync(env, 'utf8')
  await hs.rekeyFile(env, k.keep.secret, { sops: true, rotate: true })
  const now = fs.readFileSync(env, 'utf8')
  const value = (t) => t.match(/^DB_PASS=(.*)$/m)[1]
  assert.notEqual(value(now), value(before), 'rotate seals every value again')
  const o = sops(path.join(dir, 'sub'), k.keep.file, ['-d', 'db.env'])
  assert.equal(o.status, 0, o.stderr.toString())
  assert.match(o.stdout.toString(), /DB_PASS=p3/)
})

test('rekey with sops: bytes in memory, in the format given', { skip }, () => {
  const k = keys()
  const dir = repo(k)
  const bytes = fs.readFileSync(path.join(dir, 'sub/cfg.json'))
  if (!NATIVE) {
    throwsWith(() => hs.rekey(bytes, k.keep.secret, { sops: true, format: 'json', add: k.pq.recipient }), 'ERR_HYPERSEAL_ARGUMENT')
    return
  }
  throwsWith(() => hs.rekey(bytes, k.keep.secret, { sops: true, add: k.pq.recipient }), 'ERR_HYPERSEAL_ARGUMENT')
  const out = hs.rekey(bytes, k.keep.secret, { sops: true, format: 'json', add: k.pq.recipient, remove: k.gone.recipient })
  fs.writeFileSync(path.join(dir, 'sub/new.json'), out)
  const o = sops(dir, k.pq.file, ['-d', 'sub/new.json'])
  assert.equal(o.status, 0, o.stderr.toString())
  assert.deepEqual(JSON.parse(o.stdout), JSON.parse(PLAIN['sub/cfg.json']))
  assert.notEqual(sops(dir, k.gone.file, ['-d', 'sub/new.json']).status, 0)
  // Already the target: the same bytes back.
  assert.deepEqual(hs.rekey(out, k.pq.secret, { sops: true, format: 'json', add: k.pq.recipient }), out)
})

test('the WebAssembly fallback refuses sops files with a clear error', { skip: NATIVE && 'the native addon has sops' }, async () => {
  const dir = tmpdir()
  const file = path.join(dir, 's.yaml')
  fs.writeFileSync(file, 'a: 1\n')
  const key = hs.generateKeyPair({ kind: 'x25519' })
  await assert.rejects(hs.rekeyFile(file, key.privateKey, { sops: true, add: key.publicKey }), (e) => e.code === 'ERR_HYPERSEAL_ARGUMENT' && /sops/.test(e.message))
  await assert.rejects(hs.rekeyTree(dir, key.privateKey, { sops: true }), (e) => e.code === 'ERR_HYPERSEAL_ARGUMENT')
  assert.throws(() => hs.rekey(Buffer.from('a: 1\n'), key.privateKey, { sops: true, format: 'yaml', add: key.publicKey }), (e) => /sops/.test(e.message))
})
