// The toolkit in Chromium (hash, hmac, kdf, aead, token over hyperseal_toolkit, which runs on
// RustCrypto on wasm32): Wycheproof vectors for every AEAD, HMAC, PBKDF2 and HKDF through the
// page, and digests, tags, derived keys and tokens compared with the native CLI (aws-lc) both ways.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, b64, REPO } from './harness.mjs'

let h
const vectors = (name) => JSON.parse(readFileSync(join(REPO, 'vectors/wycheproof', name), 'utf8'))

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

test('Wycheproof AEAD vectors open (valid) or fail with ERR_HYPERSEAL_AUTH (invalid), every algorithm', async () => {
  const files = {
    'aes_gcm_test.json': { 128: 'aes-128-gcm', 256: 'aes-256-gcm' },
    'aes_gcm_siv_test.json': { 256: 'aes-256-gcm-siv' },
    'chacha20_poly1305_test.json': { 256: 'chacha20-poly1305' },
    'xchacha20_poly1305_test.json': { 256: 'xchacha20-poly1305' },
    'sm4_ccm_test.json': { 128: 'sm4-ccm' },
  }
  const cases = []
  for (const [file, algs] of Object.entries(files)) {
    for (const g of vectors(file).testGroups) {
      const algo = algs[g.keySize]
      const nonce = algo === 'xchacha20-poly1305' ? 192 : 96
      if (!algo || g.ivSize !== nonce || g.tagSize !== 128) continue
      for (const t of g.tests) if (t.result !== 'acceptable') cases.push({ algo, id: t.tcId, key: t.key, sealed: t.iv + t.ct + t.tag, aad: t.aad, msg: t.msg, valid: t.result === 'valid' })
    }
  }
  const r = await h.inPage((hs, cases) => {
    const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16))
    const toHex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('')
    return cases.map((c) => {
      try { return toHex(hs.aead.open(c.algo, hex(c.key), hex(c.sealed), hex(c.aad))) } catch (e) { return e.code }
    })
  }, cases)
  assert.ok(cases.length > 900, `${cases.length} cases`)
  const algos = new Set(cases.map((c) => c.algo))
  assert.equal(algos.size, 6)
  cases.forEach((c, i) => assert.equal(r[i], c.valid ? c.msg : 'ERR_HYPERSEAL_AUTH', `${c.algo} tcId ${c.id}`))
})

test('Wycheproof HMAC (SHA-1, SHA-256, SHA-512, SHA3-256), PBKDF2 and HKDF vectors', async () => {
  const macs = []
  for (const [file, algo] of [['hmac_sha1_test.json', 'legacy-sha1'], ['hmac_sha256_test.json', 'sha256'], ['hmac_sha512_test.json', 'sha512'], ['hmac_sha3_256_test.json', 'sha3-256']]) {
    for (const g of vectors(file).testGroups) {
      // Full-length tags only: hmacVerify refuses truncated ones (they are a weaker MAC).
      if (g.tagSize !== { 'legacy-sha1': 160, sha256: 256, sha512: 512, 'sha3-256': 256 }[algo]) continue
      for (const t of g.tests) macs.push({ algo, id: t.tcId, key: t.key, msg: t.msg, tag: t.tag, valid: t.result === 'valid' })
    }
  }
  const pbkdf2 = vectors('pbkdf2_hmacsha256_test.json').testGroups.flatMap((g) => g.tests)
    .filter((t) => t.salt.length >= 16 && t.iterationCount <= 10000 && t.dkLen <= 1024 && t.result === 'valid')
  const hkdf = vectors('hkdf_sha256_test.json').testGroups.flatMap((g) => g.tests)
  const r = await h.inPage(async (hs, { macs, pbkdf2, hkdf }) => {
    const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16))
    const toHex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('')
    const code = (f) => { try { return toHex(f()) } catch (e) { return e.code } }
    return {
      macs: macs.map((m) => ({ verify: hs.hmacVerify(m.algo, hex(m.key), hex(m.msg), hex(m.tag)), tag: toHex(hs.hmac(m.algo, hex(m.key), hex(m.msg))) })),
      pbkdf2: await Promise.all(pbkdf2.map(async (t) => toHex(await hs.kdf.pbkdf2(hex(t.password), hex(t.salt), { iterations: t.iterationCount, length: t.dkLen })))),
      hkdf: hkdf.map((t) => code(() => hs.kdf.hkdf(hex(t.ikm), hex(t.salt), hex(t.info), t.size, 'sha256'))),
    }
  }, { macs, pbkdf2, hkdf })
  assert.ok(macs.length > 300 && pbkdf2.length > 5 && hkdf.length > 50, `${macs.length} ${pbkdf2.length} ${hkdf.length}`)
  macs.forEach((m, i) => {
    assert.equal(r.macs[i].verify, m.valid, `${m.algo} tcId ${m.id}`)
    if (m.valid) assert.equal(r.macs[i].tag, m.tag, `${m.algo} tcId ${m.id}`)
  })
  pbkdf2.forEach((t, i) => assert.equal(r.pbkdf2[i], t.dk, `pbkdf2 tcId ${t.tcId}`))
  hkdf.forEach((t, i) => assert.equal(r.hkdf[i], t.result === 'valid' ? t.okm : 'ERR_HYPERSEAL_ARGUMENT', `hkdf tcId ${t.tcId}`))
})

