'use strict'
// encryptFile / decryptFile keep the library's nothing-lost rules (hyperseal::output): a failed
// run leaves no file at all, an existing file needs `force`, devices and FIFOs are written
// through and never replaced.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { execFileSync } = require('node:child_process')
const { hs, tmpdir, rejectsWith } = require('./helpers')

const key = hs.generateKeyPair({ kind: 'x25519' })

/** A directory with `plain` (3 chunks and a bit) and its encryption `plain.hs`. */
async function fixture () {
  const dir = tmpdir()
  const plain = path.join(dir, 'plain')
  fs.writeFileSync(plain, crypto.randomBytes(3 * 65536 + 1000))
  await hs.encryptFile(plain, plain + '.hs', { publicKey: key.publicKey })
  return { dir, plain, sealed: plain + '.hs' }
}

const listing = (dir) => fs.readdirSync(dir).sort()

test('a failed decryptFile leaves no file, not even a hidden partial one', async () => {
  const { dir, sealed } = await fixture()
  // Damage the last chunk: the first three decrypt and are written before the failure.
  const bytes = fs.readFileSync(sealed)
  bytes[bytes.length - 5] ^= 1
  const damaged = path.join(dir, 'damaged.hs')
  fs.writeFileSync(damaged, bytes)
  const before = listing(dir)
  await rejectsWith(hs.decryptFile(damaged, path.join(dir, 'out'), { privateKey: key.privateKey }), 'ERR_HYPERSEAL_AUTH')
  // Cut short: the final chunk is missing.
  const cut = path.join(dir, 'cut.hs')
  fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 2000))
  await rejectsWith(hs.decryptFile(cut, path.join(dir, 'out'), { privateKey: key.privateKey }), 'ERR_HYPERSEAL_AUTH')
  // The wrong key.
  const other = hs.generateKeyPair({ kind: 'x25519' })
  await rejectsWith(hs.decryptFile(sealed, path.join(dir, 'out'), { privateKey: other.privateKey }), 'ERR_HYPERSEAL_NO_IDENTITY')
  assert.deepEqual(listing(dir), [...before, 'cut.hs'].sort())
})

test('a failed forced decryptFile leaves the existing file as it was', async () => {
  const { dir, sealed } = await fixture()
  const bytes = fs.readFileSync(sealed)
  bytes[bytes.length - 5] ^= 1
  fs.writeFileSync(sealed, bytes)
  const out = path.join(dir, 'out')
  fs.writeFileSync(out, 'precious')
  const before = listing(dir)
  await rejectsWith(hs.decryptFile(sealed, out, { privateKey: key.privateKey, force: true }), 'ERR_HYPERSEAL_AUTH')
  assert.equal(fs.readFileSync(out, 'utf8'), 'precious')
  assert.deepEqual(listing(dir), before)
})

