// A large file read from the disk, encrypted and then decrypted by the app: the same SHA-256
// comes back, and the memory of the tab's renderer processes (its page and service worker,
// with their workers, which are threads of the same processes) stays within 256 MiB of the
// idle page. 64 MiB in `make test`; WEB_LARGE=1 makes it 4 GiB (needs about 13 GiB of disk).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
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

/** The SHA-256 of OPFS file `name`, read back from the page in 8 MiB slices. */
async function savedSha256 (name) {
  const sum = createHash('sha256')
  const size = await page.evaluate(async (name) => (await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()).size, name)
  for (let at = 0; at < size; at += 8 << 20) {
    const b64 = await page.evaluate(async ([name, at]) => {
      const file = await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()
      const u8 = new Uint8Array(await file.slice(at, at + (8 << 20)).arrayBuffer())
      let s = ''
      for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000))
      return btoa(s)
    }, [name, at])
    sum.update(Buffer.from(b64, 'base64'))
  }
  return sum.digest('hex')
}

test(`a ${SIZE / 2 ** 20} MiB file from disk: encrypt, decrypt, the same SHA-256, memory within 256 MiB of idle`, { timeout: 3_600_000 }, async () => {
  const path = join(app.work, 'big.bin')
  const want = bigFile(path, SIZE)
  const { identity: key, recipient } = ageKey()
  const idle = rendererMemory(app.work)

  let r
  const { peak: encPeak } = await measured(app.work, idle, async () => {
    r = await encryptFiles(page, path, { recipients: recipient })
  })
  assert.equal(r.alert, '')
  console.log(`encrypt: ${await page.locator('#speed').textContent()}, renderers +${(encPeak / 2 ** 20).toFixed(0)} MiB over idle ${(idle / 2 ** 20).toFixed(0)} MiB`)

  // The encrypted file, a File from the OPFS on disk, goes to the Decrypt tab's input.
  await chooseSaved(page, 'big.bin.age')
  const { peak: decPeak } = await measured(app.work, idle, async () => {
    r = await decryptFiles(page, null, { identities: key })
  })
  assert.equal(r.alert, '')
  assert.equal(r.status, 'Decrypted big.bin.age to big.bin. Done')
  console.log(`decrypt: ${await page.locator('#speed').textContent()}, renderers +${(decPeak / 2 ** 20).toFixed(0)} MiB`)
  assert.equal(await savedSha256('big.bin'), want)
  assert.ok(encPeak < BOUND && decPeak < BOUND, `memory above idle: ${encPeak} and ${decPeak} bytes`)
})