test('digests, HMAC tags and derived keys equal the native CLI\'s (every algorithm)', async () => {
  const data = randomBytes(1_000_003)
  writeFileSync(join(h.work, 'data'), data)
  const key = randomBytes(77)
  writeFileSync(join(h.work, 'mackey'), key)
  writeFileSync(join(h.work, 'pw'), 'correct horse\n')
  const hashes = ['sha256', 'sha384', 'sha512', 'sha3-256', 'sha3-512', 'blake2b512', 'blake3', 'sm3', 'legacy-md5', 'legacy-sha1']
  const macs = ['hmac-sha256', 'hmac-sha384', 'hmac-sha512', 'hmac-sha3-256', 'hmac-sha3-512', 'hmac-blake2b512', 'hmac-sm3', 'legacy-hmac-sha1', 'legacy-hmac-md5']
  const first = (out) => out.toString().trim().split(/\s+/)[0]
  const kdfs = [
    { cli: ['-a', 'pbkdf2-sha512', '--iterations', '1000', '-l', '48'], js: ['pbkdf2', { iterations: 1000, hash: 'sha512', length: 48 }] },
    { cli: ['-a', 'argon2id', '--m-cost', '256', '--t-cost', '2', '--p-cost', '2'], js: ['argon2id', { memoryKib: 256, timeCost: 2, parallelism: 2 }] },
    { cli: ['-a', 'scrypt', '--log-n', '10', '-r', '8', '-p', '2', '-l', '64'], js: ['scrypt', { N: 1024, r: 8, p: 2, length: 64 }] },
  ]
  const salt = '00112233445566778899aabbccddeeff'
  const want = {
    hashes: hashes.map((a) => first(cli(['hash', '-a', a, join(h.work, 'data')]))),
    macs: macs.map((a) => first(cli(['mac', '-a', a, '--key-file', join(h.work, 'mackey'), join(h.work, 'data')]))),
    kdfs: kdfs.map((k) => first(cli(['kdf', ...k.cli, '--salt', salt, '--password-file', join(h.work, 'pw')]))),
  }
  const got = await h.inPage(async (hs, { data, key, hashes, macs, kdfs, salt }) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    const hex = (s) => Uint8Array.from(s.match(/../g), (b) => parseInt(b, 16))
    const toHex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('')
    const d = bytes(data); const k = bytes(key)
    return {
      hashes: hashes.map((a) => toHex(hs.hash(a, d))),
      macs: macs.map((a) => toHex(hs.hmac(a, k, d))),
      kdfs: await Promise.all(kdfs.map(async (x) => toHex(await hs.kdf[x.js[0]]('correct horse', hex(salt), x.js[1])))),
    }
  }, { data: b64(data), key: b64(key), hashes, macs, kdfs, salt })
  assert.deepEqual(got, want)
})

test('tokens cross with the native CLI both ways; rotation, expiry, tampering, wrong aad, unknown keys', async () => {
  const keyFile = join(h.work, 'token.key')
  cli(['token', 'keygen', '-o', keyFile])
  const cliKey = readFileSync(keyFile, 'utf8').trim()
  const fromCli = cli(['token', 'seal', '--key', keyFile, '--aad', 'user-7'], 'from the CLI').toString().trim()
  const r = await h.inPage(async (hs, { cliKey, fromCli }) => {
    const code = (f) => { try { return new TextDecoder().decode(f()) } catch (e) { return e.code } }
    const fresh = hs.token.generateKey()
    const sealed = hs.token.seal(cliKey, 'from the page', { aad: 'user-9' })
    const short = hs.token.seal(fresh, 'short-lived', { ttlSeconds: 0.05 })
    const beforeExpiry = code(() => hs.token.open(fresh, short))
    await new Promise((resolve) => setTimeout(resolve, 120))
    const flipped = fromCli.slice(0, 30) + (fromCli[30] === 'A' ? 'B' : 'A') + fromCli.slice(31)
    return {
      sealed,
      keyShape: /^HYPERSEAL-TOKEN-KEY-1[A-Za-z0-9_-]{43}$/.test(fresh),
      opened: code(() => hs.token.open(cliKey, fromCli, { aad: 'user-7' })),
      rotated: code(() => hs.token.open([fresh, cliKey], fromCli, { aad: 'user-7' })),
      flat: code(() => hs.tokenOpen(cliKey, hs.tokenSeal(cliKey, 'flat', 'a', 60), 'a')),
      beforeExpiry,
      expired: code(() => hs.token.open(fresh, short)),
      wrongAad: code(() => hs.token.open(cliKey, fromCli, { aad: 'user-8' })),
      tampered: code(() => hs.token.open(cliKey, flipped, { aad: 'user-7' })),
      unknownKey: code(() => hs.token.open(fresh, fromCli, { aad: 'user-7' })),
      notAToken: code(() => hs.token.open(fresh, '!!!')),
      badKey: code(() => hs.token.seal('HYPERSEAL-TOKEN-KEY-1short', 'x')),
    }
  }, { cliKey, fromCli })
  const sealed = r.sealed
  delete r.sealed
  assert.deepEqual(r, {
    keyShape: true,
    opened: 'from the CLI',
    rotated: 'from the CLI',
    flat: 'flat',
    beforeExpiry: 'short-lived',
    expired: 'ERR_HYPERSEAL_TOKEN_EXPIRED',
    wrongAad: 'ERR_HYPERSEAL_AUTH',
    tampered: 'ERR_HYPERSEAL_AUTH',
    unknownKey: 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY',
    notAToken: 'ERR_HYPERSEAL_FORMAT',
    badKey: 'ERR_HYPERSEAL_KEY',
  })
  assert.equal(cli(['token', 'open', '--key', keyFile, '--aad', 'user-9'], sealed).toString(), 'from the page')
})

