// `hyperseal/age` (typage's API) in Chromium, as a page gets it: `import * as age from
// 'hyperseal/age'` bundled by esbuild for the browser (the package's `browser` condition),
// beside the real typage (npm `age-encryption`) in the same page. The suite Node runs
// (bindings/node/test/age-suite.mjs) runs here too: files both ways for every key kind both read,
// JavaScript recipients and identities, streams, detached headers and armor. Then what only a
// page shows: importing loads nothing until the first call, and an unused import bundles to
// nothing.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as esbuild from 'esbuild'
import { startBrowser, PKG_ROOT, REPO } from './harness.mjs'
import { CASES, helpers } from '../../node/test/age-suite.mjs'

let work, app, b

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'hyperseal-age-page-'))
  app = join(work, 'app')
  mkdirSync(join(app, 'node_modules'), { recursive: true })
  // The package as npm lays it out (bindings/node with its staged browser/), and typage.
  symlinkSync(join(REPO, 'bindings/node'), join(app, 'node_modules/hyperseal'))
  symlinkSync(join(PKG_ROOT, 'node_modules/age-encryption'), join(app, 'node_modules/age-encryption'))
  writeFileSync(join(app, 'entry.js'), "import * as age from 'hyperseal/age'\nimport * as typage from 'age-encryption'\nwindow.hyperseal = { age, typage }\n")
  await esbuild.build({
    absWorkingDir: app, entryPoints: ['entry.js'], outdir: 'dist', bundle: true, format: 'esm',
    platform: 'browser', target: 'es2022', logLevel: 'silent',
  })
  copyFileSync(join(REPO, 'bindings/node/browser/pkg/hyperseal_bg.wasm'), join(app, 'dist/hyperseal_bg.wasm'))
  writeFileSync(join(app, 'dist/index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="entry.js"></script>\n')
  b = await startBrowser({ root: app, pagePath: '/dist/index.html', isolated: false })
})

after(async () => {
  await b?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

test('an unused import bundles to nothing (esbuild, minified, browser), as typage\'s does', async () => {
  writeFileSync(join(app, 'unused.js'), "import * as age from 'hyperseal/age'\n")
  const r = await esbuild.build({
    absWorkingDir: app, entryPoints: ['unused.js'], bundle: true, minify: true, format: 'esm',
    platform: 'browser', write: false, logLevel: 'silent',
  })
  assert.equal(r.outputFiles[0].text, '')
})

test('nothing loads on import; the first call loads the WebAssembly', async () => {
  const r = await b.inPage(async ({ age }) => {
    const loadedBefore = performance.getEntriesByType('resource').some((e) => e.name.endsWith('.wasm'))
    let early
    try { age.armor.encode(new Uint8Array(1)) } catch (e) { early = e.code }
    const id = await age.generateIdentity()
    const loadedAfter = performance.getEntriesByType('resource').some((e) => e.name.endsWith('.wasm'))
    return { loadedBefore, early, loadedAfter, id: id.slice(0, 16), armored: age.armor.encode(new Uint8Array(3)).split('\n')[0] }
  })
  assert.deepEqual(r, {
    loadedBefore: false, early: 'ERR_HYPERSEAL_ARGUMENT', loadedAfter: true, id: 'AGE-SECRET-KEY-1', armored: '-----BEGIN AGE ENCRYPTED FILE-----',
  })
})

test('typage\'s classic-script recipe: an IIFE bundle in a <script> tag finds the .wasm beside it', async () => {
  writeFileSync(join(app, 'classic.js'), "export * from 'hyperseal/age'\n")
  await esbuild.build({
    absWorkingDir: app, entryPoints: ['classic.js'], outfile: 'dist/classic/age.js', bundle: true, format: 'iife',
    globalName: 'age', platform: 'browser', target: 'es2022', logLevel: 'silent',
  })
  copyFileSync(join(REPO, 'bindings/node/browser/pkg/hyperseal_bg.wasm'), join(app, 'dist/classic/hyperseal_bg.wasm'))
  writeFileSync(join(app, 'dist/classic/index.html'),
    '<!doctype html><meta charset="utf-8"><script src="age.js"></script><script>window.hyperseal = { age }</script>\n')
  const page = await b.open('/dist/classic/index.html')
  const r = await b.inPage(async ({ age }) => {
    const id = await age.generateIdentity()
    const e = new age.Encrypter()
    e.addRecipient(await age.identityToRecipient(id))
    const d = new age.Decrypter()
    d.addIdentity(id)
    return d.decrypt(await e.encrypt('Hello, typage!'), 'text')
  }, undefined, page)
  await page.close()
  assert.equal(r, 'Hello, typage!')
})

// The shared suite (bindings/node/test/age-suite.mjs), each case's source sent into the page
// with the helpers' source beside it.
for (const [name, run] of CASES) {
  test(`in the page: ${name}`, () => b.inPage({ toString: () => `async (hs) => (${run})({ ...hs, t: (${helpers})() })` }))
}
