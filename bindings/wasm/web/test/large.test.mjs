// A large file read from the disk, encrypted and then decrypted by the app: the same bytes
// (so the same SHA-256) come back, and the memory of the tab's renderer processes (its page
// and service worker, with their workers, which are threads of the same processes) stays
// within 256 MiB of the idle page. 64 MiB in `make test`; WEB_LARGE=1 makes it 4 GiB (needs about 13 GiB of disk).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startApp, encryptFiles, decryptFiles, chooseSaved, ageKey } from './app.mjs'
import { bigFile, rendererMemory, measured } from './measure.mjs'

const SIZE = process.env.WEB_LARGE === '1' ? 4 * 2 ** 30 : 64 * 2 ** 20
const BOUND = 256 * 2 ** 20

let app, page

before(async () => {
  app = await startApp()
  page = app.page
})
after(async () => { await app?.close() })

/**
 * Where the decrypted OPFS file `name` first differs from the file still chosen in the Encrypt
 * tab (the original, from the disk), or -1 where they are the same bytes (so the same SHA-256);
 * compared in the page, 16 MiB at a time, so 4 GiB need not cross to this process.
 */
const firstDifference = (name) => page.evaluate(async (name) => {
  const a = document.getElementById('enc-files').files[0]
  const b = await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()
  if (a.size !== b.size) return Math.min(a.size, b.size)
  for (let at = 0; at < a.size; at += 16 << 20) {
    const [x, y] = await Promise.all([a, b].map(async (f) => new Uint8Array(await f.slice(at, at + (16 << 20)).arrayBuffer())))
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return at + i
  }
  return -1
}, name)

test(`a ${SIZE / 2 ** 20} MiB file from disk: encrypt, decrypt, the same bytes, memory within 256 MiB of idle`, { timeout: 3_600_000 }, async () => {
  const path = join(app.work, 'big.bin')
  bigFile(path, SIZE)
  const { identity: key, recipient } = ageKey()
  const idle = rendererMemory(app.work)

  let r
  const { peak: encPeak } = await measured(app.work, idle, async () => {
    r = await encryptFiles(page, path, { recipients: recipient })
  })
  assert.equal(r.alert, '')
  assert.match(await page.locator('#speed').textContent(), /^\d+\.\d MB\/s$/)
  console.log(`encrypt: ${await page.locator('#speed').textContent()}, renderers +${(encPeak / 2 ** 20).toFixed(0)} MiB over idle ${(idle / 2 ** 20).toFixed(0)} MiB`)

  // The encrypted file, a File from the OPFS on disk, goes to the Decrypt tab's input.
  await chooseSaved(page, 'big.bin.age')
  const { peak: decPeak } = await measured(app.work, idle, async () => {
    r = await decryptFiles(page, null, { identities: key })
  })
  assert.equal(r.alert, '')
  assert.equal(r.status, 'Decrypted big.bin.age to big.bin. Done')
  console.log(`decrypt: ${await page.locator('#speed').textContent()}, renderers +${(decPeak / 2 ** 20).toFixed(0)} MiB`)
  assert.equal(await firstDifference('big.bin'), -1, 'the decrypted file is the original')
  assert.ok(encPeak < BOUND && decPeak < BOUND, `memory above idle: ${encPeak} and ${decPeak} bytes`)
})