test('AEAD round trips for every algorithm, and bad keys, lengths and tampering with their codes', async () => {
  const r = await h.inPage((hs) => {
    const code = (f) => { try { f(); return 'no error' } catch (e) { return e.code } }
    const out = {}
    for (const algo of ['aes-128-gcm', 'aes-256-gcm', 'chacha20-poly1305', 'xchacha20-poly1305', 'aes-256-gcm-siv', 'sm4-ccm']) {
      const key = hs.aead.generateKey(algo)
      const sealed = hs.aead.seal(algo, key, 'message', 'aad')
      const flipped = sealed.slice(); flipped[flipped.length - 1] ^= 1
      out[algo] = {
        keyLen: key.length,
        back: new TextDecoder().decode(hs.aead.open(algo, key, sealed, 'aad')),
        twice: sealed.some((b, i) => b !== hs.aead.seal(algo, key, 'message', 'aad')[i]),
        tampered: code(() => hs.aead.open(algo, key, flipped, 'aad')),
        wrongAad: code(() => hs.aead.open(algo, key, sealed)),
        shortKey: code(() => hs.aead.seal(algo, key.subarray(1), 'x')),
      }
    }
    out.unknown = code(() => hs.aead.generateKey('aes-256-ocb'))
    out.shortSalt = code(() => hs.kdfHkdf('ikm', '', '', 0))
    return out
  })
  for (const algo of ['aes-128-gcm', 'aes-256-gcm', 'chacha20-poly1305', 'xchacha20-poly1305', 'aes-256-gcm-siv', 'sm4-ccm']) {
    assert.deepEqual(r[algo], {
      keyLen: ['aes-128-gcm', 'sm4-ccm'].includes(algo) ? 16 : 32,
      back: 'message',
      twice: true, // a fresh nonce each time
      tampered: 'ERR_HYPERSEAL_AUTH',
      wrongAad: 'ERR_HYPERSEAL_AUTH',
      shortKey: 'ERR_HYPERSEAL_KEY',
    }, algo)
  }
  assert.equal(r.unknown, 'ERR_HYPERSEAL_ARGUMENT')
  assert.equal(r.shortSalt, 'ERR_HYPERSEAL_ARGUMENT')
})

test('aead.sealInto writes what opens into the caller\'s array, a fresh nonce each call, and refuses a short array', async () => {
  const r = await h.inPage((hs) => {
    const code = (f) => { try { f(); return 'no error' } catch (e) { return e.code } }
    const key = hs.aead.generateKey('chacha20-poly1305')
    const msg = new Uint8Array(70000).map((_, i) => i)
    const out = new Uint8Array(12 + msg.length + 16 + 5).fill(0xee)
    const n = hs.aead.sealInto('chacha20-poly1305', key, msg, out, 'aad')
    const first = out.slice(0, n)
    const n2 = hs.aead.sealInto('chacha20-poly1305', key, msg, out, 'aad')
    const opened = hs.aead.open('chacha20-poly1305', key, first, 'aad')
    return {
      n,
      n2,
      opens: opened.length === msg.length && opened.every((b, i) => b === msg[i]),
      tailUntouched: out.subarray(n).every((b) => b === 0xee),
      freshNonce: out.subarray(0, 12).some((b, i) => b !== first[i]),
      short: code(() => hs.aead.sealInto('chacha20-poly1305', key, msg, new Uint8Array(msg.length + 27))),
    }
  })
  assert.deepEqual(r, { n: 70028, n2: 70028, opens: true, tailUntouched: true, freshNonce: true, short: 'ERR_HYPERSEAL_ARGUMENT' })
})
