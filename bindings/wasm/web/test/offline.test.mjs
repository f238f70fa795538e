// The app with the server gone: after the first visit its service worker holds every file, so
// a reload with the server stopped opens the page, loads the WebAssembly and encrypts a file.
// The worker's list is every file of target/web (the build writes it), checked here too, and
// Chromium's own check finds the page installable.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, tab, settled, saved, age, ageKey, WEB } from './app.mjs'

let app

before(async () => { app = await startApp() })
after(async () => { await app?.close() })

test('the service worker precaches every file the build wrote', async () => {
  const { page } = app
  await page.evaluate(() => navigator.serviceWorker.ready)
  const cached = await page.evaluate(async () => {
    const names = await caches.keys()
    const cache = await caches.open(names.find((n) => n.startsWith('hyperseal-web-')))
    return (await cache.keys()).map((r) => new URL(r.url).pathname).sort()
  })
  const built = readFileSync(join(WEB, 'SHA256SUMS'), 'utf8').trim().split('\n')
    .map((l) => `/${l.split(/\s+/)[1]}`).filter((p) => p !== '/sw.js' && p !== '/SHA256SUMS')
  assert.deepEqual(cached, ['/', ...built].sort())
})

test('Chromium finds the page installable as an app (its manifest, icon and service worker)', async () => {
  const cdp = await app.context.newCDPSession(app.page)
  const manifest = await cdp.send('Page.getAppManifest')
  assert.deepEqual(manifest.errors, [])
  assert.match(manifest.url, /\/manifest\.webmanifest$/)
  assert.deepEqual((await cdp.send('Page.getInstallabilityErrors')).installabilityErrors, [])
  await cdp.detach()
})

test('a reload with the server stopped works: the page, its WebAssembly, an encryption', async () => {
  const { page } = app
  // The first load installed the worker; a reload puts the page under its control.
  await page.reload()
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null)
  await app.stopServer()
  await page.reload()
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
  const key = ageKey()
  const data = Buffer.from('written while offline\n')
  const panel = await tab(page, 'Encrypt')
  await panel.getByLabel('Files').setInputFiles({ name: 'offline.txt', mimeType: 'text/plain', buffer: data })
  await panel.getByRole('textbox', { name: 'Recipients' }).fill(key.recipient)
  await panel.getByRole('button', { name: 'Encrypt files' }).click()
  const r = await settled(page)
  assert.equal(r.alert, '')
  assert.match(r.status, /Done$/)
  const sealed = (await saved(page))['offline.txt.age']
  const file = join(app.work, 'offline.age')
  const keyFile = join(app.work, 'key')
  writeFileSync(file, sealed)
  writeFileSync(keyFile, key.identity + '\n')
  assert.ok(age('age', ['-d', '-i', keyFile, file]).equals(data))
  for (const url of app.requests) assert.ok(url.startsWith(`${app.origin}/`), url)
})