test('an existing destination needs force; errors name it', async () => {
  const { dir, plain, sealed } = await fixture()
  await assert.rejects(hs.encryptFile(plain, sealed, { publicKey: key.publicKey }), (e) => {
    assert.equal(e.code, 'ERR_HYPERSEAL_IO')
    assert.match(e.message, /already exists \(pass force: true/)
    assert.ok(e.message.includes(sealed), e.message)
    return true
  })
  await rejectsWith(hs.encryptFile(plain, dir, { publicKey: key.publicKey, force: true }), 'ERR_HYPERSEAL_IO')
  await assert.rejects(hs.encryptFile(plain, dir, { publicKey: key.publicKey, force: true }), / is a directory$/)
  await rejectsWith(hs.encryptFile(plain, plain, { publicKey: key.publicKey, force: true }), 'ERR_HYPERSEAL_ARGUMENT')
  await hs.encryptFile(plain, sealed, { publicKey: key.publicKey, force: true })
  assert.deepEqual(listing(dir), ['plain', 'plain.hs'])
})

test('a FIFO is written through without force and stays a FIFO', async () => {
  const { dir, plain, sealed } = await fixture()
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const chunks = []
  const read = new Promise((resolve, reject) => {
    fs.createReadStream(fifo).on('data', (c) => chunks.push(c)).on('end', resolve).on('error', reject)
  })
  const n = await hs.decryptFile(sealed, fifo, { privateKey: key.privateKey })
  await read
  assert.equal(n, fs.statSync(plain).size)
  assert.ok(Buffer.concat(chunks).equals(fs.readFileSync(plain)))
  assert.ok(fs.lstatSync(fifo).isFIFO())
  assert.deepEqual(listing(dir), ['fifo', 'plain', 'plain.hs'])
})

test('a device node is written through, never replaced (root only: mknod)', async (t) => {
  if (process.getuid() !== 0) return t.skip('mknod needs root')
  const { dir, plain } = await fixture()
  const dev = path.join(dir, 'null') // char 1,3: the same device as /dev/null, in our own dir
  execFileSync('mknod', [dev, 'c', '1', '3'])
  await hs.encryptFile(plain, dev, { publicKey: key.publicKey, force: true })
  assert.ok(fs.lstatSync(dev).isCharacterDevice())
  assert.deepEqual(listing(dir), ['null', 'plain', 'plain.hs'])
})

test('a decryptFile killed half-way (SIGKILL, SIGTERM) leaves no file', async () => {
  const dir = tmpdir()
  const plain = path.join(dir, 'plain')
  fs.writeFileSync(plain, crypto.randomBytes(48 << 20))
  await hs.encryptFile(plain, plain + '.hs', { publicKey: key.publicKey })
  fs.rmSync(plain)
  const { spawn } = require('node:child_process')
  // The child says "go" at its first progress report, i.e. with output already written.
  const script = `
    const hs = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    let said = false
    hs.decryptFile(process.argv[1], process.argv[2], { privateKey: process.argv[3], threads: 1,
      onProgress () { if (!said) { said = true; process.stdout.write('go\\n') } } })
      .then(() => process.stdout.write('done\\n'))`
  for (const signal of ['SIGKILL', 'SIGTERM']) {
    const child = spawn(process.execPath, ['-e', script, plain + '.hs', path.join(dir, 'out'), key.privateKey])
    const first = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d))))
    assert.equal(first.trim(), 'go')
    child.kill(signal)
    const [, sig] = await new Promise((resolve) => child.on('exit', (...a) => resolve(a)))
    assert.equal(sig, signal, 'killed before it finished')
    assert.deepEqual(listing(dir), ['plain.hs'], `${signal} left a file`)
  }
})

test('a new output file is private to its owner (0600), on the addon and on the fallback', { skip: process.platform === 'win32' && 'no Unix modes' }, async () => {
  const dir = tmpdir()
  const src = path.join(dir, 'plain.txt')
  fs.writeFileSync(src, 'secret plaintext\n')
  const old = process.umask(0o022)
  try {
    await hs.encryptFile(src, path.join(dir, 'c.hs'), { publicKey: key.publicKey })
    await hs.decryptFile(path.join(dir, 'c.hs'), path.join(dir, 'back.txt'), { privateKey: key.privateKey })
  } finally {
    process.umask(old)
  }
  for (const f of ['c.hs', 'back.txt']) {
    assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f)
  }
})

test('a replaced output is private too (0600), on the addon and on the fallback', { skip: process.platform === 'win32' && 'no Unix modes' }, async () => {
  const dir = tmpdir()
  const src = path.join(dir, 'plain.txt')
  fs.writeFileSync(src, 'secret plaintext\n')
  const [sealed, back] = [path.join(dir, 'c.hs'), path.join(dir, 'back.txt')]
  for (const f of [sealed, back]) {
    fs.writeFileSync(f, 'an older, world-readable file\n')
    fs.chmodSync(f, 0o644)
  }
  await hs.encryptFile(src, sealed, { publicKey: key.publicKey, force: true })
  await hs.decryptFile(sealed, back, { privateKey: key.privateKey, force: true })
  assert.equal(fs.readFileSync(back, 'utf8'), 'secret plaintext\n')
  for (const f of [sealed, back]) {
    assert.equal(fs.statSync(f).mode & 0o777, 0o600, `${path.basename(f)} kept the old file's 0644`)
  }
})
