// The npm package's WebAssembly build, as installed in APP (node_modules/hyperseal/browser), in
// headless Chromium through the browser tests' harness: a page encrypts to KEY's recipient and
// the installed CLI ($HS) opens the result; the page opens what that CLI wrote.
// Usage: node dist-test-browser.mjs APP KEY RECIPIENT
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startBrowser } from '../bindings/wasm/test/harness.mjs'

const [app, key, pub] = process.argv.slice(2)
const hs = (args, input) => execFileSync(process.env.HS, args, { input, maxBuffer: 1 << 28 })
const pt = randomBytes(300_000)
writeFileSync(join(app, 'pt'), pt)
const fromCli = hs(['encrypt', '-q', '-r', pub, '--format', 'age', join(app, 'pt')])
// The harness's server never serves node_modules/: the installed package's browser/ is copied
// beside the page as it is.
cpSync(join(app, 'node_modules/hyperseal/browser'), join(app, 'web/browser'), { recursive: true })
const b = await startBrowser({ root: app, pagePath: '/page.html' })
try {
  const r = await b.inPage(async (hs, { key, pub, file, pt }) => {
    const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0))
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    const wasm = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm'))
    return { wasm, opened: b64(hs.decryptByPrivateKey(bytes(file), key)), sealed: b64(hs.encryptByPublicKey(bytes(pt), pub)) }
  }, { key: readFileSync(key, 'utf8'), pub, file: fromCli.toString('base64'), pt: pt.toString('base64') })
  assert.ok(r.wasm.some((u) => u.endsWith('/web/browser/pkg/hyperseal_bg.wasm')), r.wasm.join(' '))
  assert.deepEqual(Buffer.from(r.opened, 'base64'), pt)
  writeFileSync(join(app, 'sealed'), Buffer.from(r.sealed, 'base64'))
  assert.deepEqual(hs(['decrypt', '-q', '-i', key, join(app, 'sealed')]), pt)
  console.log('   browser: the installed wasm build and the installed CLI open each other\'s files')
} finally { await b.close() }
