// Signatures in Chromium (Ed25519, ECDSA P-256, ML-DSA-65 on the toolkit's portable RustCrypto
// backend): keys and signatures made in the page verify with the native CLI (aws-lc) and the
// reverse, Wycheproof vectors for Ed25519 and ECDSA P-256 through the page, and every kind of
// damage rejected.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, b64, unb64, REPO } from './harness.mjs'

let h
const KINDS = ['ed25519', 'ecdsa-p256', 'ml-dsa-65']
const vectors = (name) => JSON.parse(readFileSync(join(REPO, 'vectors/wycheproof', name), 'utf8'))
const cliVerifies = (pub, sig, data) => {
  const [p, s, d] = ['pub.pem', 'sig.bin', 'data.bin'].map((n) => join(h.work, n))
  writeFileSync(p, pub); writeFileSync(s, sig); writeFileSync(d, data)
  try { cli(['verify', '--pubkey', p, '--sig', s, d]); return true } catch { return false }
}

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

test('keys and signatures made in the page verify with the CLI; tampering is rejected', async () => {
  const data = randomBytes(3000)
  const made = await h.inPage((hs, { kinds, data }) => {
    const msg = Uint8Array.from(atob(data), (c) => c.charCodeAt(0))
    return kinds.map((kind) => {
      const pair = hs.sign.generateKeyPair(kind)
      const sig = hs.sign.sign(pair.privateKey, msg)
      return { ...pair, derived: hs.sign.publicKeyOf(pair.privateKey), sig: btoa(String.fromCharCode(...sig)), ok: hs.sign.verify(pair.publicKey, msg, sig) }
    })
  }, { kinds: KINDS, data: b64(data) })
  for (const [i, kind] of KINDS.entries()) {
    const m = made[i]
    assert.match(m.privateKey, /^-----BEGIN PRIVATE KEY-----\n/, kind)
    assert.match(m.publicKey, /^-----BEGIN PUBLIC KEY-----\n/, kind)
    assert.equal(m.derived, m.publicKey, kind)
    assert.equal(m.ok, true, kind)
    const sig = unb64(m.sig)
    if (kind === 'ecdsa-p256') assert.equal(sig[0], 0x30, 'ECDSA signatures are ASN.1 DER')
    if (kind === 'ed25519') assert.equal(sig.length, 64)
    if (kind === 'ml-dsa-65') assert.equal(sig.length, 3309)
    assert.ok(cliVerifies(m.publicKey, sig, data), `${kind}: the CLI verifies the page's signature`)
    const badData = Buffer.from(data); badData[1000] ^= 1
    assert.ok(!cliVerifies(m.publicKey, sig, badData), `${kind}: changed data`)
    const badSig = Buffer.from(sig); badSig[sig.length >> 1] ^= 0x10
    assert.ok(!cliVerifies(m.publicKey, badSig, data), `${kind}: changed signature`)
    // The page's private key signs with the CLI too (PKCS#8 read by aws-lc).
    const key = join(h.work, `page-${kind}.pem`)
    writeFileSync(key, m.privateKey, { mode: 0o600 })
    const byCli = cli(['sign', '--identity', key, join(h.work, 'data.bin')])
    assert.ok(cliVerifies(m.publicKey, byCli, data), `${kind}: CLI signature with the page's key`)
  }
})

