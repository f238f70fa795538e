// "Coming from typage", tried as a typage user would: every example of typage's own README (as
// npm ships it in `age-encryption`, a dev dependency) runs with only its import changed to
// `hyperseal/age`, and prints what it prints under typage. An example that continues the one
// above it gets that one's import, and TypeScript's casts are erased as tsc erases them; the
// passkey examples need a browser's authenticator and are left to bindings/wasm's tests.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)
const TYPAGE = import.meta.resolve('age-encryption')
const README = readFileSync(new URL('../README.md', TYPAGE), 'utf8')
const blocks = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  .filter((b) => !b.includes('webauthn'))
  .map((b) => (b.includes('from "age-encryption"') ? b : `import * as age from "age-encryption"\n${b}`).replace(/ as [A-Z]\w+\)/g, ')'))
const AGE = pathToFileURL(require.resolve('../age.mjs')).href

/** Runs `code` as a module with `from "age-encryption"` pointing at `target`; returns what it printed. */
async function run (code, target) {
  const printed = []
  const log = console.log
  console.log = (...a) => printed.push(a.join(' '))
  try {
    const src = code.replaceAll('from "age-encryption"', `from ${JSON.stringify(target)}`)
    await import(`data:text/javascript;base64,${Buffer.from(src).toString('base64')}`)
  } finally {
    console.log = log
  }
  return printed
}

/** Printed lines with the random parts (keys, ciphertext) masked. */
const shape = (lines) => lines.join('\n').split('\n').map((l) =>
  l.replace(/^(AGE-SECRET-KEY-(PQ-)?1|age1(pq1)?)[0-9A-Za-z]+$/, '$1…').replace(/^[A-Za-z0-9+/=]{4,64}$/, 'base64'))

test('typage README examples', () => {
  assert.ok(blocks.length >= 6, `found ${blocks.length}`)
})

for (const [i, code] of blocks.entries()) {
  test(`typage README example ${i + 1} runs with the import changed`, async () => {
    const ours = await run(code, AGE)
    const theirs = await run(code, TYPAGE)
    assert.deepEqual(shape(ours), shape(theirs))
  })
}
