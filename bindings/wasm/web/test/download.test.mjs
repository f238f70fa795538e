// The app in a browser without the File System Access API (the save pickers deleted from the
// page): each output is a download streamed through the service worker, never a Blob. The real
// age opens the downloaded file, age's file downloads opened; a damaged file fails its download
// (the browser keeps nothing of it) with the alert; several files at once are refused before
// anything starts, since downloads made before a failure could not be taken back.

import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, encryptFiles, decryptFiles, age, ageKey, asFiles } from './app.mjs'

const MIB = 2 ** 20
let app, page
const key = ageKey()
const downloads = []

before(async () => {
  app = await startApp()
  page = app.page
  page.on('download', (d) => downloads.push(d))
  // The largest Blob the page makes: the output must stream, never be gathered in one.
  await app.context.addInitScript(() => {
    const Native = window.Blob
    window.largestBlob = 0
    window.Blob = class extends Native {
      static [Symbol.hasInstance] (x) { return x instanceof Native }
      constructor (...args) {
        super(...args)
        window.largestBlob = Math.max(window.largestBlob, this.size)
      }
    }
  })
  await page.evaluate(() => navigator.serviceWorker.ready)
})
after(async () => { await app?.close() })
beforeEach(async () => {
  downloads.length = 0
  await page.reload()
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null && document.documentElement.dataset.ready === 'true')
  // As in a browser that has no pickers.
  await page.evaluate(() => { delete window.showSaveFilePicker; delete window.showDirectoryPicker })
})


function ageSeals (data) {
  const plain = join(app.work, 'plain')
  writeFileSync(plain, data)
  return age('age', ['-r', key.recipient, plain])
}

/** The one download this test's operation made: its name and bytes (null where it failed). */
async function theDownload () {
  assert.equal(downloads.length, 1, 'one download')
  const d = downloads[0]
  const failure = await d.failure()
  const path = await d.path().catch(() => null)
  // A failed download leaves no file (Chromium removes its partial copy).
  const left = path && existsSync(path) ? readFileSync(path) : null
  return { name: d.suggestedFilename(), failure, bytes: left, path }
}

test('encrypt without pickers: one download, made as it goes, that age opens (a large file, in parts)', async () => {
  const data = randomBytes(5 * MIB + 17)
  const r = await encryptFiles(page, asFiles([['big.bin', data]]), { recipients: key.recipient })
  assert.equal(r.alert, '')
  assert.equal(r.status, 'Encrypted big.bin to big.bin.age. Done')
  const d = await theDownload()
  assert.equal(d.name, 'big.bin.age')
  assert.equal(d.failure, null)
  const file = join(app.work, 'big.bin.age')
  const id = join(app.work, 'key.txt')
  writeFileSync(file, d.bytes)
  writeFileSync(id, key.identity + '\n')
  assert.ok(age('age', ['-d', '-i', id, file]).equals(data))
  // The page never gathered the output in a Blob: the service worker's stream carried it.
  assert.ok(await page.evaluate(() => window.largestBlob) < MIB)
})

test('decrypt without pickers: age\'s file comes down as the plaintext', async () => {
  const data = randomBytes(300_000)
  const r = await decryptFiles(page, asFiles([['doc.txt.age', ageSeals(data)]]), { identities: key.identity })
  assert.equal(r.alert, '')
  assert.match(r.status, /Done$/)
  const d = await theDownload()
  assert.equal(d.name, 'doc.txt')
  assert.ok(d.bytes.equals(data))
})

test('a damaged file: the alert, and its download fails with nothing kept', async () => {
  const sealed = ageSeals(randomBytes(6 * MIB))
  sealed[sealed.length - 100] ^= 1
  const r = await decryptFiles(page, asFiles([['bad.bin.age', sealed]]), { identities: key.identity })
  assert.match(r.alert, /failed to authenticate/)
  assert.doesNotMatch(r.status, /Done$/)
  const d = await theDownload()
  assert.notEqual(d.failure, null, 'the download failed')
  assert.equal(d.bytes, null, `nothing of it is kept (${d.path})`)
})

test('several files without pickers: refused before any download', async () => {
  const r = await encryptFiles(page, asFiles([['a', randomBytes(5)], ['b', randomBytes(5)]]), { recipients: key.recipient })
  assert.match(r.alert, /one file at a time/)
  assert.equal(downloads.length, 0)
})
