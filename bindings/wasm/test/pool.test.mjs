// WorkerPool.encrypt/decrypt (bytes in memory) in Chromium: output of the parts across workers
// opens with the one-stream API in the page and with the native CLI, and CLI files open through
// the pool; inputs under the crossover run as one stream without starting a worker; a worker
// that never answers fails the call within the deadline, a crashed one too, and the pool goes on
// with fresh workers.

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
  writeFileSync(join(h.work, 'pass'), 'pool pass\n')
})
after(async () => { await h?.close() })


test('pool.encrypt: parts open with the one-stream API and the CLI; small inputs start no worker', async () => {
  // Under the crossover (default), forced parts on smaller inputs, and parts (default) above it.
  const cases = [
    { n: 0, opts: { publicKey: pub } },
    { n: 1000, opts: { publicKey: pub, format: 'age' } },
    { n: 70_000, opts: { publicKey: pub, parallel: true } },
    { n: 3 * MIB + 5, opts: { publicKey: pub, format: 'age', parallel: true } },
    { n: 5 * MIB, opts: { publicKey: [pub] } },
    { n: 2 * MIB + 1, opts: { passphrase: 'pool pass', format: 'age' } },
    { n: 10, opts: { passphrase: 'pool pass' } },
  ]
  const pts = cases.map(({ n }) => randomBytes(n))
  const r = await h.inPage(async (hs, { pts, cases, privateKey, B64 }) => {
    const { bytes, b64 } = new Function(`${B64}; return { bytes, b64 }`)()
    const pool = new hs.WorkerPool({ size: 2 })
    const small = await pool.encrypt(bytes(pts[1]), cases[1].opts)
    const workersAfterSmall = pool.workers.length
    const out = []
    for (let i = 0; i < pts.length; i++) {
      const data = bytes(pts[i])
      const sealed = await pool.encrypt(data, cases[i].opts)
      const how = cases[i].opts.passphrase
      const back = how ? hs.decryptWithPassphrase(sealed, how) : hs.decryptByPrivateKey(sealed, privateKey)
      const same = back.length === data.length && back.every((b, j) => b === data[j])
      out.push({ file: b64(sealed), same })
    }
    pool.terminate()
    return { out, workersAfterSmall, small: small.length }
  }, { pts: pts.map(b64), cases, privateKey: readFileSync(key, 'utf8'), B64: PAGE_B64 })
  assert.equal(r.workersAfterSmall, 0, 'a public-key input under the crossover runs on the page, no worker')
  r.out.forEach(({ file, same }, i) => {
    assert.ok(same, `case ${i}: the page's one-stream decrypt`)
    const path = join(h.work, `pool-${i}`)
    writeFileSync(path, unb64(file))
    const how = cases[i].opts.passphrase ? ['--passphrase-file', join(h.work, 'pass')] : ['-i', key]
    assert.deepEqual(cli(['decrypt', '-q', ...how, path]), pts[i], `case ${i} (${cases[i].n} B) with the CLI`)
  })
})

test('one stream of a large input (armor, parallel: false) runs in one worker, not on the page', async () => {
  const pt = randomBytes(5 * MIB) // above BYTES_PARALLEL_MIN
  const r = await h.inPage(async (hs, { pub, b64pt, B64 }) => {
    const { bytes, b64 } = new Function(`${B64}; return { bytes, b64 }`)()
    const pool = new hs.WorkerPool({ size: 2 })
    const armored = await pool.encrypt(bytes(b64pt), { publicKey: pub, armor: true })
    const workers = pool.workers.length
    const binary = await pool.encrypt(bytes(b64pt), { publicKey: pub, parallel: false })
    pool.terminate()
    return { armored: new TextDecoder().decode(armored), workers, binary: b64(binary) }
  }, { pub, b64pt: b64(pt), B64: PAGE_B64 })
  assert.equal(r.workers, 1, 'one worker streamed the armored file')
  assert.ok(r.armored.startsWith('-----BEGIN HYPERSEAL ENCRYPTED FILE-----'))
  writeFileSync(join(h.work, 'armored'), r.armored)
  writeFileSync(join(h.work, 'binary'), unb64(r.binary))
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, join(h.work, 'armored')]), pt)
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, join(h.work, 'binary')]), pt)
})

