// Off the main thread: WorkerPool (js/workers.js + js/worker.js) in Chromium. 100 MB encrypted
// and decrypted in a worker while the main thread has no long task over 50 ms; several files at
// once across workers, opened by the native CLI; errors with their codes; and the demo page
// (demo/) driven like a person would, its downloads opened by the CLI, its screenshot saved to
// bench-report/browser-demo.png (copied to docs/ for the README).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, cliKey, b64, unb64, REPO } from './harness.mjs'

let h, key, pub

before(async () => {
  h = await startBrowser()
  ;({ key, pub } = cliKey(h.work))
})
after(async () => { await h?.close() })

test('100 MB through a worker: the main thread has no long task over 50 ms; progress reaches the end', async () => {
  const r = await h.inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const n = 100 * 1000 * 1000
    const data = new Uint8Array(n)
    for (let off = 0; off < n; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(n, off + 65536)))
    const pool = new hs.WorkerPool({ size: 1 })
    await pool.run('errorCodes') // the worker has loaded its module before the watch starts
    // Copying 100 MB into a Blob is the test's own work on the main thread (~0.1 s, with the
    // garbage collection after it): done and settled before the watch starts.
    const blob = new Blob([data])
    await new Promise((resolve) => setTimeout(resolve, 500))
    const long = []
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) long.push(Math.round(e.duration)) })
    observer.observe({ type: 'longtask' })
    const seen = []
    const sealed = await pool.encryptFile(blob, { publicKey, onProgress: (b) => seen.push(b) })
    const plain = await pool.decryptFile(sealed, { privateKey })
    await new Promise((resolve) => setTimeout(resolve, 100)) // let the observer deliver
    observer.disconnect()
    pool.terminate()
    const back = new Uint8Array(await plain.arrayBuffer())
    const want = hs.hash('blake3', data)
    const same = back.length === n && hs.hash('blake3', back).every((b, i) => b === want[i])
    return { long, same, progress: seen.length, last: seen.at(-1), sealed: sealed.size }
  })
  assert.ok(r.same)
  assert.deepEqual(r.long, [], `long tasks on the main thread (ms): ${r.long}`)
  assert.ok(r.progress >= 20, `${r.progress} progress events`) // about one per MiB read
  assert.equal(r.last, 100_000_000)
  assert.ok(r.sealed > 100_000_000)
})

test('several files at once across workers open with the native CLI; errors keep their codes', async () => {
  const pts = [randomBytes(300_001), randomBytes(65536), randomBytes(0), randomBytes(1_000_000)]
  const r = await h.inPage(async (hs, { pub, pts, cliKey }) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    const pool = new hs.WorkerPool({ size: 2 })
    const opts = [{ publicKey: pub }, { publicKey: [pub], format: 'age' }, { passphrase: 'pool pass' }, { passphrase: 'pool pass', format: 'age' }]
    const sealed = await Promise.all(pts.map((p, i) => pool.encryptFile(new Blob([bytes(p)]), opts[i])))
    const code = async (p) => { try { await p; return 'no error' } catch (e) { return e.code } }
    const other = hs.generateKeyPair({ kind: 'x25519' })
    const first = new Uint8Array(await sealed[0].arrayBuffer())
    const out = {
      files: await Promise.all(sealed.map(async (s) => b64(new Uint8Array(await s.arrayBuffer())))),
      workers: pool.workers.length,
      wrongKey: await code(pool.decryptFile(sealed[0], { privateKey: other.privateKey })),
      cut: await code(pool.decryptFile(new Blob([first.subarray(0, first.length - 10)]), { privateKey: cliKey })),
      wrongPass: await code(pool.decryptFile(sealed[2], { passphrase: 'nope' })),
      notABlob: await code(pool.encryptFile(new Uint8Array(3), { publicKey: pub })),
      badName: await code(pool.run('nonesuch')),
      kdf: b64(await pool.run('kdfArgon2id', 'pw', 'saltsalt', { memoryKib: 64, timeCost: 1 })),
      kdfHere: b64(await hs.kdfArgon2id('pw', 'saltsalt', { memoryKib: 64, timeCost: 1 })),
    }
    pool.terminate()
    return out
  }, { pub, pts: pts.map(b64), cliKey: readFileSync(key, 'utf8') })
  assert.equal(r.workers, 2)
  assert.equal(r.kdf, r.kdfHere)
  assert.equal(r.wrongKey, 'ERR_HYPERSEAL_NO_IDENTITY')
  assert.equal(r.cut, 'ERR_HYPERSEAL_AUTH')
  assert.equal(r.wrongPass, 'ERR_HYPERSEAL_AUTH')
  assert.equal(r.notABlob, 'ERR_HYPERSEAL_ARGUMENT')
  assert.equal(r.badName, 'ERR_HYPERSEAL_ARGUMENT')
  writeFileSync(join(h.work, 'pass'), 'pool pass\n')
  r.files.forEach((f, i) => {
    writeFileSync(join(h.work, `pool-${i}`), unb64(f))
    const how = i < 2 ? ['-i', key] : ['--passphrase-file', join(h.work, 'pass')]
    assert.deepEqual(cli(['decrypt', '-q', ...how, join(h.work, `pool-${i}`)]), pts[i], `file ${i}`)
  })
})

