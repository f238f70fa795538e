'use strict'
// Every bad input gets its stable code, and none of them crashes the process.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const path = require('node:path')
const fs = require('node:fs')
const { pipeline } = require('node:stream/promises')
const { Readable, Writable } = require('node:stream')
const { hs, tmpdir, rejectsWith, throwsWith } = require('./helpers')

const key = hs.generateKeyPair()
const other = hs.generateKeyPair()
const x = hs.generateKeyPair({ kind: 'x25519' })
const sealed = hs.encryptByPublicKey(crypto.randomBytes(200000), key.publicKey)

/** Runs one bad call through the sync and async twins. */
async function both (data, k, code, dir = 'decrypt') {
  if (dir === 'decrypt') {
    throwsWith(() => hs.decryptByPrivateKey(data, k), code)
    await rejectsWith(hs.decryptByPrivateKeyAsync(data, k), code)
  } else {
    throwsWith(() => hs.encryptByPublicKey(data, k), code)
    await rejectsWith(hs.encryptByPublicKeyAsync(data, k), code)
  }
}

test('ERROR_CODES lists the stable codes', () => {
  assert.deepEqual([...hs.ERROR_CODES].sort(), [
    'ERR_HYPERSEAL_ARGUMENT', 'ERR_HYPERSEAL_AUTH', 'ERR_HYPERSEAL_FORMAT',
    'ERR_HYPERSEAL_IO', 'ERR_HYPERSEAL_KEY', 'ERR_HYPERSEAL_LIMIT', 'ERR_HYPERSEAL_NO_IDENTITY',
    'ERR_HYPERSEAL_TOKEN_EXPIRED', 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY',
  ])
})

test('ERR_HYPERSEAL_AUTH: flipped payload byte, flipped header MAC, truncation, trailing data', async () => {
  const flip = (i) => { const c = Buffer.from(sealed); c[i] ^= 1; return c }
  await both(flip(sealed.length - 1), key.privateKey, 'ERR_HYPERSEAL_AUTH')
  await both(flip(sealed.length - 70000), key.privateKey, 'ERR_HYPERSEAL_AUTH')
  // Change one MAC character to another valid base64 character (a bit flip could make the
  // base64 itself invalid, which is a format error, not an authentication failure).
  const macAt = sealed.indexOf('\n---') + 6
  const badMac = Buffer.from(sealed)
  badMac[macAt] = badMac[macAt] === 0x41 ? 0x42 : 0x41
  await both(badMac, key.privateKey, 'ERR_HYPERSEAL_AUTH')
  await both(sealed.subarray(0, sealed.length - 1), key.privateKey, 'ERR_HYPERSEAL_AUTH')
  // Cut at a chunk boundary: the new last chunk was sealed as "not last".
  const cut = sealed.length - ((200000 % 65536) + 16)
  await both(sealed.subarray(0, cut), key.privateKey, 'ERR_HYPERSEAL_AUTH')
  await both(Buffer.concat([sealed, Buffer.from([0])]), key.privateKey, 'ERR_HYPERSEAL_AUTH')
})

test('ERR_HYPERSEAL_NO_IDENTITY: the wrong key', async () => {
  await both(sealed, other.privateKey, 'ERR_HYPERSEAL_NO_IDENTITY')
  await both(sealed, x.privateKey, 'ERR_HYPERSEAL_NO_IDENTITY')
})

test('ERR_HYPERSEAL_FORMAT: empty, garbage, unknown version, truncated header', async () => {
  await both(Buffer.alloc(0), key.privateKey, 'ERR_HYPERSEAL_FORMAT')
  await both('', key.privateKey, 'ERR_HYPERSEAL_FORMAT')
  await both(crypto.randomBytes(1000), key.privateKey, 'ERR_HYPERSEAL_FORMAT')
  await both(Buffer.from('hyperseal/v9\n'), key.privateKey, 'ERR_HYPERSEAL_FORMAT')
  await both(sealed.subarray(0, 40), key.privateKey, 'ERR_HYPERSEAL_FORMAT')
})

test('ERR_HYPERSEAL_KEY: garbage keys, empty keys, mixed post-quantum and classic', async () => {
  for (const bad of ['', 'garbage', 'age1qqqq', key.privateKey, '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----']) {
    await both('data', bad, 'ERR_HYPERSEAL_KEY', 'encrypt')
  }
  await both('data', [key.publicKey, x.publicKey], 'ERR_HYPERSEAL_KEY', 'encrypt')
  for (const bad of ['', 'garbage', 'AGE-SECRET-KEY-1QQQ', key.publicKey]) {
    await both(sealed, bad, 'ERR_HYPERSEAL_KEY')
  }
  throwsWith(() => hs.publicKeyOf('nope'), 'ERR_HYPERSEAL_KEY')
})

