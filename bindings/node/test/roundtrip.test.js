'use strict'
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { pipeline } = require('node:stream/promises')
const { Readable, Writable } = require('node:stream')
const { hs, KINDS, keyOrNull, tmpdir } = require('./helpers')

const CHUNK = 64 << 10
// Lengths around the chunk boundary, as in age's tests.
const SIZES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 500, (2 << 20) + 17]

for (const kind of KINDS) {
  test(`generateKeyPair ${kind}: round trips sync and async`, async (t) => {
    const key = keyOrNull(kind)
    if (!key) return t.skip(`${kind}: not available in this build (backend ${hs.backend})`)
    assert.equal(typeof key.publicKey, 'string')
    assert.equal(typeof key.privateKey, 'string')
    assert.equal(hs.publicKeyOf(key.privateKey).trim(), key.publicKey.trim())
    const data = crypto.randomBytes(1000)
    const sealed = hs.encryptByPublicKey(data, key.publicKey)
    assert.deepEqual(hs.decryptByPrivateKey(sealed, key.privateKey), data)
    const sealedAsync = await hs.encryptByPublicKeyAsync(data, key.publicKey)
    assert.deepEqual(await hs.decryptByPrivateKeyAsync(sealedAsync, key.privateKey), data)
  })
}

test('default kind is hybrid (post-quantum)', () => {
  const key = hs.generateKeyPair()
  assert.match(key.publicKey, /^age1pq1/)
  assert.match(key.privateKey, /^AGE-SECRET-KEY-PQ-1/)
  // age1 + 58 bech32 characters (which may well start with p): X25519, not age1pq1's 1,900.
  assert.match(hs.generateKeyPair({ kind: 'x25519' }).publicKey, /^age1[02-9ac-hj-np-z]{58}$/)
})

test('sync and async round trips across chunk boundaries', async () => {
  const key = hs.generateKeyPair()
  for (const n of SIZES) {
    const data = crypto.randomBytes(n)
    const a = hs.encryptByPublicKey(data, key.publicKey)
    const b = await hs.encryptByPublicKeyAsync(data, key.publicKey)
    assert.notDeepEqual(a, b, 'fresh file key per call')
    assert.deepEqual(hs.decryptByPrivateKey(b, key.privateKey), data, `sync ${n}`)
    assert.deepEqual(await hs.decryptByPrivateKeyAsync(a, key.privateKey), data, `async ${n}`)
  }
})

test('strings, Uint8Array and Buffer inputs', async () => {
  const key = hs.generateKeyPair({ kind: 'x25519' })
  const text = 'héllo wörld ✓'
  assert.equal(hs.decryptByPrivateKey(hs.encryptByPublicKey(text, key.publicKey), key.privateKey).toString(), text)
  const u8 = new Uint8Array([1, 2, 3, 4])
  assert.deepEqual([...hs.decryptByPrivateKey(hs.encryptByPublicKey(u8, key.publicKey), key.privateKey)], [1, 2, 3, 4])
  const ct = await hs.encryptByPublicKeyAsync(text, key.publicKey)
  assert.equal((await hs.decryptByPrivateKeyAsync(new Uint8Array(ct), key.privateKey)).toString(), text)
  // A view into a larger buffer: only the view is encrypted.
  const big = Buffer.from('xxabcxx')
  const view = big.subarray(2, 5)
  assert.equal(hs.decryptByPrivateKey(hs.encryptByPublicKey(view, key.publicKey), key.privateKey).toString(), 'abc')
})

test('several recipients: each can decrypt', () => {
  const a = hs.generateKeyPair()
  const b = hs.generateKeyPair()
  const ct = hs.encryptByPublicKey('to both', [a.publicKey, b.publicKey])
  assert.equal(hs.decryptByPrivateKey(ct, a.privateKey).toString(), 'to both')
  assert.equal(hs.decryptByPrivateKey(ct, b.privateKey).toString(), 'to both')
  // An identity file as the CLI writes it (comments + key line) works as a private key too.
  const file = `# created: 0\n# public key: ${b.publicKey}\n${b.privateKey}\n`
  assert.equal(hs.decryptByPrivateKey(ct, file).toString(), 'to both')
})

