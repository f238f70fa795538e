// The browser package in a real browser (test/harness.mjs): round trips in the page (every key
// kind, both formats, armor, sizes around the chunk boundaries, streams, passphrases), errors with
// their codes, and files crossing between the page and the native CLI both ways.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, b64, unb64 } from './harness.mjs'

let h, work
const inPage = (fn, arg) => h.inPage(fn, arg)

before(async () => {
  h = await startBrowser()
  work = h.work
})

after(async () => { await h?.close() })

test('round trips: every key kind, both formats, armor, sizes around the chunk boundaries', async () => {
  const r = await inPage(async (hs) => {
    const sizes = [0, 1, 65535, 65536, 65537, 3 * 65536 + 5]
    const out = []
    for (const kind of ['x25519', 'hybrid', 'mlkem1024']) {
      const { publicKey, privateKey } = hs.generateKeyPair({ kind })
      if (hs.publicKeyOf(privateKey) !== publicKey) throw new Error(`publicKeyOf(${kind})`)
      for (const format of ['hyperseal', 'age']) {
        if (format === 'age' && kind === 'mlkem1024') continue
        for (const armor of [false, true]) {
          for (const n of sizes) {
            const data = new Uint8Array(n)
            for (let off = 0; off < n; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(n, off + 65536)))
            const file = hs.encryptByPublicKey(data, publicKey, { format, armor })
            const back = hs.decryptByPrivateKey(file, privateKey)
            const same = back.length === n && back.every((b, i) => b === data[i])
            out.push({ kind, format, armor, n, same })
          }
        }
      }
    }
    return out
  })
  assert.equal(r.length, 60)
  for (const c of r) assert.ok(c.same, JSON.stringify(c))
})

test('strings in, the default kind is hybrid, and a list of recipients', async () => {
  const r = await inPage(async (hs) => {
    const a = hs.generateKeyPair()
    const b = hs.generateKeyPair({ kind: 'hybrid' })
    const file = hs.encryptByPublicKey('héllo', [a.publicKey, b.publicKey])
    return {
      a: a.publicKey.slice(0, 7),
      texts: [a.privateKey, b.privateKey].map((k) => new TextDecoder().decode(hs.decryptByPrivateKey(file, k))),
    }
  })
  assert.equal(r.a, 'age1pq1')
  assert.deepEqual(r.texts, ['héllo', 'héllo'])
})

test('passphrases: Argon2id (hyperseal) and scrypt (age)', async () => {
  const r = await inPage(async (hs) => {
    const out = {}
    for (const format of ['hyperseal', 'age']) {
      const file = hs.encryptWithPassphrase('secret text', 'pass phrase', { format })
      out[format] = new TextDecoder().decode(hs.decryptWithPassphrase(file, 'pass phrase'))
      try { hs.decryptWithPassphrase(file, 'wrong') } catch (e) { out[format + 'Wrong'] = e.code }
    }
    return out
  })
  assert.deepEqual(r, { hyperseal: 'secret text', hypersealWrong: 'ERR_HYPERSEAL_AUTH', age: 'secret text', ageWrong: 'ERR_HYPERSEAL_AUTH' })
})

