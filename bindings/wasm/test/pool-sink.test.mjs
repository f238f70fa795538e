// WorkerPool.encryptFileTo/decryptFileTo in Chromium: a File sealed or opened across the
// workers and written part by part, in order, to a FileSystemWritableFileStream (the Origin
// Private File System here, a save dialog's file in a page), never joined into one Blob: what it
// writes opens with the native CLI, the CLI's files open through it, armor streams through the
// page, and a damaged file rejects with the write aborted, so the file stays as it was (empty).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, cliKey, b64, unb64, PAGE_B64 } from './harness.mjs'

const MIB = 1 << 20
let h, key, pub

before(async () => {
  h = await startBrowser({ isolated: false })
  ;({ key, pub } = cliKey(h.work))
})
after(async () => { await h?.close() })

/**
 * In the page: `input` (base64) as a File through `pool[method]` into the OPFS file `name`;
 * returns the file's bytes (base64), the largest single write, the writes' count and the
 * rejection's code if the call failed (the writable then aborted). `collect`: the page collects
 * garbage every few milliseconds during the call (Chromium is started with --expose-gc).
 */
const throughPool = (method, input, name, options, collect = false) => h.inPage(async (hs, { method, input, name, options, collect, B64 }) => {
  const { bytes, b64 } = new Function(`${B64}; return { bytes, b64 }`)()
  const root = await navigator.storage.getDirectory()
  const handle = await root.getFileHandle(name, { create: true })
  const writable = await handle.createWritable()
  let largest = 0
  let writes = 0
  const sink = {
    write (data) {
      largest = Math.max(largest, data.size ?? data.byteLength)
      writes++
      return writable.write(data)
    },
  }
  const pool = new hs.WorkerPool({ size: 2 })
  let code = null
  const collecting = collect ? setInterval(() => globalThis.gc(), 5) : null
  try {
    await pool[method](new File([bytes(input)], 'in'), sink, options)
    await writable.close()
  } catch (e) {
    code = e.code ?? e.name
    await writable.abort()
  } finally {
    clearInterval(collecting)
    pool.terminate()
  }
  const out = new Uint8Array(await (await handle.getFile()).arrayBuffer())
  return { out: b64(out), largest, writes, code }
}, { method, input: b64(input), name, options, collect, B64: PAGE_B64 })

test('encryptFileTo: parts written in order, none holding the whole file; the CLI opens it', async () => {
  const pt = randomBytes(20 * MIB + 123)
  const r = await throughPool('encryptFileTo', pt, 'sealed.age', { publicKey: pub, format: 'age' })
  assert.equal(r.code, null)
  // Parts of 8 MiB of plaintext (and their tags), the header first.
  assert.ok(r.writes >= 4 && r.largest <= 8 * MIB + 4096, `${r.writes} writes, the largest ${r.largest} bytes`)
  const path = join(h.work, 'sealed.age')
  writeFileSync(path, unb64(r.out))
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, path]), pt)
})

test('decryptFileTo: the CLI\'s file opens part by part', async () => {
  const pt = randomBytes(20 * MIB + 7)
  const plain = join(h.work, 'plain')
  writeFileSync(plain, pt)
  const sealed = cli(['encrypt', '-q', '--format', 'age', '-r', pub, plain])
  const r = await throughPool('decryptFileTo', sealed, 'opened', { privateKey: readKey() })
  assert.equal(r.code, null)
  assert.ok(r.writes >= 3 && r.largest <= 8 * MIB, `${r.writes} writes, the largest ${r.largest} bytes`)
  assert.deepEqual(unb64(r.out), pt)
})

test('armor streams on the page into the sink, both ways', async () => {
  const pt = randomBytes(5 * MIB + 1)
  const r = await throughPool('encryptFileTo', pt, 'armored.age', { publicKey: pub, format: 'age', armor: true })
  assert.equal(r.code, null)
  const armored = unb64(r.out)
  assert.match(armored.subarray(0, 40).toString(), /^-----BEGIN AGE ENCRYPTED FILE-----/)
  assert.ok(r.largest < armored.length / 2, `the largest write: ${r.largest} of ${armored.length} bytes`)
  const path = join(h.work, 'armored.age')
  writeFileSync(path, armored)
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, path]), pt)
  const back = await throughPool('decryptFileTo', armored, 'dearmored', { privateKey: readKey() })
  assert.equal(back.code, null)
  assert.deepEqual(unb64(back.out), pt)
})

test('a damaged part rejects with ERR_HYPERSEAL_AUTH and the aborted file stays empty', async () => {
  const pt = randomBytes(12 * MIB)
  const plain = join(h.work, 'plain')
  writeFileSync(plain, pt)
  const sealed = cli(['encrypt', '-q', '--format', 'age', '-r', pub, plain])
  sealed[sealed.length >> 1] ^= 1
  const r = await throughPool('decryptFileTo', sealed, 'damaged', { privateKey: readKey() })
  assert.equal(r.code, 'ERR_HYPERSEAL_AUTH')
  assert.equal(unb64(r.out).length, 0)
})

// Chromium collects a Blob stream whose only holder is the function awaiting its read, and the
// read never settles: without the pool holding the streams it reads, this call never ended (the
// first part's read stayed pending) whenever a collection fell inside a read. The deadline only
// names a hang here; the calls take a few seconds.
test('a collection during the reads does not stall the file: both ways, the bytes intact', { timeout: 120_000 }, async () => {
  const pt = randomBytes(12 * MIB + 5)
  const sealed = await throughPool('encryptFileTo', pt, 'collected.age', { publicKey: pub, format: 'age' }, true)
  assert.equal(sealed.code, null)
  const back = await throughPool('decryptFileTo', unb64(sealed.out), 'collected', { privateKey: readKey() }, true)
  assert.equal(back.code, null)
  assert.deepEqual(unb64(back.out), pt)
})

/** The CLI's key, as the page takes it: the key file's identity line. */
const readKey = () => readFileSync(key, 'utf8').split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))