test('expansion is small: header + 16 bytes per 64 KiB chunk', () => {
  const key = hs.generateKeyPair({ kind: 'x25519' })
  const n = 10 << 20
  const ct = hs.encryptByPublicKey(Buffer.alloc(n), key.publicKey)
  const overhead = ct.length - n
  assert.ok(overhead < 400 + 16 * (n / CHUNK + 1), `overhead ${overhead}`)
})

test('encryptFile / decryptFile round trip with progress', async () => {
  const dir = tmpdir()
  const key = hs.generateKeyPair()
  const src = path.join(dir, 'plain.bin')
  const enc = path.join(dir, 'plain.bin.hs')
  const out = path.join(dir, 'plain.out')
  const data = crypto.randomBytes((9 << 20) + 123)
  fs.writeFileSync(src, data)
  const seen = []
  const n = await hs.encryptFile(src, enc, { publicKey: key.publicKey, onProgress: (p) => seen.push(p) })
  assert.equal(n, data.length)
  const m = await hs.decryptFile(enc, out, { privateKey: key.privateKey, onProgress: (p) => seen.push(p) })
  assert.equal(m, data.length)
  assert.deepEqual(fs.readFileSync(out), data)
  await new Promise((resolve) => setTimeout(resolve, 50)) // progress calls are queued separately
  assert.ok(seen.length >= 4, `progress events: ${seen.length}`)
  for (const p of seen) {
    assert.ok(p.bytes >= 0 && p.bytes <= p.total && p.percentage >= 0 && p.percentage <= 100, JSON.stringify(p))
  }
  assert.ok(seen.some((p) => p.percentage === 100))
  // The buffer API reads what the file API wrote, and the reverse.
  assert.deepEqual(hs.decryptByPrivateKey(fs.readFileSync(enc), key.privateKey), data)
  fs.writeFileSync(enc, hs.encryptByPublicKey(data.subarray(0, 1000), key.publicKey))
  await hs.decryptFile(enc, out, { privateKey: key.privateKey, force: true })
  assert.deepEqual(fs.readFileSync(out), data.subarray(0, 1000))
  fs.rmSync(dir, { recursive: true })
})

test('files: never overwrite without force; failures leave the destination untouched', async () => {
  const dir = tmpdir()
  const key = hs.generateKeyPair({ kind: 'x25519' })
  const src = path.join(dir, 'a')
  const enc = path.join(dir, 'a.hs')
  const dst = path.join(dir, 'existing')
  fs.writeFileSync(src, crypto.randomBytes(300000))
  fs.writeFileSync(dst, 'keep me')
  await hs.encryptFile(src, enc, { publicKey: key.publicKey })
  await assert.rejects(hs.decryptFile(enc, dst, { privateKey: key.privateKey }), { code: 'ERR_HYPERSEAL_IO' })
  assert.equal(fs.readFileSync(dst, 'utf8'), 'keep me')
  await assert.rejects(hs.encryptFile(src, enc, { publicKey: key.publicKey }), { code: 'ERR_HYPERSEAL_IO' })
  // Tamper with the last byte: decryption fails even with force, and nothing is replaced.
  const ct = fs.readFileSync(enc)
  ct[ct.length - 1] ^= 1
  fs.writeFileSync(enc, ct)
  await assert.rejects(hs.decryptFile(enc, dst, { privateKey: key.privateKey, force: true }), { code: 'ERR_HYPERSEAL_AUTH' })
  assert.equal(fs.readFileSync(dst, 'utf8'), 'keep me')
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('partial')), [], 'no temp files left')
  ct[ct.length - 1] ^= 1
  fs.writeFileSync(enc, ct)
  await hs.decryptFile(enc, dst, { privateKey: key.privateKey, force: true })
  assert.deepEqual(fs.readFileSync(dst), fs.readFileSync(src))
  fs.rmSync(dir, { recursive: true })
})

