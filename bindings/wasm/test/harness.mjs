// What every browser test file shares: Debian's headless Chromium driven by playwright-core,
// pages served over HTTP on 127.0.0.1, the native CLI (target/release/hyperseal) for files that
// cross between the page and native code. `make wasm-test` builds pkg/ and the CLI and installs
// Chromium first.

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { serve } from './serve.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
export const PKG_ROOT = join(HERE, '..')
export const REPO = join(PKG_ROOT, '../..')
export const CLI = join(REPO, 'target/release/hyperseal')
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'

export const b64 = (buf) => Buffer.from(buf).toString('base64')
export const unb64 = (s) => Buffer.from(s, 'base64')

export function cli (args, input) {
  return execFileSync(CLI, args, { input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] })
}

/** An X25519 key made by the CLI in `dir`: `{ key }` (its file) and `{ pub }` (its recipient). */
export function cliKey (dir) {
  const key = join(dir, 'key')
  cli(['keygen', '--kind', 'x25519', '-o', key])
  return { key, pub: cli(['pubkey', '-i', key]).toString().trim() }
}

/**
 * Base64 both ways inside the page (it has no Buffer), as source for `new Function`:
 * `const { bytes, b64 } = new Function(`${PAGE_B64}; return { bytes, b64 }`)()`.
 */
export const PAGE_B64 = `
  const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
  const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
`

/**
 * Starts Chromium on `pagePath` (under `root`, default the package) and waits until
 * `window.hyperseal` exists; `isolated: false` serves it without COOP/COEP; `needsCli: false`
 * for a file that never runs the native CLI. Returns `{ page, context, work, inPage, open, close }`;
 * `inPage(fn, arg)` runs `fn(hs, arg)` in the page, with `hs` the initialised package.
 */
export async function startBrowser ({ root = PKG_ROOT, pagePath = '/test/page.html', isolated = true, needsCli = true } = {}) {
  const needed = [['pkg/ (make wasm)', join(PKG_ROOT, 'pkg/hyperseal_bg.wasm')], ['Chromium', CHROMIUM]]
  for (const [what, path] of needsCli ? [...needed, ['the CLI', CLI]] : needed) {
    if (!existsSync(path)) throw new Error(`${what} is missing: ${path}`)
  }
  const work = mkdtempSync(join(tmpdir(), 'hyperseal-wasm-test-'))
  const server = await serve(root, { isolated })
  const context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1100, height: 760 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--js-flags=--expose-gc'],
  })
  const errors = []
  /** Opens `path` in a page and waits for `window.hyperseal`. */
  const open = async (path, page) => {
    page ??= await context.newPage()
    page.on('pageerror', (e) => errors.push(e))
    await page.goto(`${server.url}${path}`)
    await page.waitForFunction(() => window.hyperseal !== undefined)
    await page.evaluate(() => window.hyperseal)
    assert.deepEqual(errors, [])
    return page
  }
  const page = await open(pagePath, context.pages()[0])
  console.log(`# browser: ${context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent))}`)
  const inPage = (fn, arg, on = page) => on.evaluate(async ([src, arg]) => {
    const hs = await window.hyperseal
    // eslint-disable-next-line no-new-func
    return await (new Function('return ' + src)())(hs, arg)
  }, [fn.toString(), arg])
  const close = async () => {
    await context.close()
    await server.close()
    rmSync(work, { recursive: true, force: true })
  }
  return { page, context, server, work, inPage, open, close }
}
