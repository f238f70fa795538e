// Every ```js block of bindings/wasm/README.md runs in Chromium as written (its `import … from
// 'hyperseal'` line stands for the page's package), so the documented examples cannot drift from
// the API. (The repository README's example is Node's: bindings/node/test/readme.test.js.)

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startBrowser, PKG_ROOT } from './harness.mjs'

let h

function blocks (markdown) {
  return [...markdown.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
}

const wasmReadme = blocks(readFileSync(join(PKG_ROOT, 'README.md'), 'utf8'))
const examples = wasmReadme.map((b, i) => [`bindings/wasm/README.md block ${i + 1}`, b])

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

test('the README has browser examples', () => {
  assert.ok(wasmReadme.length >= 4, `${wasmReadme.length} blocks in bindings/wasm/README.md`)
})

for (const [name, code] of examples) {
  test(`runs: ${name}`, async () => {
    assert.match(code, /^import \* as hs from 'hyperseal'$/m)
    const body = code.replace(/^import .* from 'hyperseal'$/m, '')
    const r = await h.page.evaluate(async (body) => {
      const hs = await window.hyperseal
      const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor
      try { await new AsyncFunction('hs', body)(hs); return 'ok' } catch (e) { return `${e.code ?? ''} ${e.stack ?? e}` }
    }, body)
    assert.equal(r, 'ok')
  })
}