test('Web Streams: pieces of any size in, the same plaintext out; a cut stream errors with its code', async () => {
  const r = await inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const n = 1_000_003
    const data = new Uint8Array(n)
    for (let off = 0; off < n; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(n, off + 65536)))
    const pieces = (bytes, sizes) => new ReadableStream({
      start (c) {
        let off = 0; let i = 0
        while (off < bytes.length) { const k = sizes[i++ % sizes.length]; c.enqueue(bytes.slice(off, off + k)); off += k }
        c.close()
      },
    })
    // Read by hand: `new Response(stream)` would turn the stream's own error into "Failed to fetch".
    const collect = async (s) => {
      const parts = []; let n = 0
      for (const r = s.getReader(); ;) {
        const { done, value } = await r.read()
        if (done) break
        parts.push(value); n += value.length
      }
      const out = new Uint8Array(n); let off = 0
      for (const p of parts) { out.set(p, off); off += p.length }
      return out
    }
    const file = await collect(hs.encryptStream(pieces(data, [1, 4093, 65536, 100000]), { publicKey }))
    const viaOneShot = hs.decryptByPrivateKey(file, privateKey)
    const viaStream = await collect(hs.decryptStream(pieces(file, [7, 65552, 300000]), { privateKey }))
    const same = (x) => x.length === n && x.every((b, i) => b === data[i])
    // a cut file errors the stream with the auth code, after only authenticated bytes
    let cut
    try { await collect(hs.decryptStream(pieces(file.slice(0, file.length - 100), [50000]), { privateKey })) } catch (e) { cut = e.code }
    const pass = await collect(hs.encryptStream(pieces(data.slice(0, 1000), [333]), { publicKey }))
    return { oneShot: same(viaOneShot), stream: same(viaStream), cut, passLen: pass.length > 1000 }
  })
  assert.deepEqual(r, { oneShot: true, stream: true, cut: 'ERR_HYPERSEAL_AUTH', passLen: true })
})

test('errors carry the stable codes', async () => {
  const r = await inPage(async (hs) => {
    const code = (f) => { try { f(); return 'no error' } catch (e) { return e instanceof Error ? e.code : 'not an Error' } }
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const other = hs.generateKeyPair({ kind: 'x25519' })
    const file = hs.encryptByPublicKey(new Uint8Array(70000), publicKey)
    const flipped = file.slice(); flipped[flipped.length - 1000] ^= 1
    const mlkem = hs.generateKeyPair({ kind: 'mlkem1024' })
    return {
      codes: hs.errorCodes(),
      tampered: code(() => hs.decryptByPrivateKey(flipped, privateKey)),
      truncated: code(() => hs.decryptByPrivateKey(file.slice(0, file.length - 17), privateKey)),
      wrongKey: code(() => hs.decryptByPrivateKey(file, other.privateKey)),
      notAFile: code(() => hs.decryptByPrivateKey('hello, world', privateKey)),
      empty: code(() => hs.decryptByPrivateKey(new Uint8Array(0), privateKey)),
      badKey: code(() => hs.encryptByPublicKey('x', 'age1notakey')),
      badType: code(() => hs.encryptByPublicKey(42, publicKey)),
      badFormat: code(() => hs.encryptByPublicKey('x', publicKey, { format: 'zip' })),
      ageMlkem: code(() => hs.encryptByPublicKey('x', mlkem.publicKey, { format: 'age' })),
      rsaKind: code(() => hs.generateKeyPair({ kind: 'rsa3072' })),
      rsaPem: code(() => hs.encryptByPublicKey('x', '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n')),
      unknownKind: code(() => hs.generateKeyPair({ kind: 'dsa' })),
    }
  })
  assert.deepEqual(r.codes, ['ERR_HYPERSEAL_AUTH', 'ERR_HYPERSEAL_NO_IDENTITY', 'ERR_HYPERSEAL_FORMAT', 'ERR_HYPERSEAL_KEY',
    'ERR_HYPERSEAL_ARGUMENT', 'ERR_HYPERSEAL_IO', 'ERR_HYPERSEAL_TOKEN_EXPIRED', 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY',
    'ERR_HYPERSEAL_LIMIT'])
  delete r.codes
  assert.deepEqual(r, {
    tampered: 'ERR_HYPERSEAL_AUTH',
    truncated: 'ERR_HYPERSEAL_AUTH',
    wrongKey: 'ERR_HYPERSEAL_NO_IDENTITY',
    notAFile: 'ERR_HYPERSEAL_FORMAT',
    empty: 'ERR_HYPERSEAL_FORMAT',
    badKey: 'ERR_HYPERSEAL_KEY',
    badType: 'ERR_HYPERSEAL_ARGUMENT',
    badFormat: 'ERR_HYPERSEAL_ARGUMENT',
    ageMlkem: 'ERR_HYPERSEAL_KEY',
    rsaKind: 'ERR_HYPERSEAL_ARGUMENT',
    rsaPem: 'ERR_HYPERSEAL_KEY',
    unknownKind: 'ERR_HYPERSEAL_ARGUMENT',
  })
})

