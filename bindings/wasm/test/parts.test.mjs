// One file across every worker: WorkerPool's parallel path (js/workers.js) over the library's
// PartKey, in Chromium; AES-256-GCM parts through WebCrypto with the library's chunk calls. Files sealed by two workers open with the native CLI and CLI files open
// through two workers, both formats, keys and passphrases, sizes around the part boundaries;
// damage, truncation and a wrong key are rejected with their codes and return nothing.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { startBrowser, cli, cliKey, b64, unb64, PAGE_B64 } from './harness.mjs'

const MIB = 1 << 20
let h, key, pub

before(async () => {
  h = await startBrowser()
  ;({ key, pub } = cliKey(h.work))
  writeFileSync(join(h.work, 'pass'), 'parts pass\n')
})
after(async () => { await h?.close() })


test('files sealed across two workers open with the CLI, progress reaches the end', async () => {
  const sizes = [0, 1, 4 * MIB, 4 * MIB + 1, 9 * MIB + 5]
  const pts = sizes.map((n) => randomBytes(n))
  const opts = [{ publicKey: pub }, { publicKey: pub, format: 'age' }, { passphrase: 'parts pass' },
    { publicKey: [pub] }, { passphrase: 'parts pass', format: 'age' }]
  const r = await h.inPage(async (hs, { pts, opts, B64 }) => {
    const { bytes, b64 } = new Function(`${B64}; return { bytes, b64 }`)()
    const pool = new hs.WorkerPool({ size: 2 })
    const out = []
    for (let i = 0; i < pts.length; i++) {
      const seen = []
      const sealed = await pool.encryptFile(new Blob([bytes(pts[i])]), { ...opts[i], parallel: true, onProgress: (n) => seen.push(n) })
      out.push({ file: b64(new Uint8Array(await sealed.arrayBuffer())), last: seen.at(-1) })
    }
    const workers = pool.workers.length
    pool.terminate()
    return { out, workers }
  }, { pts: pts.map(b64), opts, B64: PAGE_B64 })
  assert.equal(r.workers, 2)
  r.out.forEach(({ file, last }, i) => {
    const path = join(h.work, `parts-${i}`)
    writeFileSync(path, unb64(file))
    const how = opts[i].passphrase ? ['--passphrase-file', join(h.work, 'pass')] : ['-i', key]
    assert.deepEqual(cli(['decrypt', '-q', ...how, path]), pts[i], `file ${i} (${sizes[i]} B)`)
    assert.equal(last, sizes[i])
    // Hyperseal files sealed in parts are AES-256-GCM, sealed through WebCrypto (js/worker.js).
    const params = unb64(file).toString('latin1').split('\n')[1]
    assert.equal(params.startsWith('params aes-256-gcm'), opts[i].format !== 'age', params)
  })
})