test('keys and signatures made by the CLI verify in the page; tampering gives false', async () => {
  const data = randomBytes(5000)
  writeFileSync(join(h.work, 'cli-data.bin'), data)
  const fromCli = KINDS.map((kind) => {
    const key = join(h.work, `cli-${kind}.pem`)
    const out = cli(['keygen', '--kind', kind, '-o', key]) // public key on stderr: derived in the page instead
    assert.equal(out.length, 0)
    const privateKey = readFileSync(key, 'utf8')
    return { kind, privateKey, sig: b64(cli(['sign', '--identity', key, join(h.work, 'cli-data.bin')])) }
  })
  const r = await h.inPage((hs, { keys, data }) => {
    const msg = Uint8Array.from(atob(data), (c) => c.charCodeAt(0))
    const u8 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0))
    return keys.map(({ privateKey, sig }) => {
      const publicKey = hs.sign.publicKeyOf(privateKey)
      const s = u8(sig)
      const badSig = s.slice(); badSig[7] ^= 1
      const badMsg = msg.slice(); badMsg[0] ^= 1
      const mine = hs.sign.sign(privateKey, msg)
      return {
        publicKey,
        good: hs.sign.verify(publicKey, msg, s),
        flat: hs.signVerify(publicKey, msg, s),
        badSig: hs.sign.verify(publicKey, msg, badSig),
        short: hs.sign.verify(publicKey, msg, s.subarray(0, s.length - 1)),
        badMsg: hs.sign.verify(publicKey, badMsg, s),
        empty: hs.sign.verify(publicKey, msg, new Uint8Array(0)),
        mine: btoa(String.fromCharCode(...mine)),
      }
    })
  }, { keys: fromCli, data: b64(data) })
  for (const [i, { kind }] of fromCli.entries()) {
    assert.deepEqual({ ...r[i], publicKey: undefined, mine: undefined },
      { publicKey: undefined, mine: undefined, good: true, flat: true, badSig: false, short: false, badMsg: false, empty: false }, kind)
    assert.ok(cliVerifies(r[i].publicKey, unb64(r[i].mine), data), `${kind}: the page signs with the CLI's key`)
  }
})

test('Wycheproof Ed25519 and ECDSA P-256 vectors through the page', async () => {
  const cases = []
  for (const file of ['ed25519_test.json', 'ecdsa_secp256r1_sha256_test.json']) {
    for (const g of vectors(file).testGroups) {
      for (const t of g.tests) {
        if (t.result === 'acceptable') continue
        cases.push({ file, id: t.tcId, key: g.publicKeyDer, msg: t.msg, sig: t.sig, valid: t.result === 'valid' })
      }
    }
  }
  const r = await h.inPage((hs, cases) => {
    const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (b) => parseInt(b, 16))
    const pem = (der) => '-----BEGIN PUBLIC KEY-----\n' + btoa(String.fromCharCode(...hex(der))).replace(/.{64}/g, '$&\n') + '\n-----END PUBLIC KEY-----\n'
    return cases.map((c) => {
      try { return hs.sign.verify(pem(c.key), hex(c.msg), hex(c.sig)) } catch (e) { return e.code }
    })
  }, cases)
  assert.ok(cases.length > 600, `${cases.length} cases`)
  cases.forEach((c, i) => assert.equal(r[i], c.valid, `${c.file} tcId ${c.id}: ${r[i]}`))
})

test('errors carry codes: RSA is native-only, unusable keys, unknown kinds', async () => {
  const rsaKey = join(h.work, 'rsa.pem')
  cli(['keygen', '--kind', 'rsa2048', '-o', rsaKey])
  const r = await h.inPage((hs, rsa) => {
    const code = (f) => { try { f(); return 'no error' } catch (e) { return e.code } }
    const ed = hs.sign.generateKeyPair()
    return {
      rsaGen: code(() => hs.sign.generateKeyPair('rsa2048')),
      unknown: code(() => hs.sign.generateKeyPair('dsa')),
      rsaSign: code(() => hs.sign.sign(rsa, 'x')),
      badPublic: code(() => hs.sign.verify('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', 'x', new Uint8Array(64))),
      notPem: code(() => hs.sign.sign('hello', 'x')),
      privateAsPublic: code(() => hs.sign.verify(ed.privateKey, 'x', new Uint8Array(64))),
      defaultKind: ed.publicKey.length < 200,
    }
  }, readFileSync(rsaKey, 'utf8'))
  assert.deepEqual(r, {
    rsaGen: 'ERR_HYPERSEAL_ARGUMENT',
    unknown: 'ERR_HYPERSEAL_ARGUMENT',
    rsaSign: 'ERR_HYPERSEAL_KEY',
    badPublic: 'ERR_HYPERSEAL_KEY',
    notPem: 'ERR_HYPERSEAL_KEY',
    privateAsPublic: 'ERR_HYPERSEAL_KEY',
    defaultKind: true,
  })
})