test('pool.decrypt opens CLI files, in parts and as one stream; damage is rejected with nothing returned', async () => {
  const pt = randomBytes(4 * MIB + 333)
  const small = randomBytes(5000)
  const plainPath = join(h.work, 'plain')
  const smallPath = join(h.work, 'small')
  writeFileSync(plainPath, pt)
  writeFileSync(smallPath, small)
  const files = {
    hs: cli(['encrypt', '-q', '-r', pub, plainPath]),
    age: cli(['encrypt', '-q', '--format', 'age', '-r', pub, plainPath]),
    pass: cli(['encrypt', '-q', '--passphrase-file', join(h.work, 'pass'), plainPath]),
    small: cli(['encrypt', '-q', '-r', pub, smallPath]),
    armored: cli(['encrypt', '-q', '-a', '-r', pub, smallPath]),
  }
  const r = await h.inPage(async (hs, { files, privateKey, B64 }) => {
    const { bytes } = new Function(`${B64}; return { bytes }`)()
    const pool = new hs.WorkerPool({ size: 2 })
    const code = async (p) => { try { await p; return 'no error' } catch (e) { return e.code } }
    const opened = {}
    for (const [name, f] of Object.entries(files)) {
      const how = name === 'pass' ? { passphrase: 'pool pass' } : { privateKey }
      // The large ones in parts (forced: they are under decrypt's crossover), the small ones not.
      opened[name] = Array.from(hs.hash('sha256', await pool.decrypt(bytes(f), { ...how, parallel: f.length > 1e6 ? true : undefined })))
    }
    const file = bytes(files.hs)
    const flipped = file.slice()
    flipped[file.length - 100] ^= 1
    const bad = {
      flipped: await code(pool.decrypt(flipped, { privateKey, parallel: true })),
      cut: await code(pool.decrypt(file.subarray(0, file.length - 65536 - 16), { privateKey, parallel: true })),
      wrongKey: await code(pool.decrypt(file, { privateKey: hs.generateKeyPair({ kind: 'x25519' }).privateKey })),
      notBytes: await code(pool.encrypt(42, { privateKey })),
    }
    pool.terminate()
    return { opened, bad }
  }, { files: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, b64(v)])), privateKey: readFileSync(key, 'utf8'), B64: PAGE_B64 })
  const sha = (b) => [...createHash('sha256').update(b).digest()]
  for (const name of ['hs', 'age', 'pass']) assert.deepEqual(r.opened[name], sha(pt), name)
  for (const name of ['small', 'armored']) assert.deepEqual(r.opened[name], sha(small), name)
  assert.deepEqual(r.bad, { flipped: 'ERR_HYPERSEAL_AUTH', cut: 'ERR_HYPERSEAL_AUTH', wrongKey: 'ERR_HYPERSEAL_NO_IDENTITY', notBytes: 'ERR_HYPERSEAL_ARGUMENT' })
})

test('a worker that never answers fails the call at the deadline, a crashed one at once; the pool recovers', async () => {
  const r = await h.inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    // A call still pending after 10 s counts as hung (the deadline below is 1.5 s).
    const fail = async (p) => {
      const t = performance.now()
      const late = new Promise((resolve) => setTimeout(() => resolve('late'), 10_000))
      try { return (await Promise.race([p, late])) === 'late' ? { code: 'still pending after 10 s' } : { code: 'no error' } } catch (e) { return { code: e.code, message: e.message, ms: performance.now() - t } }
    }
    const data = new Uint8Array(3 << 20).fill(9)
    const url = new URL('/test/faulty-worker.js', location.href)
    const pool = new hs.WorkerPool({ size: 2, url, timeoutMs: 1500 })
    await pool.ready()
    const hang = await fail(pool.run('hang'))
    const afterHang = pool.workers.length
    const crash = await fail(pool.run('crash'))
    // Recovery: fresh workers replace the lost ones, and a file in parts comes out whole.
    const sealed = await pool.encrypt(data, { publicKey, format: 'age', parallel: true })
    const back = hs.decryptByPrivateKey(sealed, privateKey)
    const recovered = back.length === data.length && back.every((b) => b === 9) && pool.workers.length === 2
    pool.terminate()
    // A part that never comes back fails the whole call; nothing is returned.
    const stuck = new hs.WorkerPool({ size: 2, url: new URL('/test/faulty-worker.js?parts=hang', location.href), timeoutMs: 1500 })
    const parts = await fail(stuck.encrypt(data, { publicKey, parallel: true }))
    stuck.terminate()
    return { hang, afterHang, crash, recovered, parts }
  })
  assert.equal(r.hang.code, 'ERR_HYPERSEAL_IO')
  assert.match(r.hang.message, /did not answer within 1500 ms/)
  assert.ok(r.hang.ms >= 1400 && r.hang.ms < 10_000, `${r.hang.ms} ms`)
  assert.equal(r.afterHang, 1, 'the silent worker was stopped and dropped')
  assert.equal(r.crash.code, 'ERR_HYPERSEAL_IO')
  assert.match(r.crash.message, /worker failed/)
  assert.ok(r.crash.ms < 1400, `a crash fails at once, not at the deadline (${r.crash.ms} ms)`)
  assert.ok(r.recovered)
  assert.equal(r.parts.code, 'ERR_HYPERSEAL_IO')
  assert.match(r.parts.message, /did not answer/)
})