test('CLI files open across two workers; damage, truncation and a wrong key are rejected', async () => {
  const pt = randomBytes(10 * MIB + 77)
  const plainPath = join(h.work, 'plain')
  writeFileSync(plainPath, pt)
  const files = {
    hs: cli(['encrypt', '-q', '-r', pub, plainPath]),
    age: cli(['encrypt', '-q', '--format', 'age', '-r', pub, plainPath]),
    pass: cli(['encrypt', '-q', '--passphrase-file', join(h.work, 'pass'), plainPath]),
  }
  const r = await h.inPage(async (hs, { files, privateKey, B64 }) => {
    const { bytes } = new Function(`${B64}; return { bytes, b64 }`)()
    const pool = new hs.WorkerPool({ size: 2 })
    const code = async (p) => { try { await p; return 'no error' } catch (e) { return e.code } }
    const digest = async (blob) => Array.from(hs.hash('sha256', new Uint8Array(await blob.arrayBuffer())))
    const opened = {}
    for (const [name, f] of Object.entries(files)) {
      const how = name === 'pass' ? { passphrase: 'parts pass' } : { privateKey }
      opened[name] = await digest(await pool.decryptFile(new Blob([bytes(f)]), { ...how, parallel: true }))
    }
    const file = bytes(files.hs)
    const flipped = file.slice()
    flipped[Math.floor(file.length / 2)] ^= 1
    const other = hs.generateKeyPair({ kind: 'x25519' })
    const full = 65536 + 16
    const bad = {
      flipped: await code(pool.decryptFile(new Blob([flipped]), { privateKey, parallel: true })),
      // Cut after a whole number of chunks: every part that remains opens, the last is not final.
      cut: await code(pool.decryptFile(new Blob([file.subarray(0, file.length - ((file.length - 200) % full) - full)]), { privateKey, parallel: true })),
      wrongKey: await code(pool.decryptFile(new Blob([file]), { privateKey: other.privateKey, parallel: true })),
      wrongPass: await code(pool.decryptFile(new Blob([bytes(files.pass)]), { passphrase: 'nope', parallel: true })),
    }
    pool.terminate()
    return { opened, bad }
  }, { files: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, b64(v)])), privateKey: readFileSync(key, 'utf8'), B64: PAGE_B64 })
  const want = [...createHash('sha256').update(pt).digest()]
  for (const name of Object.keys(files)) assert.deepEqual(r.opened[name], want, name)
  assert.deepEqual(r.bad, { flipped: 'ERR_HYPERSEAL_AUTH', cut: 'ERR_HYPERSEAL_AUTH', wrongKey: 'ERR_HYPERSEAL_NO_IDENTITY', wrongPass: 'ERR_HYPERSEAL_AUTH' })
})

test('a file in parts is read once, as one stream, by the page; a stream with no BYOB reader works too', async () => {
  // Chromium's cost of a Blob read is per read: reading each part's slice separately cost more
  // than the cipher. So the page reads the file once and moves the parts to the workers.
  const pt = randomBytes(9 * MIB + 5)
  const r = await h.inPage(async (hs, { pt, pub, privateKey, B64 }) => {
    const { bytes } = new Function(`${B64}; return { bytes, b64 }`)()
    const data = bytes(pt)
    const pool = new hs.WorkerPool({ size: 2 })
    const counts = { slice: 0, stream: 0 }
    const { slice, stream } = Blob.prototype
    Blob.prototype.slice = function (...a) { counts.slice++; return slice.apply(this, a) }
    Blob.prototype.stream = function (...a) { counts.stream++; return stream.apply(this, a) }
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])
    const roundTrip = async () => {
      const sealed = await pool.encryptFile(new Blob([data]), { publicKey: pub, format: 'age', parallel: true })
      const sealReads = { ...counts }
      const opened = new Uint8Array(await (await pool.decryptFile(sealed, { privateKey, parallel: true })).arrayBuffer())
      return { sealReads, same: same(opened, data) && same(hs.decryptByPrivateKey(new Uint8Array(await sealed.arrayBuffer()), privateKey), data) }
    }
    let byob
    let plain
    try {
      byob = await roundTrip()
      byob.openReads = { slice: counts.slice - byob.sealReads.slice, stream: counts.stream - byob.sealReads.stream }
      // As in a browser whose Blob streams are not byte streams.
      const getReader = ReadableStream.prototype.getReader
      ReadableStream.prototype.getReader = function (o) {
        if (o?.mode === 'byob') throw new TypeError('no BYOB reader')
        return getReader.call(this, o)
      }
      try {
        plain = await roundTrip()
      } finally {
        ReadableStream.prototype.getReader = getReader
      }
    } finally {
      Object.assign(Blob.prototype, { slice, stream })
      pool.terminate()
    }
    return { byob, plain }
  }, { pt: b64(pt), pub, privateKey: readFileSync(key, 'utf8'), B64: PAGE_B64 })
  assert.ok(r.byob.same, 'BYOB: both ways, and the one-shot API opens the pool\'s file')
  assert.ok(r.plain.same, 'default reader: both ways')
  // Sealing: the whole Blob as one stream. Opening: one stream of the payload (a slice after
  // the header), and its first byte read once (is it armored?).
  assert.deepEqual(r.byob.sealReads, { slice: 0, stream: 1 })
  assert.deepEqual(r.byob.openReads, { slice: 2, stream: 1 })
})
