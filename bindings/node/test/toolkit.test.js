'use strict'
// The toolkit bindings: interop with node:crypto where Node has the primitive, round trips and
// stable error codes everywhere else.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { hs, tmpdir, rejectsWith, throwsWith } = require('./helpers')

const data = crypto.randomBytes(3000)

test('hash equals node:crypto createHash', () => {
  const pairs = [
    ['sha256', 'sha256'], ['sha384', 'sha384'], ['sha512', 'sha512'], ['sha3-256', 'sha3-256'],
    ['sha3-512', 'sha3-512'], ['blake2b512', 'blake2b512'], ['legacy-md5', 'md5'], ['legacy-sha1', 'sha1'],
  ]
  for (const [ours, node] of pairs) {
    for (const input of [data, Buffer.alloc(0), 'héllo']) {
      assert.deepEqual(hs.hash(ours, input), crypto.createHash(node).update(input).digest(), ours)
    }
  }
  assert.equal(hs.hash('blake3', '').toString('hex'), 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262')
  assert.equal(hs.hash('sm3', 'abc').toString('hex'), '66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0')
})

test('hashFile matches hash, and reports coded errors', async () => {
  const dir = tmpdir()
  const f = path.join(dir, 'x.bin')
  const big = crypto.randomBytes(3 << 20)
  fs.writeFileSync(f, big)
  for (const algo of ['sha256', 'blake3', 'sha3-512']) {
    assert.deepEqual(await hs.hashFile(algo, f), hs.hash(algo, big), algo)
  }
  await rejectsWith(hs.hashFile('sha256', path.join(dir, 'missing')), 'ERR_HYPERSEAL_IO')
  await rejectsWith(hs.hashFile('nope', f), 'ERR_HYPERSEAL_ARGUMENT')
  fs.rmSync(dir, { recursive: true })
})

test('hmac equals createHmac; hmacVerify', () => {
  const key = crypto.randomBytes(40)
  for (const [ours, node] of [['sha256', 'sha256'], ['sha512', 'sha512'], ['sha3-256', 'sha3-256'], ['legacy-sha1', 'sha1'], ['legacy-md5', 'md5'], ['hmac-sha384', 'sha384']]) {
    const tag = hs.hmac(ours, key, data)
    assert.deepEqual(tag, crypto.createHmac(node, key).update(data).digest(), ours)
    assert.equal(hs.hmacVerify(ours, key, data, tag), true)
    const bad = Buffer.from(tag); bad[0] ^= 1
    assert.equal(hs.hmacVerify(ours, key, data, bad), false)
    assert.equal(hs.hmacVerify(ours, key, data, tag.subarray(0, 5)), false)
  }
  throwsWith(() => hs.hmac('md5', key, data), 'ERR_HYPERSEAL_ARGUMENT')
})

test('kdf: pbkdf2, scrypt, hkdf equal node:crypto; argon2id RFC 9106 shape', async () => {
  const pw = 'correct horse'
  const salt = crypto.randomBytes(16)
  assert.deepEqual(await hs.kdf.pbkdf2(pw, salt, { iterations: 1000, length: 48 }), crypto.pbkdf2Sync(pw, salt, 1000, 48, 'sha256'))
  assert.deepEqual(await hs.kdf.pbkdf2(pw, salt, { iterations: 500, hash: 'sha512' }), crypto.pbkdf2Sync(pw, salt, 500, 32, 'sha512'))
  assert.deepEqual(await hs.kdf.scrypt(pw, salt, { N: 1024, r: 8, p: 2, length: 64 }), crypto.scryptSync(pw, salt, 64, { N: 1024, r: 8, p: 2 }))
  assert.deepEqual(await hs.kdf.scrypt(pw, salt, { cost: 2048, blockSize: 4 }), crypto.scryptSync(pw, salt, 32, { N: 2048, r: 4, p: 1 }))
  const ikm = crypto.randomBytes(32)
  assert.deepEqual(hs.kdf.hkdf(ikm, salt, 'ctx', 42), Buffer.from(crypto.hkdfSync('sha256', ikm, salt, 'ctx', 42)))
  assert.deepEqual(hs.kdf.hkdf(ikm, '', '', 100, 'sha512'), Buffer.from(crypto.hkdfSync('sha512', ikm, Buffer.alloc(0), Buffer.alloc(0), 100)))
  const a = await hs.kdf.argon2id(pw, salt, { memoryKib: 1024, timeCost: 1, length: 24 })
  assert.equal(a.length, 24)
  assert.deepEqual(await hs.kdf.argon2id(pw, salt, { memoryKib: 1024, timeCost: 1, length: 24 }), a)
  assert.notDeepEqual(await hs.kdf.argon2id(pw + '!', salt, { memoryKib: 1024, timeCost: 1, length: 24 }), a)
  if (typeof crypto.argon2Sync === 'function') {
    assert.deepEqual(a, crypto.argon2Sync('argon2id', { message: pw, nonce: salt, parallelism: 1, tagLength: 24, memory: 1024, passes: 1 }))
  }
  await rejectsWith(hs.kdf.pbkdf2(pw, 'short', { iterations: 10 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.pbkdf2(pw, salt, { iterations: 0 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.pbkdf2(pw, salt, { hash: 'md5' }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.scrypt(pw, salt, { N: 1000 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.scrypt(pw, salt, { N: 1 << 30 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.argon2id(pw, salt, { memoryKib: 1 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.pbkdf2(pw, salt, { iterations: 10, length: 5000 }), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.pbkdf2(pw, salt, 'x'), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.kdf.hkdf(ikm, salt, '', 0), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.kdf.hkdf(ikm, salt, '', 255 * 32 + 1), 'ERR_HYPERSEAL_ARGUMENT')
})

test('aead: all algorithms round trip; AAD and tamper give ERR_HYPERSEAL_AUTH', () => {
  for (const algo of ['aes-128-gcm', 'aes-256-gcm', 'chacha20-poly1305', 'xchacha20-poly1305', 'aes-256-gcm-siv', 'sm4-ccm']) {
    const key = hs.aead.generateKey(algo)
    assert.equal(key.length, ['aes-128-gcm', 'sm4-ccm'].includes(algo) ? 16 : 32)
    const sealed = hs.aead.seal(algo, key, data, 'hdr')
    assert.equal(sealed.length, data.length + 16 + (algo === 'xchacha20-poly1305' ? 24 : 12))
    assert.deepEqual(hs.aead.open(algo, key, sealed, 'hdr'), data)
    assert.deepEqual(hs.aead.open(algo, key, hs.aead.seal(algo, key, '')), Buffer.alloc(0))
    throwsWith(() => hs.aead.open(algo, key, sealed), 'ERR_HYPERSEAL_AUTH')
    throwsWith(() => hs.aead.open(algo, key, sealed, 'hdX'), 'ERR_HYPERSEAL_AUTH')
    const bad = Buffer.from(sealed); bad[30] ^= 1
    throwsWith(() => hs.aead.open(algo, key, bad, 'hdr'), 'ERR_HYPERSEAL_AUTH')
    throwsWith(() => hs.aead.open(algo, key, sealed.subarray(0, 10), 'hdr'), 'ERR_HYPERSEAL_AUTH')
  }
  throwsWith(() => hs.aead.seal('aes-512-gcm', Buffer.alloc(32), 'x'), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.aead.seal('aes-256-gcm', Buffer.alloc(16), 'x'), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.aead.generateKey('rot13'), 'ERR_HYPERSEAL_ARGUMENT')
})

test('aead aes-256-gcm interop with node:crypto (nonce ‖ ciphertext ‖ tag)', () => {
  const key = crypto.randomBytes(32)
  const aad = Buffer.from('associated')
  // ours → Node
  const sealed = hs.aead.seal('aes-256-gcm', key, data, aad)
  const d = crypto.createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12))
  d.setAAD(aad)
  d.setAuthTag(sealed.subarray(sealed.length - 16))
  assert.deepEqual(Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]), data)
  // Node → ours
  const iv = crypto.randomBytes(12)
  const c = crypto.createCipheriv('aes-256-gcm', key, iv)
  c.setAAD(aad)
  const ct = Buffer.concat([c.update(data), c.final()])
  assert.deepEqual(hs.aead.open('aes-256-gcm', key, Buffer.concat([iv, ct, c.getAuthTag()]), aad), data)
  // chacha20-poly1305 too
  const s2 = hs.aead.seal('chacha20-poly1305', key, data)
  const d2 = crypto.createDecipheriv('chacha20-poly1305', key, s2.subarray(0, 12), { authTagLength: 16 })
  d2.setAuthTag(s2.subarray(s2.length - 16))
  assert.deepEqual(Buffer.concat([d2.update(s2.subarray(12, s2.length - 16)), d2.final()]), data)
})

test('without the native addon, hazmat and RSA-OAEP throw coded errors', { skip: hs.backend !== 'wasm' && 'the native addon has them' }, () => {
  throwsWith(() => hs.hazmat.encrypt('aes-256-cbc', crypto.randomBytes(32), crypto.randomBytes(16), data), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.hazmat.decrypt('aes-256-cbc', crypto.randomBytes(32), crypto.randomBytes(16), data), 'ERR_HYPERSEAL_ARGUMENT')
  assert.throws(() => hs.rsa.encrypt('pem', data), (e) => e.code === 'ERR_HYPERSEAL_KEY' && /not available in the WebAssembly build/.test(e.message))
  throwsWith(() => hs.rsa.decrypt('pem', data), 'ERR_HYPERSEAL_KEY')
})

test('hazmat (legacy, unauthenticated) equals createCipheriv', { skip: hs.backend === 'wasm' && 'hazmat needs the native addon (README.md)' }, () => {
  for (const [algo, klen] of [['aes-256-cbc', 32], ['aes-128-cbc', 16], ['aes-256-ctr', 32], ['aes-128-ctr', 16]]) {
    const key = crypto.randomBytes(klen)
    const iv = crypto.randomBytes(16)
    const ours = hs.hazmat.encrypt(algo, key, iv, data)
    const c = crypto.createCipheriv(algo, key, iv)
    assert.deepEqual(ours, Buffer.concat([c.update(data), c.final()]), algo)
    assert.deepEqual(hs.hazmat.decrypt(algo, key, iv, ours), data)
  }
  const key = crypto.randomBytes(32)
  const ecb = hs.hazmat.encrypt('aes-256-ecb', key, null, data)
  const c = crypto.createCipheriv('aes-256-ecb', key, null)
  assert.deepEqual(ecb, Buffer.concat([c.update(data), c.final()]))
  assert.deepEqual(hs.hazmat.decrypt('aes-256-ecb', key, undefined, ecb), data)
  const sm4 = hs.hazmat.encrypt('sm4-cbc', key.subarray(0, 16), key.subarray(16), data)
  assert.deepEqual(hs.hazmat.decrypt('sm4-cbc', key.subarray(0, 16), key.subarray(16), sm4), data)
  throwsWith(() => hs.hazmat.encrypt('aes-256-cbc', key, Buffer.alloc(8), data), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.hazmat.encrypt('aes-256-cbc', key, null, data), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.hazmat.encrypt('aes-256-ecb', key, Buffer.alloc(16), data), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.hazmat.encrypt('aes-256-cbc', Buffer.alloc(5), Buffer.alloc(16), data), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.hazmat.encrypt('des-cbc', key, Buffer.alloc(16), data), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.hazmat.decrypt('aes-256-cbc', key, Buffer.alloc(16), Buffer.alloc(15)), 'ERR_HYPERSEAL_AUTH')
})

test('sign: Ed25519 interop with node:crypto; ECDSA and ML-DSA round trip', () => {
  const kp = hs.sign.generateKeyPair('ed25519')
  assert.match(kp.privateKey, /^-----BEGIN PRIVATE KEY-----/)
  assert.match(kp.publicKey, /^-----BEGIN PUBLIC KEY-----/)
  assert.equal(hs.sign.publicKeyOf(kp.privateKey).trim(), kp.publicKey.trim())
  const sig = hs.sign.sign(kp.privateKey, data)
  assert.equal(crypto.verify(null, data, kp.publicKey, sig), true)
  // Ed25519 is deterministic. The fallback's private keys are PKCS#8 v2 (RFC 5958: the public
  // key included), which Node's OpenSSL 3.0 does not parse (README.md).
  if (hs.backend === 'native') assert.deepEqual(sig, crypto.sign(null, data, kp.privateKey))
  const node = crypto.generateKeyPairSync('ed25519', { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
  const nsig = crypto.sign(null, data, node.privateKey)
  assert.equal(hs.sign.verify(node.publicKey, data, nsig), true)
  assert.deepEqual(hs.sign.sign(node.privateKey, data), nsig)
  const bad = Buffer.from(nsig); bad[0] ^= 1
  assert.equal(hs.sign.verify(node.publicKey, data, bad), false)
  assert.equal(hs.sign.verify(node.publicKey, data, Buffer.alloc(3)), false)
  for (const kind of ['ecdsa-p256', 'ml-dsa-65']) {
    const k = hs.sign.generateKeyPair(kind)
    const s = hs.sign.sign(k.privateKey, 'msg')
    assert.equal(hs.sign.verify(k.publicKey, 'msg', s), true, kind)
    assert.equal(hs.sign.verify(k.publicKey, 'msG', s), false, kind)
    if (kind === 'ecdsa-p256') assert.equal(crypto.verify('sha256', Buffer.from('msg'), k.publicKey, s), true)
  }
  throwsWith(() => hs.sign.generateKeyPair('dsa'), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.sign.sign('not a pem', data), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.sign.sign(kp.publicKey, data), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.sign.verify('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', data, sig), 'ERR_HYPERSEAL_KEY')
})

test('rsa: PSS signatures and OAEP interop with node:crypto', { skip: hs.backend === 'wasm' && 'RSA needs the native addon (README.md)' }, () => {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
  const secret = crypto.randomBytes(32)
  const ct = hs.rsa.encrypt(publicKey, secret)
  assert.deepEqual(crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, ct), secret)
  const nct = crypto.publicEncrypt({ key: publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, secret)
  assert.deepEqual(hs.rsa.decrypt(privateKey, nct), secret)
  const bad = Buffer.from(nct); bad[5] ^= 1
  throwsWith(() => hs.rsa.decrypt(privateKey, bad), 'ERR_HYPERSEAL_AUTH')
  throwsWith(() => hs.rsa.encrypt(publicKey, Buffer.alloc(500)), 'ERR_HYPERSEAL_ARGUMENT')
  const s = hs.sign.sign(privateKey, data)
  assert.equal(crypto.verify('sha256', data, { key: publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, s), true)
  const p1 = hs.sign.sign(privateKey, data, 'pkcs1')
  assert.deepEqual(p1, crypto.sign('sha256', data, privateKey))
  assert.equal(hs.sign.verify(publicKey, data, p1, 'pkcs1'), true)
})

test('token: round trip, key rings, every error code', () => {
  const k1 = hs.token.generateKey()
  const k2 = hs.token.generateKey()
  assert.match(k1, /^HYPERSEAL-TOKEN-KEY-1[A-Za-z0-9_-]{43}$/)
  const t = hs.token.seal(k1, data, { aad: 'user:42', ttlSeconds: 60 })
  assert.match(t, /^[A-Za-z0-9_-]+$/)
  assert.deepEqual(hs.token.open(k1, t, { aad: 'user:42' }), data)
  assert.deepEqual(hs.token.open([k2, k1], t, { aad: Buffer.from('user:42') }), data)
  assert.deepEqual(hs.token.open(`# ring\n${k2}\n${k1}\n`, t, { aad: 'user:42' }), data)
  assert.deepEqual(hs.token.open(k1, hs.token.seal(k1, 'plain')).toString(), 'plain')
  assert.deepEqual(hs.tokenOpen(k1, hs.tokenSeal(k1, '')), Buffer.alloc(0))
  assert.deepEqual(hs.tokenOpen([k1], hs.tokenSeal(k1, 'p', 'aad', 30), 'aad').toString(), 'p')
  // ring text seals with its first key
  assert.deepEqual(hs.token.open(k2, hs.token.seal(`${k2}\n${k1}`, 'x')).toString(), 'x')

  throwsWith(() => hs.token.open(k2, t, { aad: 'user:42' }), 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY')
  throwsWith(() => hs.token.open(k1, t, { aad: 'user:43' }), 'ERR_HYPERSEAL_AUTH')
  throwsWith(() => hs.token.open(k1, t), 'ERR_HYPERSEAL_AUTH')
  const at = Math.floor(t.length / 2)
  const tampered = t.slice(0, at) + (t[at] === 'A' ? 'B' : 'A') + t.slice(at + 1)
  throwsWith(() => hs.token.open(k1, tampered, { aad: 'user:42' }), 'ERR_HYPERSEAL_AUTH')
  throwsWith(() => hs.token.open(k1, 'not a token!', {}), 'ERR_HYPERSEAL_FORMAT')
  throwsWith(() => hs.token.open(k1, 'AQ', {}), 'ERR_HYPERSEAL_FORMAT')
  throwsWith(() => hs.token.open(k1, ''), 'ERR_HYPERSEAL_FORMAT')
  const expired = hs.token.seal(k1, 'old', { ttlSeconds: 0.001 })
  const until = Date.now() + 20
  while (Date.now() < until) { /* spin 20 ms */ }
  throwsWith(() => hs.token.open(k1, expired), 'ERR_HYPERSEAL_TOKEN_EXPIRED')

  throwsWith(() => hs.token.seal('HYPERSEAL-TOKEN-KEY-1short', 'x'), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.token.seal('nonsense', 'x'), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.token.seal('', 'x'), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.token.open([], t), 'ERR_HYPERSEAL_KEY')
  throwsWith(() => hs.token.seal(k1, 'x', { ttlSeconds: -1 }), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.token.seal(k1, 'x', { ttlSeconds: NaN }), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.token.seal(k1, 'x', 5), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.token.seal(42, 'x'), 'ERR_HYPERSEAL_ARGUMENT')
  throwsWith(() => hs.token.open(k1, 42), 'ERR_HYPERSEAL_ARGUMENT')
})

test('token: the key cache survives more distinct keys than it holds', () => {
  const keys = Array.from({ length: 40 }, () => hs.token.generateKey())
  const toks = keys.map((k, i) => hs.token.seal(k, `m${i}`))
  keys.forEach((k, i) => assert.equal(hs.token.open(k, toks[i]).toString(), `m${i}`))
})

test('batchEncrypt / batchDecrypt keep input order (small and parallel sizes)', async () => {
  const key = hs.aead.generateKey('aes-256-gcm')
  for (const [n, size] of [[0, 0], [50, 100], [300, 4096]]) {
    const msgs = Array.from({ length: n }, (_, i) => Buffer.alloc(size + (i % 7), i & 0xff))
    const sealed = await hs.batchEncrypt('aes-256-gcm', key, msgs)
    assert.equal(sealed.length, n)
    sealed.slice(0, 5).forEach((s, i) => assert.deepEqual(hs.aead.open('aes-256-gcm', key, s), msgs[i]))
    const opened = await hs.batchDecrypt('aes-256-gcm', key, sealed)
    assert.deepEqual(opened, msgs)
  }
  const sealed = await hs.batchEncrypt('xchacha20-poly1305', hs.aead.generateKey('xchacha20-poly1305'), ['a', 'b'])
  assert.equal(sealed.length, 2)
  const ok = await hs.batchEncrypt('aes-256-gcm', key, ['a', 'b', 'c'])
  ok[1] = Buffer.from(ok[1]); ok[1][0] ^= 1
  await rejectsWith(hs.batchDecrypt('aes-256-gcm', key, ok), 'ERR_HYPERSEAL_AUTH')
  await rejectsWith(hs.batchEncrypt('aes-256-gcm', Buffer.alloc(3), ['a']), 'ERR_HYPERSEAL_KEY')
  await rejectsWith(hs.batchEncrypt('nope', key, ['a']), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.batchEncrypt('aes-256-gcm', key, 'not an array'), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.batchEncrypt('aes-256-gcm', key, [1, 2]), 'ERR_HYPERSEAL_ARGUMENT')
})

test('bad argument types give ERR_HYPERSEAL_ARGUMENT, never a crash', async () => {
  const calls = [
    () => hs.hash(), () => hs.hash('sha256'), () => hs.hash('sha256', 42), () => hs.hash(null, 'x'),
    () => hs.hmac('sha256', null, 'x'), () => hs.hmacVerify('sha256', 'k', 'x', 'tag'),
    () => hs.aead.seal('aes-256-gcm', 'string key', 'x'), () => hs.aead.open('aes-256-gcm', Buffer.alloc(32), 'x'),
    () => hs.hazmat.encrypt('aes-256-cbc', {}, null, 'x'), () => hs.sign.sign(null, 'x'),
    () => hs.sign.verify('k', 'x', null), () => hs.kdf.hkdf('a', 'b', 'c', -1),
    () => hs.kdf.hkdf('a', 'b', 'c', 'ten'), () => hs.token.open(null, 'x'),
  ]
  for (const f of calls) throwsWith(f, 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.hashFile(), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.scrypt(null, 'saltsalt'), 'ERR_HYPERSEAL_ARGUMENT')
  await rejectsWith(hs.kdf.argon2id('pw', 'saltsalt', { memoryKib: -5 }), 'ERR_HYPERSEAL_ARGUMENT')
})

test('ESM entry exposes the toolkit namespaces', async () => {
  const m = await import('../index.mjs')
  for (const n of ['hash', 'hashFile', 'hmac', 'hmacVerify', 'batchEncrypt', 'batchDecrypt']) assert.equal(typeof m[n], 'function', n)
  for (const n of ['kdf', 'aead', 'hazmat', 'sign', 'rsa', 'token']) assert.equal(typeof m[n], 'object', n)
  assert.equal(m.token.seal, hs.token.seal)
})
