// decryptRange: random access into an encrypted Blob/File through the library's seekable reader,
// in Chromium. Ranges anywhere in a multi-chunk file (across chunk and 1 MiB block boundaries,
// at and past the end), read lazily (a Blob that counts what is sliced from it), damage and wrong
// keys with their codes, and files made by the native CLI.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, b64 } from './harness.mjs'

let h

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

test('ranges of an 8 MB file match the plaintext, and only a few blocks are read', async () => {
  const r = await h.inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const n = 8_000_000
    const data = new Uint8Array(n)
    for (let off = 0; off < n; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(n, off + 65536)))
    const file = hs.encryptByPublicKey(data, publicKey)
    // A Blob that counts the bytes sliced out of it: laziness is checked, not assumed.
    class CountingBlob extends Blob {
      constructor (parts) { super(parts); this.sliced = 0 }
      slice (start, end) { this.sliced += end - start; return super.slice(start, end) }
    }
    const C = 65536
    const cases = [[0, 10], [C - 3, 10], [C, C], [3 * C + 7, 5 * C + 11], [(1 << 20) - 5, 20], [4_000_000, 1],
      [n - 5, 100], [n, 10], [n + 1000, 10], [0, n], [123, 0]]
    const out = []
    for (const [offset, length] of cases) {
      const blob = new CountingBlob([file])
      const got = await hs.decryptRange(blob, privateKey, offset, length)
      const want = data.subarray(Math.min(offset, n), Math.min(n, offset + length))
      out.push({ offset, length, same: got.length === want.length && got.every((b, i) => b === want[i]), sliced: blob.sliced, size: file.length })
    }
    return out
  })
  for (const c of r) assert.ok(c.same, JSON.stringify(c))
  // A small range reads the header's block, the final chunk's and the one or two under the
  // range's 1 MiB batch: at most 4 of the file's 8 blocks.
  for (const c of r.filter((c) => c.length <= 20 && c.offset < 8_000_000)) assert.ok(c.sliced <= 4 << 20, JSON.stringify(c))
  assert.equal(r.find((c) => c.length === 8_000_000).sliced, r[0].size)
})

test('damage in what is read, a cut file, a wrong key, an armored file: each rejected with its code', async () => {
  const r = await h.inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'hybrid' })
    const other = hs.generateKeyPair({ kind: 'x25519' })
    const data = new Uint8Array(5 * 65536 + 100)
    const file = hs.encryptByPublicKey(data, publicKey)
    const code = async (blob, key, offset, length) => {
      try { return (await hs.decryptRange(blob, key, offset, length)).length } catch (e) { return e.code }
    }
    const flip = (at) => { const f = file.slice(); f[at] ^= 1; return new Blob([f]) }
    const chunk2 = file.length - (100 + 16) - (65536 + 16) * 3 + 50 // a byte inside chunk 2 of 0…5
    return {
      inRange: await code(flip(chunk2), privateKey, 2 * 65536 + 10, 100),
      elsewhere: await code(flip(chunk2), privateKey, 0, 100), // chunk 2 is not read: the range is fine
      finalChunk: await code(flip(file.length - 3), privateKey, 0, 100), // the final chunk is always checked
      cut: await code(new Blob([file.slice(0, file.length - 50)]), privateKey, 0, 10),
      wrongKey: await code(new Blob([file]), other.privateKey, 0, 10),
      armored: await code(new Blob([hs.encryptByPublicKey(data, publicKey, { armor: true })]), privateKey, 0, 10),
      notABlob: await code(file, privateKey, 0, 10),
      badOffset: await code(new Blob([file]), privateKey, -1, 10),
    }
  })
  assert.deepEqual(r, {
    inRange: 'ERR_HYPERSEAL_AUTH',
    elsewhere: 100,
    finalChunk: 'ERR_HYPERSEAL_AUTH',
    cut: 'ERR_HYPERSEAL_AUTH',
    wrongKey: 'ERR_HYPERSEAL_NO_IDENTITY',
    armored: 'ERR_HYPERSEAL_IO',
    notABlob: 'ERR_HYPERSEAL_ARGUMENT',
    badOffset: 'ERR_HYPERSEAL_ARGUMENT',
  })
})

test('files made by the native CLI (hyperseal with each suite, age) as Files in the page', async () => {
  const key = join(h.work, 'key')
  cli(['keygen', '--kind', 'x25519', '-o', key])
  const pub = cli(['pubkey', '-i', key]).toString().trim()
  const pt = randomBytes(3 * (1 << 20) + 12345)
  writeFileSync(join(h.work, 'pt'), pt)
  const files = []
  for (const extra of [['--suite', 'aes-256-gcm'], ['--suite', 'chacha20-poly1305'], ['--suite', 'sm4-gcm'], ['--format', 'age']]) {
    files.push(b64(cli(['encrypt', '-q', '-r', pub, ...extra, join(h.work, 'pt')])))
  }
  const ranges = [[0, 100], [65530, 20], [(1 << 20) - 1, 70000], [pt.length - 10, 10]]
  const r = await h.inPage(async (hs, { files, key, ranges }) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    const out = []
    for (const f of files) {
      const file = new File([bytes(f)], 'data.hs')
      for (const [o, l] of ranges) out.push(Array.from(await hs.decryptRange(file, key, o, l)))
    }
    return out
  }, { files, key: readFileSync(key, 'utf8'), ranges })
  assert.equal(r.length, 16)
  r.forEach((got, i) => {
    const [o, l] = ranges[i % ranges.length]
    assert.deepEqual(Buffer.from(got), pt.subarray(o, o + l), `file ${Math.floor(i / ranges.length)} range ${o}+${l}`)
  })
})
