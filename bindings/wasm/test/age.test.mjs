// `hyperseal/age` (typage's API) in Chromium, as a page gets it: `import * as age from
// 'hyperseal/age'` bundled by esbuild for the browser (the package's `browser` condition),
// beside the real typage (npm `age-encryption`) in the same page. Files go both ways for every
// key kind both read, with JavaScript recipients and identities, streams, detached headers and
// armor; importing loads nothing until the first call, and an unused import bundles to nothing.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as esbuild from 'esbuild'
import { startBrowser, PKG_ROOT, REPO } from './harness.mjs'

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

test('files both ways with typage in the page: X25519, hybrid, passphrase, JavaScript recipients, streams, headers, armor', async () => {
  const r = await b.inPage(async ({ age, typage }) => {
    const out = {}
    const plain = Uint8Array.from({ length: 150_000 }, (_, i) => (i * 13) & 255)
    const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
    const read = async (s) => new Uint8Array(await new Response(s).arrayBuffer())
    for (const kind of ['X25519', 'Hybrid']) {
      for (const [E, D] of [[age, typage], [typage, age]]) {
        const id = await D[`generate${kind}Identity`]()
        const e = new E.Encrypter()
        e.addRecipient(await E.identityToRecipient(id))
        const d = new D.Decrypter()
        d.addIdentity(id)
        out[`${kind} ${E === age ? 'age→typage' : 'typage→age'}`] = same(await d.decrypt(await e.encrypt(plain)), plain)
      }
    }
    for (const [E, D] of [[age, typage], [typage, age]]) {
      const e = new E.Encrypter()
      e.setPassphrase('pw')
      e.setScryptWorkFactor(10)
      const d = new D.Decrypter()
      d.addPassphrase('pw')
      out[`passphrase ${E === age ? 'age→typage' : 'typage→age'}`] = (await d.decrypt(await e.encrypt('text ✓'), 'text')) === 'text ✓'
      const xor = (k) => k.map((b) => b ^ 0xa5)
      const ce = new E.Encrypter()
      ce.addRecipient({ wrapFileKey: (k) => [new E.Stanza(['example.com/xor'], xor(k))] })
      const cd = new D.Decrypter()
      cd.addIdentity({ unwrapFileKey: (s) => { const x = s.find((s) => s.args[0] === 'example.com/xor'); return x ? xor(x.body) : null } })
      out[`custom ${E === age ? 'age→typage' : 'typage→age'}`] = same(await cd.decrypt(await ce.encrypt(plain)), plain)
      const id = await age.generateIdentity()
      const se = new E.Encrypter()
      se.addRecipient(await age.identityToRecipient(id))
      const sd = new D.Decrypter()
      sd.addIdentity(id)
      const sealed = await se.encrypt(new Blob([plain]).stream())
      const file = await read(sealed)
      const opened = await sd.decrypt(new Blob([file]).stream())
      out[`stream ${E === age ? 'age→typage' : 'typage→age'}`] = sealed.size(plain.length) === file.length &&
        opened.size(file.length) === plain.length && same(await read(opened), plain)
      const header = file.subarray(0, file.indexOf(10, new TextDecoder().decode(file.subarray(0, 4000)).indexOf('\n---') + 1) + 1)
      const k1 = await sd.decryptHeader(header)
      const other = new (D === age ? typage : age).Decrypter()
      other.addIdentity(id)
      out[`header ${E === age ? 'age→typage' : 'typage→age'}`] = same(k1, await other.decryptHeader(header))
    }
    const { privateKey } = await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])
    const ke = new typage.Encrypter()
    ke.addRecipient(await age.identityToRecipient(privateKey))
    const kd = new age.Decrypter()
    kd.addIdentity(privateKey)
    out['non-extractable CryptoKey typage→age'] = (await age.identityToRecipient(privateKey)) === (await typage.identityToRecipient(privateKey)) &&
      (await kd.decrypt(await ke.encrypt('ck'), 'text')) === 'ck'
    out.armor = age.armor.encode(plain.subarray(0, 1000)) === typage.armor.encode(plain.subarray(0, 1000)) &&
      same(age.armor.decode(typage.armor.encode(plain.subarray(0, 1000))), plain.subarray(0, 1000))
    return out
  })
  for (const [what, ok] of Object.entries(r)) assert.equal(ok, true, what)
  assert.equal(Object.keys(r).length, 14)
})
