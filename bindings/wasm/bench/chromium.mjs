// What the bench scripts (browser.mjs, ab.mjs) share: the peers bundle, and one bench page in a
// fresh headless Chromium, served from the package on 127.0.0.1 (with COOP/COEP unless
// `isolated: false`), with `gc()` exposed so each figure can start from a collected heap.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'
import { chromium } from 'playwright-core'
import { serve } from '../test/serve.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')

/** bench/dist/peers.js: peers.js bundled for the page (`window.peers`). */
export async function buildPeers () {
  await esbuild.build({
    entryPoints: [join(HERE, 'peers.js')], outfile: join(HERE, 'dist/peers.js'), bundle: true,
    format: 'iife', platform: 'browser', target: 'es2022', logLevel: 'silent',
  })
}

/**
 * Loads `pagePath` (under the package; at `host`, `localhost` where the page needs WebAuthn: an
 * IP address cannot be a relying-party ID) and runs `use(page, context)`; Chromium, the server and
 * the profile are gone when it returns, whatever happened.
 */
export async function withPage (pagePath, { isolated = true, host = '127.0.0.1' } = {}, use) {
  const server = await serve(ROOT, { isolated })
  const profile = mkdtempSync(join(tmpdir(), 'hyperseal-bench-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--js-flags=--expose-gc'],
  })
  try {
    const page = context.pages()[0] ?? await context.newPage()
    await page.goto(`${server.url.replace('127.0.0.1', host)}${pagePath}`)
    return await use(page, context)
  } finally {
    await context.close()
    await server.close()
    rmSync(profile, { recursive: true, force: true })
  }
}
