// The npm package's shape, tested on the tarball `npm pack` makes of bindings/node (the published
// `hyperseal`, which carries this build under browser/): Node resolves `hyperseal` to index.mjs
// (the platform's addon, or this build as its fallback: packaging/npm.sh ships the addons as
// packages of their own) and a browser bundler (esbuild, platform browser) to the WebAssembly
// build, whose bundle then runs in Chromium; `hyperseal/wasm` runs the same .wasm under Node.
// Files cross to and from the native CLI each time.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import * as esbuild from 'esbuild'
import { startBrowser, cli, b64, unb64, REPO } from './harness.mjs'

let work, app, key, pub

/** Runs `node [flags] script` in the app folder; returns stdout. */
const node = (flags, script, input) => execFileSync(process.execPath, [...flags, script], { cwd: app, input, maxBuffer: 1 << 28 }).toString()

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'hyperseal-wasm-package-'))
  // `npm pack` runs the package's prepack (`make -C ../wasm stage`), as a publish would.
  const nodePkg = join(REPO, 'bindings/node')
  execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: nodePkg, stdio: ['ignore', 'pipe', 'pipe'] })
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
  app = join(work, 'app')
  mkdirSync(join(app, 'node_modules/hyperseal'), { recursive: true })
  execFileSync('tar', ['xzf', join(work, tarball), '--strip-components=1', '-C', join(app, 'node_modules/hyperseal')])
  writeFileSync(join(app, 'package.json'), '{ "type": "module", "private": true }\n')
  cli(['keygen', '--kind', 'hybrid', '-o', join(work, 'key')])
  key = readFileSync(join(work, 'key'), 'utf8')
  pub = cli(['pubkey', '-i', join(work, 'key')]).toString().trim()
})

after(() => { if (work) rmSync(work, { recursive: true, force: true }) })

test('the tarball carries the WebAssembly build; Node resolves `hyperseal` to index.mjs (the addon or its WebAssembly fallback), the browser condition to WebAssembly', () => {
  const files = execFileSync('tar', ['tzf', join(work, readdirSync(work).find((f) => f.endsWith('.tgz')))]).toString().split('\n')
  for (const f of ['browser/package.json', 'browser/js/index.js', 'browser/js/node.js', 'browser/js/core.js', 'browser/js/index.d.ts',
    'browser/pkg/hyperseal.js', 'browser/pkg/hyperseal_bg.wasm', 'index.mjs']) assert.ok(files.includes(`package/${f}`), f)
  writeFileSync(join(app, 'resolve.mjs'), "for (const s of ['hyperseal', 'hyperseal/wasm']) console.log(import.meta.resolve(s))\n")
  const strip = (out) => out.trim().split('\n').map((u) => u.slice(u.indexOf('/node_modules/') + 1))
  assert.deepEqual(strip(node([], 'resolve.mjs')),
    ['node_modules/hyperseal/index.mjs', 'node_modules/hyperseal/browser/js/node.js'])
  assert.deepEqual(strip(node(['--conditions=browser'], 'resolve.mjs')),
    ['node_modules/hyperseal/browser/js/index.js', 'node_modules/hyperseal/browser/js/node.js'])
})

test('Node runs the WebAssembly build (`hyperseal/wasm`): files cross with the native CLI both ways', () => {
  const pt = randomBytes(200_001)
  writeFileSync(join(work, 'pt'), pt)
  const fromCli = cli(['encrypt', '-q', '-r', pub, join(work, 'pt')])
  writeFileSync(join(app, 'wasm.mjs'), `
    import * as hs from 'hyperseal/wasm'
    import { readFileSync } from 'node:fs'
    const { key, pub, file, pt } = JSON.parse(readFileSync(0, 'utf8'))
    const bytes = (s) => new Uint8Array(Buffer.from(s, 'base64'))
    const opened = hs.decryptByPrivateKey(bytes(file), key)
    const stream = hs.encryptStream(new Blob([bytes(pt)]).stream(), { publicKey: pub, format: 'age' })
    const streamed = new Uint8Array(await new Response(stream).arrayBuffer())
    const b64 = (u8) => Buffer.from(u8).toString('base64')
    console.log(JSON.stringify({
      opened: b64(opened),
      oneShot: b64(hs.encryptByPublicKey(bytes(pt), pub, { armor: true })),
      streamed: b64(streamed),
      rsa: (() => { try { hs.generateKeyPair({ kind: 'rsa3072' }) } catch (e) { return e.code } })(),
    }))
  `)
  const r = JSON.parse(node([], 'wasm.mjs', JSON.stringify({ key, pub, file: b64(fromCli), pt: b64(pt) })))
  assert.deepEqual(unb64(r.opened), pt)
  // RSA exists in the addon but not on WebAssembly: proof that this is the wasm build.
  assert.equal(r.rsa, 'ERR_HYPERSEAL_ARGUMENT')
  for (const f of ['oneShot', 'streamed']) {
    writeFileSync(join(work, f), unb64(r[f]))
    assert.deepEqual(cli(['decrypt', '-q', '-i', join(work, 'key'), join(work, f)]), pt, f)
  }
})

test('a browser bundle of `import * as hs from "hyperseal"` (esbuild, platform browser) runs in Chromium', async () => {
  writeFileSync(join(app, 'entry.js'), "import * as hs from 'hyperseal'\nwindow.hyperseal = hs\n")
  const built = await esbuild.build({
    absWorkingDir: app, entryPoints: ['entry.js'], outdir: 'dist', bundle: true, format: 'esm',
    platform: 'browser', target: 'es2022', metafile: true, logLevel: 'silent',
  })
  const inputs = Object.keys(built.metafile.inputs)
  assert.ok(inputs.includes('node_modules/hyperseal/browser/js/index.js'), inputs.join(' '))
  assert.ok(!inputs.some((i) => i === 'node_modules/hyperseal/index.mjs' || i === 'node_modules/hyperseal/index.js'), inputs.join(' '))
  // esbuild leaves `new URL('hyperseal_bg.wasm', import.meta.url)` as it is: the .wasm goes beside the bundle.
  copyFileSync(join(app, 'node_modules/hyperseal/browser/pkg/hyperseal_bg.wasm'), join(app, 'dist/hyperseal_bg.wasm'))
  writeFileSync(join(app, 'dist/index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="entry.js"></script>\n')
  const b = await startBrowser({ root: app, pagePath: '/dist/index.html' })
  try {
    const pt = randomBytes(70_000)
    writeFileSync(join(work, 'pt2'), pt)
    const fromCli = cli(['encrypt', '-q', '-r', pub, '--format', 'age', '--armor', join(work, 'pt2')])
    const r = await b.inPage((hs, { key, pub, file, pt }) => {
      const bytes = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0))
      const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
      const opened = hs.decryptByPrivateKey(bytes(file), key)
      return { opened: b64(opened), sealed: b64(hs.encryptByPublicKey(bytes(pt), pub)) }
    }, { key, pub, file: b64(fromCli), pt: b64(pt) })
    assert.deepEqual(unb64(r.opened), pt)
    writeFileSync(join(work, 'sealed'), unb64(r.sealed))
    assert.deepEqual(cli(['decrypt', '-q', '-i', join(work, 'key'), join(work, 'sealed')]), pt)
  } finally { await b.close() }
})