// ── across: the native CLI and the page ─────────────────────────────────────────────────────

const CROSS = [
  { kind: 'x25519', format: 'hyperseal', armor: false, size: 65537 },
  { kind: 'x25519', format: 'age', armor: true, size: 1000 },
  { kind: 'hybrid', format: 'age', armor: false, size: 131072 },
  { kind: 'hybrid', format: 'hyperseal', armor: true, size: 0 },
  { kind: 'mlkem1024', format: 'hyperseal', armor: false, size: 200001 },
]

test('files made by the native CLI open in the page (both formats, armored or not, every suite)', async () => {
  const cases = []
  for (const [i, c] of CROSS.entries()) {
    const key = join(work, `cli-${i}.key`)
    cli(['keygen', '--kind', c.kind, '-o', key])
    const pt = randomBytes(c.size)
    const input = join(work, `pt-${i}`)
    writeFileSync(input, pt)
    const pub = cli(['pubkey', '-i', key]).toString().trim()
    const suites = c.format === 'age' ? [null] : ['aes-256-gcm', 'chacha20-poly1305', 'sm4-gcm']
    for (const suite of suites) {
      const enc = ['encrypt', '-q', '-r', pub, '--format', c.format, input]
      if (suite) enc.push('--suite', suite)
      if (c.armor) enc.push('--armor')
      cases.push({ ...c, suite, key: readFileSync(key, 'utf8'), file: b64(cli(enc)), pt: b64(pt) })
    }
  }
  const r = await inPage(async (hs, cases) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    return cases.map((c) => {
      try {
        const back = hs.decryptByPrivateKey(bytes(c.file), c.key)
        const pt = bytes(c.pt)
        return back.length === pt.length && back.every((b, i) => b === pt[i])
      } catch (e) { return `${e.code}: ${e.message}` }
    })
  }, cases)
  assert.equal(r.length, 11)
  r.forEach((ok, i) => assert.equal(ok, true, JSON.stringify({ ...cases[i], key: undefined, file: undefined, pt: undefined })))
})

test('files made in the page open with the native CLI (one-shot and stream, both formats, armor, passphrase)', async () => {
  const made = await inPage(async (hs, cross) => {
    const out = []
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    for (const c of cross) {
      const { publicKey, privateKey } = hs.generateKeyPair({ kind: c.kind })
      const pt = new Uint8Array(c.size)
      for (let off = 0; off < c.size; off += 65536) crypto.getRandomValues(pt.subarray(off, Math.min(c.size, off + 65536)))
      out.push({ ...c, how: 'oneshot', key: privateKey, file: b64(hs.encryptByPublicKey(pt, publicKey, c)), pt: b64(pt) })
      if (!c.armor) {
        const s = hs.encryptStream(new Blob([pt]).stream(), { publicKey, format: c.format })
        const file = new Uint8Array(await new Response(s).arrayBuffer())
        out.push({ ...c, how: 'stream', key: privateKey, file: b64(file), pt: b64(pt) })
      }
    }
    for (const format of ['hyperseal', 'age']) {
      const pt = new TextEncoder().encode(`passphrase file, ${format}`)
      out.push({ format, how: 'passphrase', passphrase: 'correct horse', file: b64(hs.encryptWithPassphrase(pt, 'correct horse', { format, armor: format === 'age' })), pt: b64(pt) })
    }
    return out
  }, CROSS)
  assert.equal(made.length, 10)
  for (const [i, m] of made.entries()) {
    const file = join(work, `page-${i}`)
    writeFileSync(file, unb64(m.file))
    const args = ['decrypt', '-q', file]
    if (m.passphrase) {
      writeFileSync(join(work, 'pass'), m.passphrase + '\n')
      args.push('--passphrase-file', join(work, 'pass'))
    } else {
      writeFileSync(join(work, 'id'), m.key)
      args.push('-i', join(work, 'id'))
    }
    assert.deepEqual(cli(args), unb64(m.pt), `${m.how} ${m.kind ?? ''} ${m.format}`)
  }
})
