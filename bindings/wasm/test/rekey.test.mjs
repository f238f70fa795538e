// rekey / rekeyFile in Chromium: a new header for the same file key, the payload never read
// into the page. A re-keyed File opens with the new key in the page, with the native CLI and
// with typage (age-encryption), and not with the removed one; its payload bytes are the
// original's from the old header length on; only the file's start is read.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Decrypter } from 'age-encryption'
import { startBrowser, cli, cliKey, unb64, PAGE_B64 } from './harness.mjs'

let h

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

/** In the page: an age file to keys a and b, re-keyed as a File to a and c (or `change`). */
const rekeyInPage = async (hs, { pageB64, format, change }) => {
  const { b64 } = new Function(`${pageB64}; return { bytes, b64 }`)()
  const [a, b, c] = [0, 1, 2].map(() => hs.generateKeyPair({ kind: 'x25519' }))
  const data = new Uint8Array(3 * 65536 + 1000)
  for (let off = 0; off < data.length; off += 65536) crypto.getRandomValues(data.subarray(off, off + 65536))
  const sealed = hs.encryptByPublicKey(data, [a.publicKey, b.publicKey], { format })
  // A File that records what is sliced out of it: only the head may be read.
  const reads = []
  class Counting extends File {
    slice (start, end) { reads.push([start, end]); return super.slice(start, end) }
  }
  const file = new Counting([sealed], 'secret.age', { type: 'application/octet-stream' })
  const opts = change === 'shrink' ? { recipients: c.publicKey, removeOwn: true } : { recipients: [a.publicKey, c.publicKey] }
  const r = await hs.rekeyFile(file, a.privateKey, opts)
  const out = new Uint8Array(await r.blob.arrayBuffer())
  const code = (f) => { try { hs.decryptByPrivateKey(out, f); return 'opened' } catch (e) { return e.code } }
  const same = (x, y) => x.length === y.length && x.every((v, i) => v === y[i])
  return {
    report: { before: r.before, after: r.after, removed: r.removed, added: r.added, inPlace: r.inPlace },
    isFile: r.blob instanceof File,
    name: r.blob.name,
    sameLength: out.length === sealed.length,
    reads,
    opensC: same(hs.decryptByPrivateKey(out, c.privateKey), data),
    b: code(b.privateKey),
    a: code(a.privateKey),
    sealed: b64(sealed),
    out: b64(out),
    data: b64(data),
    keys: { a: a.privateKey, b: b.privateKey, c: c.privateKey },
  }
}

/** Bytes of the header (version line through the MAC line): the salt starts here. */
function headerLen (file) {
  const mac = file.indexOf('\n--- ')
  assert.ok(mac > 0, 'no MAC line')
  return file.indexOf('\n', mac + 1) + 1
}

async function typage (file, key) {
  const d = new Decrypter()
  d.addIdentity(key)
  return Buffer.from(await d.decrypt(file))
}

for (const format of ['age', 'hyperseal']) {
  test(`a re-keyed ${format} File: only its head read, payload identical, new key opens, removed one refused`, async () => {
    const r = await h.inPage(rekeyInPage, { pageB64: PAGE_B64, format })
    assert.deepEqual(r.report, { before: ['X25519', 'X25519'], after: ['X25519', 'X25519'], removed: 2, added: 2, inPlace: false })
    assert.ok(r.isFile)
    assert.equal(r.name, 'secret.age')
    assert.ok(r.sameLength)
    // The head (64 KiB at most for a small header), then the lazy slice of the payload.
    assert.equal(r.reads.length, 2, JSON.stringify(r.reads))
    assert.ok(r.reads[0][0] === 0 && r.reads[0][1] <= 64 << 10, JSON.stringify(r.reads))
    const [sealed, out, data] = [unb64(r.sealed), unb64(r.out), unb64(r.data)]
    assert.equal(r.reads[1][0], headerLen(sealed))
    assert.ok(sealed.subarray(headerLen(sealed)).equals(out.subarray(headerLen(out))))
    assert.ok(r.opensC)
    assert.equal(r.b, 'ERR_HYPERSEAL_NO_IDENTITY')
    assert.equal(r.a, 'opened')
    if (format === 'age') {
      assert.ok((await typage(out, r.keys.c)).equals(data))
      await assert.rejects(typage(out, r.keys.b))
    }
  })
}

test('a header that shrinks is padded to the old length: typage and the CLI still open it', async () => {
  const r = await h.inPage(rekeyInPage, { pageB64: PAGE_B64, format: 'age', change: 'shrink' })
  assert.deepEqual(r.report, { before: ['X25519', 'X25519'], after: ['X25519'], removed: 2, added: 1, inPlace: false })
  assert.ok(r.sameLength)
  assert.equal(r.a, 'ERR_HYPERSEAL_NO_IDENTITY')
  const [out, data] = [unb64(r.out), unb64(r.data)]
  assert.ok((await typage(out, r.keys.c)).equals(data))
  await assert.rejects(typage(out, r.keys.a))
  const key = join(h.work, 'c.key')
  writeFileSync(key, r.keys.c + '\n')
  assert.ok(cli(['decrypt', '-i', key], out).equals(data))
})