function source (data, piece) {
  let at = 0
  return new Readable({
    read () {
      if (at >= data.length) return this.push(null)
      this.push(data.subarray(at, at + piece))
      at += piece
    },
  })
}

async function collect (stream) {
  const parts = []
  await pipeline(stream, new Writable({ write (c, e, cb) { parts.push(c); cb() } }))
  return Buffer.concat(parts)
}

test('streams round trip, any write size, interoperable with the buffer API', async () => {
  const key = hs.generateKeyPair()
  for (const n of SIZES) {
    for (const piece of [1000, CHUNK, 3 * CHUNK + 7]) {
      const data = crypto.randomBytes(n)
      const ct = await collect(source(data, piece).pipe(hs.createEncryptStream({ publicKey: key.publicKey })))
      assert.deepEqual(hs.decryptByPrivateKey(ct, key.privateKey), data, `enc stream ${n}/${piece}`)
      const ct2 = hs.encryptByPublicKey(data, key.publicKey)
      const pt = await collect(source(ct2, piece).pipe(hs.createDecryptStream({ privateKey: key.privateKey })))
      assert.deepEqual(pt, data, `dec stream ${n}/${piece}`)
    }
  }
})

test('ESM entry re-exports the API', async () => {
  const esm = await import('../index.mjs')
  assert.equal(typeof esm.encryptByPublicKeyAsync, 'function')
  assert.equal(typeof esm.createDecryptStream, 'function')
  assert.equal(esm.default.generateKeyPair, hs.generateKeyPair)
})

// Large results live in recycled memory (src/pool.rs): a result still referenced from JS must
// never be reused, and a recycled buffer must carry exactly the new result.
test('large results: recycled memory never touches a live buffer', async () => {
  // Node's --expose-gc, given on the command line (package.json, the Makefile): V8 documents
  // flags changed at run time (v8.setFlagsFromString) as undefined behaviour.
  assert.equal(typeof globalThis.gc, 'function', 'run the tests with node --expose-gc (npm test and make test do)')
  const gc = globalThis.gc
  const key = hs.generateKeyPair({ kind: 'x25519' })
  const size = 9 << 20
  const kept = []
  for (let i = 0; i < 6; i++) {
    const pt = crypto.randomBytes(size)
    const ct = await hs.encryptByPublicKeyAsync(pt, key.publicKey)
    const back = await hs.decryptByPrivateKeyAsync(ct, key.privateKey)
    assert.ok(back.equals(pt), `round ${i}`)
    assert.equal(back.length, size)
    if (i % 2 === 0) kept.push([pt, ct]) // stays referenced; the others become garbage
    gc()
    await new Promise((resolve) => setImmediate(resolve)) // let finalizers return memory
  }
  for (const [pt, ct] of kept) assert.ok(hs.decryptByPrivateKey(ct, key.privateKey).equals(pt))
})

// A bench's 16 MB decrypt loop once died of SIGBUS while it switched on --expose-gc from inside
// the process. The library maps no file (inputs are read with read(2)) and hands JS only heap
// memory (src/pool.rs), so nothing of it can fault that way; V8 documents changing its flags
// after start-up as undefined behaviour. No script of the package does it any more.
test('no bench or test script changes V8 flags at run time', () => {
  const fs = require('node:fs')
  const path = require('node:path')
  for (const dir of ['bench', 'test']) {
    const at = path.join(__dirname, '..', dir)
    for (const name of fs.readdirSync(at).filter((n) => /\.m?js$/.test(n))) {
      assert.doesNotMatch(fs.readFileSync(path.join(at, name), 'utf8'), /setFlagsFromString\s*\(/, `${dir}/${name}`)
    }
  }
})
