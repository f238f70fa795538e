// Folders dropped on the Encrypt tab's Files input (a real drop of paths on the disk, through
// DevTools' Input.dispatchDragEvent, as the OS gives one): every file under them is encrypted
// to its own path under the chosen folder (OPFS "out" here), and the real age opens each; a
// run that fails part-way removes the files and the folders it made; choosing files with the
// input's dialog after a drop forgets the drop.

import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, encryptFiles, saved, clearSaved, age, ageKey } from './app.mjs'

let app, page, disk
const key = ageKey()

before(async () => {
  app = await startApp()
  page = app.page
  disk = join(app.work, 'disk')
})
after(async () => { await app?.close() })
beforeEach(async () => {
  await clearSaved(page)
  await page.reload()
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
  rmSync(disk, { recursive: true, force: true })
})

/** Writes `files` (path → bytes) under `disk`. */
function lay (files) {
  for (const [path, data] of Object.entries(files)) {
    mkdirSync(join(disk, path, '..'), { recursive: true })
    writeFileSync(join(disk, path), data)
  }
}

/** Drops `paths` (under `disk`) on the Encrypt tab's Files input, and waits for the page to list them. */
async function drop (paths) {
  await page.getByRole('tab', { name: 'Encrypt' }).click()
  const box = await page.getByLabel('Files').first().boundingBox()
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 }
  const data = { items: [], files: paths.map((p) => join(disk, p)), dragOperationsMask: 1 }
  const cdp = await app.context.newCDPSession(page)
  for (const type of ['dragEnter', 'dragOver', 'drop']) await cdp.send('Input.dispatchDragEvent', { type, ...at, data })
  await page.waitForFunction(() => document.getElementById('enc-files-help').textContent.startsWith('Dropped'))
  return page.locator('#enc-files-help').textContent()
}

/** Every path in the OPFS, folders (ending in /) and files. */
const everything = () => page.evaluate(async () => {
  const out = []
  const walk = async (dir, prefix) => {
    for await (const [name, h] of dir.entries()) {
      out.push(`${prefix}${name}${h.kind === 'directory' ? '/' : ''}`)
      if (h.kind === 'directory') await walk(h, `${prefix}${name}/`)
    }
  }
  await walk(await navigator.storage.getDirectory(), '')
  return out.sort()
})

function ageOpens (sealed) {
  const file = join(app.work, 'in.age')
  const id = join(app.work, 'key.txt')
  writeFileSync(file, sealed)
  writeFileSync(id, key.identity + '\n')
  return age('age', ['-d', '-i', id, file])
}

test('a dropped folder and a file: each file at its path under the chosen folder, and age opens it', async () => {
  const files = {
    'photos/a.jpg': randomBytes(1000),
    'photos/2024/b.jpg': randomBytes(70_000),
    'photos/2024/deep/c.txt': randomBytes(5),
    'photos/empty': Buffer.alloc(0),
    'notes.txt': randomBytes(300),
  }
  lay(files)
  assert.match(await drop(['photos', 'notes.txt']), /^Dropped: 5 files/)
  const r = await encryptFiles(page, null, { recipients: key.recipient })
  assert.equal(r.alert, '')
  assert.match(r.status, /^Encrypted 5 files \(.*\)\. Done$/)
  const out = await saved(page)
  assert.deepEqual(Object.keys(out).sort(), Object.keys(files).map((p) => `out/${p}.age`).sort())
  for (const [path, data] of Object.entries(files)) assert.ok(ageOpens(out[`out/${path}.age`]).equals(data), path)
})

test('a dropped folder whose last file is gone when the run reaches it: nothing left, no folder either', async () => {
  lay({ 'docs/a.txt': randomBytes(100), 'docs/sub/b.txt': randomBytes(100), 'docs/z.txt': randomBytes(100) })
  await drop(['docs'])
  // Taken away after the drop: the files before it are written, then the run fails.
  rmSync(join(disk, 'docs/z.txt'))
  const r = await encryptFiles(page, null, { recipients: key.recipient })
  assert.notEqual(r.alert, '')
  assert.doesNotMatch(r.status, /Done$/)
  // The chosen folder itself ("out", the test's picker) stays; all the run made in it is gone.
  assert.deepEqual(await everything(), ['out/'])
})

test('choosing files with the input after a drop forgets the drop', async () => {
  lay({ 'keep/a.txt': randomBytes(10) })
  await drop(['keep'])
  const data = randomBytes(20)
  const r = await encryptFiles(page, [{ name: 'other.txt', mimeType: 'text/plain', buffer: data }], { recipients: key.recipient })
  assert.match(r.status, /^Encrypted other\.txt to other\.txt\.age\. Done$/)
  assert.deepEqual(Object.keys(await saved(page)), ['other.txt.age'])
  assert.match(await page.locator('#enc-files-help').textContent(), /^Or drop files and folders here/)
})