test('bytes re-keyed in the page to a CLI key open with the CLI', async () => {
  const k = cliKey(h.work)
  const data = Buffer.alloc(70000, 7)
  const r = await h.inPage((hs, { pub, pageB64, data }) => {
    const { bytes, b64 } = new Function(`${pageB64}; return { bytes, b64 }`)()
    // The CLI's key is X25519: a post-quantum file would refuse it (no silent downgrade).
    const me = hs.generateKeyPair({ kind: 'x25519' })
    const sealed = hs.encryptByPublicKey(bytes(data), me.publicKey)
    const out = hs.rekey(sealed, me.privateKey, { add: pub })
    return { sealed: b64(sealed), out: b64(out) }
  }, { pub: k.pub, pageB64: PAGE_B64, data: data.toString('base64') })
  const [sealed, out] = [unb64(r.sealed), unb64(r.out)]
  assert.ok(sealed.subarray(headerLen(sealed)).equals(out.subarray(headerLen(out))))
  assert.ok(cli(['decrypt', '-i', k.key], out).equals(data))
})

test('a header longer than the first read is read again with the full budget', async () => {
  const r = await h.inPage(async (hs) => {
    const keys = Array.from({ length: 800 }, () => hs.generateKeyPair({ kind: 'x25519' }).publicKey)
    const me = hs.generateKeyPair({ kind: 'x25519' })
    const other = hs.generateKeyPair({ kind: 'x25519' })
    const sealed = hs.encryptByPublicKey('many', [me.publicKey, ...keys], { format: 'age' })
    const reads = []
    class Counting extends Blob {
      slice (start, end) { reads.push([start, end]); return super.slice(start, end) }
    }
    const { blob } = await hs.rekeyFile(new Counting([sealed]), me.privateKey, { add: other.publicKey })
    const out = new Uint8Array(await blob.arrayBuffer())
    return { size: sealed.length, reads, text: new TextDecoder().decode(hs.decryptByPrivateKey(out, other.privateKey)) }
  })
  assert.ok(r.size > 64 << 10)
  assert.deepEqual(r.reads.slice(0, 2), [[0, 64 << 10], [0, r.size]])
  assert.equal(r.text, 'many')
})

test('errors carry their codes: no identity, lock-out without removeOwn, bad options, armor, dryRun', async () => {
  const r = await h.inPage(async (hs) => {
    const [a, b] = [0, 1].map(() => hs.generateKeyPair({ kind: 'x25519' }))
    const sealed = hs.encryptByPublicKey('hello', a.publicKey, { format: 'age' })
    const code = async (f) => { try { await f(); return 'ok' } catch (e) { return e.code } }
    const file = new Blob([sealed])
    const locked = hs.encryptWithPassphrase('hello', 'pw', { format: 'age' })
    const dry = await hs.rekeyFile(file, a.privateKey, { add: b.publicKey, dryRun: true })
    return {
      wrongKey: await code(() => hs.rekeyFile(file, b.privateKey, { add: b.publicKey })),
      lockOut: await code(() => hs.rekeyFile(file, a.privateKey, { recipients: b.publicKey })),
      lockOutBytes: await code(() => hs.rekey(sealed, a.privateKey, { recipients: b.publicKey })),
      nothing: await code(() => hs.rekey(sealed, a.privateKey, {})),
      both: await code(() => hs.rekey(sealed, a.privateKey, { recipients: b.publicKey, add: b.publicKey })),
      badKey: await code(() => hs.rekey(sealed, a.privateKey, { add: 'nope' })),
      noOptions: await code(() => hs.rekeyFile(file, a.privateKey)),
      notBlob: await code(() => hs.rekeyFile(sealed, a.privateKey, { add: b.publicKey })),
      output: await code(() => hs.rekeyFile(file, a.privateKey, { add: b.publicKey, output: 'x' })),
      armored: await code(() => hs.rekey(hs.encryptByPublicKey('hi', a.publicKey, { armor: true }), a.privateKey, { add: b.publicKey })),
      empty: await code(() => hs.rekeyFile(new Blob([]), a.privateKey, { add: b.publicKey })),
      wrongPassphrase: await code(() => hs.rekey(locked, null, { passphrase: 'nope', recipients: b.publicKey, removeOwn: true })),
      passphraseAndKey: await code(() => hs.rekey(locked, a.privateKey, { passphrase: 'pw', recipients: b.publicKey })),
      unlocked: new TextDecoder().decode(hs.decryptByPrivateKey(hs.rekey(locked, null, { passphrase: 'pw', recipients: b.publicKey, removeOwn: true }), b.privateKey)),
      dry: { blob: dry.blob, after: dry.after, added: dry.added },
    }
  })
  assert.deepEqual(r, {
    wrongKey: 'ERR_HYPERSEAL_NO_IDENTITY',
    lockOut: 'ERR_HYPERSEAL_ARGUMENT',
    lockOutBytes: 'ERR_HYPERSEAL_ARGUMENT',
    nothing: 'ERR_HYPERSEAL_ARGUMENT',
    both: 'ERR_HYPERSEAL_ARGUMENT',
    badKey: 'ERR_HYPERSEAL_KEY',
    noOptions: 'ERR_HYPERSEAL_ARGUMENT',
    notBlob: 'ERR_HYPERSEAL_ARGUMENT',
    output: 'ERR_HYPERSEAL_ARGUMENT',
    armored: 'ERR_HYPERSEAL_ARGUMENT',
    empty: 'ERR_HYPERSEAL_FORMAT',
    wrongPassphrase: 'ERR_HYPERSEAL_AUTH',
    passphraseAndKey: 'ERR_HYPERSEAL_ARGUMENT',
    unlocked: 'hello',
    dry: { blob: null, after: ['X25519', 'X25519'], added: 1 },
  })
})
