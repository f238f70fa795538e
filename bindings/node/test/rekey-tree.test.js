'use strict'
// rekeyTree: every file of a tree re-keyed by one call (the library's tree re-key). Files for
// the identity get the new recipient with their plaintext unchanged; the others are skipped and
// left byte for byte; progress counts up to the total; a dry run writes nothing; a second run
// of the same change finds every file done in the manifest. The WebAssembly fallback has no
// tree walk and rejects.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { execFileSync } = require('node:child_process')
const { hs, tmpdir, cliBin, rejectsWith } = require('./helpers')

const x = () => hs.generateKeyPair({ kind: 'x25519' })
const [a, b, c] = [x(), x(), x()]
const NATIVE = hs.backend === 'native'
const skip = !NATIVE && 'rekeyTree needs the native addon (README.md)'

/**
 * root/one.hs, root/sub/two.hs, root/sub/deep/three.hs for A; root/notes.txt not encrypted;
 * root/sub/other.hs for C. Returns the root and each file's path, plaintext and bytes.
 */
function tree () {
  const root = tmpdir()
  fs.mkdirSync(path.join(root, 'sub', 'deep'), { recursive: true })
  const files = {}
  const put = (rel, bytes, plain) => {
    const p = path.join(root, rel)
    fs.writeFileSync(p, bytes)
    files[rel] = { p, plain, bytes }
  }
  for (const rel of ['one.hs', 'sub/two.hs', 'sub/deep/three.hs']) {
    const plain = crypto.randomBytes(70000 + rel.length)
    put(rel, hs.encryptByPublicKey(plain, a.publicKey), plain)
  }
  put('notes.txt', Buffer.from('not encrypted\n'), null)
  const other = crypto.randomBytes(1000)
  put('sub/other.hs', hs.encryptByPublicKey(other, c.publicKey), other)
  return { root, files }
}

const FOR_A = ['one.hs', 'sub/two.hs', 'sub/deep/three.hs']
const OTHERS = ['notes.txt', 'sub/other.hs']

/** The report's files by their path relative to `root`. */
function byName (root, report) {
  return Object.fromEntries(report.files.map((f) => [path.relative(root, f.path), f]))
}

function unchanged (files, names) {
  for (const n of names) assert.ok(fs.readFileSync(files[n].p).equals(files[n].bytes), `${n} changed`)
}

/** onProgress's calls, and a promise of the one that reaches the total (calls are queued to
 * the event loop, so it may come just after the promise settles). */
function progressLog () {
  const calls = []
  let finished
  const last = new Promise((resolve) => { finished = resolve })
  const onProgress = (done, total) => {
    calls.push([done, total])
    if (done === total) finished()
  }
  const timeout = (ms) => Promise.race([last, new Promise((resolve, reject) => setTimeout(() => reject(new Error(`no final progress call in ${ms} ms: ${JSON.stringify(calls)}`)), ms).unref())])
  return { calls, onProgress, last: () => timeout(5000) }
}