test('the demo page: encrypt to a recipient and decrypt with a passphrase, as a person would; downloads open with the CLI', async () => {
  const page = await h.open('/demo/index.html')
  const pt = randomBytes(3_000_000)
  const plainPath = join(h.work, 'report.pdf')
  writeFileSync(plainPath, pt)
  writeFileSync(join(h.work, 'pass'), 'demo passphrase\n')
  const cliFile = join(h.work, 'notes.txt.hs')
  writeFileSync(cliFile, cli(['encrypt', '-q', '--passphrase-file', join(h.work, 'pass'), plainPath]))

  // Encrypt: a file, the CLI's public key, age format.
  await page.setInputFiles('#enc-file', plainPath)
  await page.fill('#enc-recipient', pub)
  await page.selectOption('#enc-format', 'age')
  await page.click('#enc-go')
  await page.waitForSelector('#enc-download')
  // Decrypt: a CLI file and its passphrase.
  await page.setInputFiles('#dec-file', cliFile)
  await page.fill('#dec-passphrase', 'demo passphrase')
  await page.click('#dec-go')
  await page.waitForSelector('#dec-download')
  mkdirSync(join(REPO, 'bench-report'), { recursive: true })
  await page.screenshot({ path: join(REPO, 'bench-report/browser-demo.png') })

  const save = async (selector) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)])
    const path = join(h.work, download.suggestedFilename())
    await download.saveAs(path)
    return path
  }
  const sealedPath = await save('#enc-download')
  assert.equal(sealedPath.endsWith('report.pdf.age'), true)
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, sealedPath]), pt)
  const openedPath = await save('#dec-download')
  assert.equal(openedPath.endsWith('notes.txt'), true)
  assert.deepEqual(readFileSync(openedPath), pt)
  assert.equal(await page.getAttribute('#enc-progress', 'value'), String(pt.length))

  // A wrong passphrase shows the error and its code, and offers nothing to download.
  await page.fill('#dec-passphrase', 'wrong')
  await page.click('#dec-go')
  await page.waitForSelector('#dec-error')
  assert.match(await page.textContent('#dec-error'), /ERR_HYPERSEAL_AUTH/)
  assert.equal(await page.$('#dec-download'), null)

  // A private key (here: the page's own New key pair) works as well.
  await page.click('#enc-mode-recipient')
  await page.click('#keygen')
  const [keyDownload] = await Promise.all([page.waitForEvent('download'), page.click('#keygen-download')])
  const pageKey = join(h.work, 'page-key.txt')
  await keyDownload.saveAs(pageKey)
  await page.selectOption('#enc-format', 'hyperseal')
  await page.click('#enc-go')
  await page.waitForSelector('#enc-download')
  const pageSealed = await save('#enc-download')
  assert.deepEqual(cli(['decrypt', '-q', '-i', pageKey, pageSealed]), pt)
  await page.close()
})
