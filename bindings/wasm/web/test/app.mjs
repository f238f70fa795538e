// What the web app's tests share: target/web (`make web`) served by a plain static server (no
// COOP/COEP headers, as most hosts send none), Debian's headless Chromium driven by
// playwright-core, and the two save pickers replaced by ones that return Origin Private File
// System handles, so the app's own way out is the one tested. The real age (.tools/bin/age,
// `make age`) opens what the app writes and makes what it opens.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { serve } from '../../test/serve.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
export const REPO = join(HERE, '../../../..')
export const WEB = join(REPO, 'target/web')
export const AGE_BIN = join(REPO, '.tools/bin')
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'

/** Runs the real age (or age-keygen) with `args`; `env` adds to the environment. */
export function age (tool, args, { input, env } = {}) {
  return execFileSync(join(AGE_BIN, tool), args, {
    input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${AGE_BIN}:${process.env.PATH}`, ...env },
  })
}

/** A key pair from age-keygen (`pq`: ML-KEM-768 + X25519): `{ identity, recipient }`. */
export function ageKey (pq = false) {
  const identity = age('age-keygen', pq ? ['-pq'] : []).toString().split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))
  const recipient = age('age-keygen', ['-y'], { input: identity + '\n' }).toString().trim()
  return { identity, recipient }
}

// The pickers, replaced before the app's scripts run: each call is counted (so a test can say
// none was made), one file goes to the OPFS root, several to its folder "out".
const PICKERS = () => {
  window.pickerCalls = 0
  window.showSaveFilePicker = async ({ suggestedName }) => {
    window.pickerCalls++
    return (await navigator.storage.getDirectory()).getFileHandle(suggestedName, { create: true })
  }
  window.showDirectoryPicker = async () => {
    window.pickerCalls++
    return (await navigator.storage.getDirectory()).getDirectoryHandle('out', { create: true })
  }
}

/**
 * Starts the server and Chromium and opens the app at `host` (`localhost` for passkeys: an IP
 * address cannot be a relying party). Returns `{ page, context, server, origin, requests, work, close }`;
 * `requests` collects every URL the browser asked for (the DevTools network log).
 */
export async function startApp ({ host = '127.0.0.1', bypassCSP = false } = {}) {
  for (const [what, path] of [['target/web (make web)', join(WEB, 'index.html')], ['age (make age)', join(AGE_BIN, 'age')], ['Chromium', CHROMIUM]]) {
    if (!existsSync(path)) throw new Error(`${what} is missing: ${path}`)
  }
  const work = mkdtempSync(join(tmpdir(), 'hyperseal-web-test-'))
  let server = await serve(WEB, { isolated: false })
  const port = new URL(server.url).port
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    bypassCSP,
    viewport: { width: 900, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  })
  await context.addInitScript(PICKERS)
  const requests = []
  context.on('request', (r) => requests.push(r.url()))
  const errors = []
  const page = context.pages()[0] ?? await context.newPage()
  page.on('pageerror', (e) => errors.push(e))
  const origin = `http://${host}:${port}`
  await page.goto(`${origin}/`)
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
  assert.deepEqual(errors, [])
  console.log(`# browser: Chromium ${context.browser()?.version() ?? ''}`)
  return {
    page, context, origin, requests, work, errors,
    /** Stops the server (the offline test); `restart` is not needed after. */
    stopServer: async () => { await server.close(); server = null },
    close: async () => {
      await context.close()
      await server?.close()
      rmSync(work, { recursive: true, force: true })
    },
  }
}

/** The panel of tab `name` ("Encrypt" or "Decrypt"), selected. */
export async function tab (page, name) {
  await page.getByRole('tab', { name }).click()
  return page.getByRole('tabpanel', { name })
}

/** Waits until the operation ended: the status says "Done" or an alert has text. */
export async function settled (page) {
  await page.waitForFunction(() => {
    const s = document.querySelector('[role=status]').textContent
    return /Done$/.test(s) || document.querySelector('[role=alert]').textContent !== ''
  }, null, { timeout: 120_000 })
  return {
    status: await page.getByRole('status').textContent(),
    alert: await page.getByRole('alert').textContent(),
  }
}

/**
 * Fills the Encrypt tab and clicks "Encrypt files" (`files`: what Playwright's setInputFiles
 * takes, or null where the input already holds them); returns the status and the alert.
 */
export async function encryptFiles (page, files, { recipients = '', passphrase = '', armor = false } = {}) {
  const panel = await tab(page, 'Encrypt')
  if (files) await panel.getByLabel('Files').setInputFiles(files)
  await panel.getByRole('textbox', { name: 'Recipients' }).fill(recipients)
  await panel.getByLabel('Passphrase').fill(passphrase)
  await panel.getByRole('checkbox', { name: 'Armor' }).setChecked(armor)
  await panel.getByRole('button', { name: 'Encrypt files' }).click()
  return settled(page)
}

/** Fills the Decrypt tab and clicks "Decrypt files" (`files` as for `encryptFiles`). */
export async function decryptFiles (page, files, { identities = '', passphrase = '' } = {}) {
  const panel = await tab(page, 'Decrypt')
  if (files) await panel.getByLabel('Files').setInputFiles(files)
  await panel.getByRole('textbox', { name: 'Identities' }).fill(identities)
  await panel.getByLabel('Passphrase').fill(passphrase)
  await panel.getByRole('button', { name: 'Decrypt files' }).click()
  return settled(page)
}

/** Puts OPFS file `name` (a File on the disk) in the Decrypt tab's file input. */
export async function chooseSaved (page, name) {
  await tab(page, 'Decrypt')
  await page.evaluate(async (name) => {
    const file = await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()
    const dt = new DataTransfer()
    dt.items.add(file)
    document.getElementById('dec-files').files = dt.files
  }, name)
}

/** Every file in the OPFS (path → bytes), read back from the page. */
export async function saved (page) {
  const list = await page.evaluate(async () => {
    const out = {}
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    const walk = async (dir, prefix) => {
      for await (const [name, h] of dir.entries()) {
        if (h.kind === 'directory') await walk(h, `${prefix}${name}/`)
        else out[`${prefix}${name}`] = b64(new Uint8Array(await (await h.getFile()).arrayBuffer()))
      }
    }
    await walk(await navigator.storage.getDirectory(), '')
    return out
  })
  return Object.fromEntries(Object.entries(list).map(([k, v]) => [k, Buffer.from(v, 'base64')]))
}

/** Empties the OPFS between tests. */
export async function clearSaved (page) {
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory()
    for await (const name of root.keys()) await root.removeEntry(name, { recursive: true })
  })
}

/** Files for `encryptFiles`/`decryptFiles`, from `[name, bytes]` pairs. */
export const asFiles = (files) => files.map(([name, buffer]) => ({ name, mimeType: 'application/octet-stream', buffer }))

/** A fresh page for the next test: nothing saved, reloaded, the app ready. */
export async function freshPage (page) {
  await clearSaved(page)
  await page.reload()
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
}

/** The number of save dialogs the app opened since the page loaded. */
export const pickerCalls = (page) => page.evaluate(() => window.pickerCalls)