test('rekeyTree adds a recipient to every file the identity opens; the others are skipped, untouched', { skip }, async () => {
  const { root, files } = tree()
  const progress = progressLog()
  const r = await hs.rekeyTree(root, a.privateKey, { add: b.publicKey, onProgress: progress.onProgress })
  const got = byName(root, r)
  assert.deepEqual(Object.keys(got).sort(), [...FOR_A, ...OTHERS].sort())
  for (const n of FOR_A) {
    // One more stanza does not fit the old header: the file is written anew.
    assert.equal(got[n].outcome, 'rewritten', `${n}: ${JSON.stringify(got[n])}`)
    assert.deepEqual(got[n].plan, { before: ['X25519'], after: ['X25519', 'X25519'], removed: 0, added: 1 })
    assert.equal(got[n].error, undefined)
    const now = fs.readFileSync(files[n].p)
    assert.ok(hs.decryptByPrivateKey(now, b.privateKey).equals(files[n].plain), `${n}: B opens it`)
    assert.ok(hs.decryptByPrivateKey(now, a.privateKey).equals(files[n].plain), `${n}: A still opens it`)
  }
  assert.equal(got['notes.txt'].outcome, 'skipped')
  assert.match(got['notes.txt'].reason, /not a hyperseal or age file/)
  assert.equal(got['sub/other.hs'].outcome, 'skipped')
  assert.match(got['sub/other.hs'].reason, /none of the identities opens it/)
  unchanged(files, OTHERS)
  assert.deepEqual(r.summary, { inPlace: 0, rewritten: 3, alreadyDone: 0, skipped: 2, failed: 0 })
  // Progress: one call per file, counting up to the total.
  await progress.last()
  assert.deepEqual(progress.calls, [1, 2, 3, 4, 5].map((n) => [n, 5]))
  // The default manifest sits in the folder: a second run of the same change finds every file
  // done (its header verified) and writes nothing.
  assert.ok(fs.existsSync(path.join(root, '.hyperseal-rekey.manifest')))
  const after = Object.fromEntries(FOR_A.map((n) => [n, fs.readFileSync(files[n].p)]))
  const again = await hs.rekeyTree([root], [a.privateKey], { add: [b.publicKey] })
  const got2 = byName(root, again)
  for (const n of FOR_A) {
    assert.equal(got2[n].outcome, 'already_done')
    assert.equal(got2[n].plan, undefined)
    assert.ok(fs.readFileSync(files[n].p).equals(after[n]), `${n} written again`)
  }
  assert.deepEqual(again.summary, { inPlace: 0, rewritten: 0, alreadyDone: 3, skipped: 2, failed: 0 })
  // Another change over the same manifest is refused as a whole, before any file.
  await rejectsWith(hs.rekeyTree(root, a.privateKey, { add: c.publicKey }), 'ERR_HYPERSEAL_ARGUMENT')
  for (const n of FOR_A) assert.ok(fs.readFileSync(files[n].p).equals(after[n]))
})

test('dryRun plans every file and changes nothing, not even a manifest', { skip }, async () => {
  const { root, files } = tree()
  const listing = fs.readdirSync(root, { recursive: true }).sort()
  const progress = progressLog()
  const r = await hs.rekeyTree(root, a.privateKey, { recipients: [b.publicKey], removeOwn: true, dryRun: true, onProgress: progress.onProgress })
  const got = byName(root, r)
  for (const n of FOR_A) {
    assert.equal(got[n].outcome, 'planned')
    assert.deepEqual(got[n].plan, { before: ['X25519'], after: ['X25519'], removed: 1, added: 1 })
  }
  assert.deepEqual(r.summary, { inPlace: 3, rewritten: 0, alreadyDone: 0, skipped: 2, failed: 0 })
  unchanged(files, [...FOR_A, ...OTHERS])
  assert.deepEqual(fs.readdirSync(root, { recursive: true }).sort(), listing)
  await progress.last()
  assert.deepEqual(progress.calls.at(-1), [5, 5])
})

test('the walk options: include/exclude, recursive: false, a manifest elsewhere; a header that fits is rewritten in place', { skip }, async () => {
  const { root, files } = tree()
  const only = await hs.rekeyTree(root, a.privateKey, { add: b.publicKey, include: '*.hs', exclude: ['sub/deep/**'], dryRun: true })
  assert.deepEqual(only.files.map((f) => path.relative(root, f.path)).sort(), ['one.hs', 'sub/other.hs', 'sub/two.hs'])
  const flat = await hs.rekeyTree([files['one.hs'].p, path.join(root, 'sub')], a.privateKey, { add: b.publicKey, recursive: false, dryRun: true })
  assert.deepEqual(flat.files.map((f) => [path.relative(root, f.path), f.outcome]), [['one.hs', 'planned'], ['sub', 'skipped']])
  // One X25519 stanza for another: the new header fits the old one's length.
  const manifest = path.join(tmpdir(), 'run.manifest')
  const r = await hs.rekeyTree(root, a.privateKey, { recipients: b.publicKey, removeOwn: true, manifest })
  assert.deepEqual(r.summary, { inPlace: 3, rewritten: 0, alreadyDone: 0, skipped: 2, failed: 0 })
  for (const n of FOR_A) {
    assert.equal(byName(root, r)[n].outcome, 'in_place')
    const now = fs.readFileSync(files[n].p)
    assert.equal(now.length, files[n].bytes.length)
    assert.ok(hs.decryptByPrivateKey(now, b.privateKey).equals(files[n].plain))
    assert.throws(() => hs.decryptByPrivateKey(now, a.privateKey), (e) => e.code === 'ERR_HYPERSEAL_NO_IDENTITY')
  }
  assert.ok(fs.readFileSync(manifest, 'utf8').startsWith('hyperseal-rekey-manifest v2\n'))
  assert.ok(!fs.existsSync(path.join(root, '.hyperseal-rekey.manifest')))
  unchanged(files, OTHERS)
})