test('ERR_HYPERSEAL_ARGUMENT: wrong types and bad options', async () => {
  for (const bad of [undefined, null, 42, {}, [1, 2], true]) {
    await both(bad, key.publicKey, 'ERR_HYPERSEAL_ARGUMENT', 'encrypt')
    await both(bad, key.privateKey, 'ERR_HYPERSEAL_ARGUMENT')
  }
  for (const bad of [undefined, null, 42, {}, [1], []]) {
    await both('data', bad, 'ERR_HYPERSEAL_ARGUMENT', 'encrypt')
  }
  await both(sealed, 42, 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.generateKeyPair({ kind: 'dsa' }), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.generateKeyPair({ kind: 7 }), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.createEncryptStream(), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.createDecryptStream({}), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.encryptFile('a', 'b'), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.encryptFile(1, 'b', { publicKey: key.publicKey }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.decryptFile('a', 'b', { privateKey: key.privateKey, onProgress: 5 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.decryptFile('a', 'b', { privateKey: key.privateKey, force: 'yes' }), 'ERR_HYPERSEAL_ARGUMENT')
})

test('ERR_HYPERSEAL_IO: missing input, directory, unwritable destination, same file', async () => {
  const dir = tmpdir()
  const f = path.join(dir, 'f')
  fs.writeFileSync(f, 'x')
  await rejectsWith(hs.encryptFile(path.join(dir, 'missing'), path.join(dir, 'o'), { publicKey: key.publicKey }), 'ERR_HYPERSEAL_IO')
  await rejectsWith(hs.encryptFile(dir, path.join(dir, 'o'), { publicKey: key.publicKey }), 'ERR_HYPERSEAL_IO')
  await rejectsWith(hs.encryptFile(f, path.join(dir, 'no/such/dir/o'), { publicKey: key.publicKey }), 'ERR_HYPERSEAL_IO')
  await rejectsWith(hs.encryptFile(f, f, { publicKey: key.publicKey, force: true }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.decryptFile(f, path.join(dir, 'o'), { privateKey: key.privateKey }), 'ERR_HYPERSEAL_FORMAT')
  assert.deepEqual(fs.readdirSync(dir).sort(), ['f'])
  fs.rmSync(dir, { recursive: true })
})

test('a throwing onProgress does not crash the process', async () => {
  const dir = tmpdir()
  const f = path.join(dir, 'f')
  fs.writeFileSync(f, crypto.randomBytes(5 << 20))
  const warnings = []
  const onWarning = (w) => warnings.push(w)
  process.on('warning', onWarning)
  await hs.encryptFile(f, f + '.hs', { publicKey: key.publicKey, onProgress () { throw new Error('boom') } })
  await new Promise((resolve) => setTimeout(resolve, 50))
  process.off('warning', onWarning)
  assert.ok(warnings.length > 0)
  fs.rmSync(dir, { recursive: true })
})

async function runStream (data, stream) {
  await pipeline(Readable.from([data]), stream, new Writable({ write (c, e, cb) { cb() } }))
}

test('streams: tampered, truncated, wrong key, garbage and armored inputs fail with codes', async () => {
  const dec = () => hs.createDecryptStream({ privateKey: key.privateKey })
  const c = Buffer.from(sealed)
  c[c.length - 100] ^= 1
  await rejectsWith(runStream(c, dec()), 'ERR_HYPERSEAL_AUTH')
  await rejectsWith(runStream(sealed.subarray(0, sealed.length - 5), dec()), 'ERR_HYPERSEAL_AUTH')
  await rejectsWith(runStream(sealed.subarray(0, 100000), dec()), 'ERR_HYPERSEAL_AUTH')
  await rejectsWith(runStream(sealed, hs.createDecryptStream({ privateKey: other.privateKey })), 'ERR_HYPERSEAL_NO_IDENTITY')
  // Garbage, also starting as armor may ('-', whitespace): "not a file", never "too long".
  for (const first of [undefined, 0x2d, 0x20, 0x0a]) {
    const garbage = crypto.randomBytes(5000)
    if (first !== undefined) garbage[0] = first
    await rejectsWith(runStream(garbage, dec()), 'ERR_HYPERSEAL_FORMAT')
  }
  await rejectsWith(runStream(Buffer.from('-----BEGIN AGE ENCRYPTED FILE-----\n'), dec()), 'ERR_HYPERSEAL_FORMAT')
  await rejectsWith(runStream(sealed.subarray(0, 30), dec()), 'ERR_HYPERSEAL_FORMAT')
  throwsWith(() => hs.createEncryptStream({ publicKey: 'garbage' }), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.createDecryptStream({ privateKey: 'garbage' }), 'ERR_HYPERSEAL_KEY')
})