test('a damaged file fails with its code and is left as it was; the call still resolves', { skip }, async () => {
  const { root, files } = tree()
  // The header's MAC no longer matches: A unwraps the file key, the MAC check fails.
  const bad = Buffer.from(files['sub/two.hs'].bytes)
  const mac = bad.indexOf('\n--- ') + 5
  bad[mac] = bad[mac] === 0x41 ? 0x42 : 0x41
  fs.writeFileSync(files['sub/two.hs'].p, bad)
  const r = await hs.rekeyTree(root, a.privateKey, { add: b.publicKey })
  const f = byName(root, r)['sub/two.hs']
  assert.equal(f.outcome, 'failed')
  assert.ok(f.error instanceof Error)
  assert.equal(f.error.code, 'ERR_HYPERSEAL_AUTH', f.error.message)
  assert.ok(fs.readFileSync(files['sub/two.hs'].p).equals(bad))
  assert.deepEqual(r.summary, { inPlace: 0, rewritten: 2, alreadyDone: 0, skipped: 2, failed: 1 })
})

test('bad calls reject with their codes and touch nothing', { skip }, async () => {
  const { root, files } = tree()
  await rejectsWith(hs.rekeyTree(path.join(root, 'missing'), a.privateKey, { add: b.publicKey }), 'ERR_HYPERSEAL_IO')
  await rejectsWith(hs.rekeyTree([], a.privateKey, { add: b.publicKey }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.rekeyTree(root, a.privateKey, { add: 'not a key' }), 'ERR_HYPERSEAL_KEY')
  await rejectsWith(hs.rekeyTree(root, null, { add: b.publicKey }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.rekeyTree(root, a.privateKey, { add: b.publicKey, output: path.join(root, 'x') }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.rekeyTree(root, a.privateKey, { add: b.publicKey, onProgress: 7 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.rekeyTree(root, a.privateKey), 'ERR_HYPERSEAL_ARGUMENT')
  // Leaving out the caller's own key fails every file it opens (removeOwn allows it).
  const r = await hs.rekeyTree(root, a.privateKey, { recipients: c.publicKey })
  assert.deepEqual(r.summary, { inPlace: 0, rewritten: 0, alreadyDone: 0, skipped: 2, failed: 3 })
  for (const f of r.files.filter((f) => f.outcome === 'failed')) assert.equal(f.error.code, 'ERR_HYPERSEAL_ARGUMENT')
  unchanged(files, [...FOR_A, ...OTHERS])
})

test('a throwing onProgress becomes a warning; the run completes', { skip }, async () => {
  const { root } = tree()
  const warned = new Promise((resolve) => process.once('warning', resolve))
  const r = await hs.rekeyTree(root, a.privateKey, { add: b.publicKey, onProgress: () => { throw new Error('progress broke') } })
  assert.equal(r.summary.rewritten, 3)
  assert.match((await warned).message, /progress broke/)
})

test('a manifest the CLI wrote for the same change is this call\'s: its files are already done', { skip: skip || (!cliBin() && 'no CLI build') }, async () => {
  const { root, files } = tree()
  const key = path.join(tmpdir(), 'a.key')
  fs.writeFileSync(key, a.privateKey + '\n')
  execFileSync(cliBin(), ['rekey', '-q', '--recursive', '-i', key, '--add', b.publicKey, root], { stdio: 'pipe' })
  for (const n of FOR_A) assert.ok(hs.decryptByPrivateKey(fs.readFileSync(files[n].p), b.privateKey).equals(files[n].plain))
  const r = await hs.rekeyTree(root, a.privateKey, { add: b.publicKey })
  assert.deepEqual(r.summary, { inPlace: 0, rewritten: 0, alreadyDone: 3, skipped: 2, failed: 0 })
})

test('the WebAssembly fallback rejects rekeyTree: it needs the native addon', { skip: NATIVE && 'runs on the fallback' }, async () => {
  const { root, files } = tree()
  await assert.rejects(hs.rekeyTree(root, a.privateKey, { add: b.publicKey }), (e) => {
    assert.equal(e.code, 'ERR_HYPERSEAL_ARGUMENT')
    assert.match(e.message, /rekeyTree .*needs the native addon/)
    return true
  })
  unchanged(files, [...FOR_A, ...OTHERS])
})
