// The simd128 ChaCha20 (crates/chacha20-simd128) proven as WebAssembly, where it runs: its
// self-test module (crates/chacha20-simd128-selftest, built into pkg/selftest/ with simd128 by
// `make selftest`) in Node's WebAssembly and in headless Chromium. RFC 8439 / XChaCha known
// answers (every SIMD lane), both Wycheproof AEAD files, and the differential test against
// RustCrypto's scalar chacha20 (random keys, nonces, counters near 2^32, split streaming calls,
// seeks); the simd128 Poly1305 the AEADs run on: RFC 8439 §2.5.2 / A.3 and OpenSSL's carry
// regression vectors, and a differential test against RustCrypto's poly1305 (extreme r and s,
// all-0xff blocks, random splits of `update`). The generator's start is random per run and printed, so a failure can be replayed.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { PKG_ROOT, REPO, startBrowser } from './harness.mjs'

const DIR = join(PKG_ROOT, 'pkg/selftest')
const JS = join(DIR, 'chacha20_selftest.js')
const vectors = (name) => readFileSync(join(REPO, 'vectors/wycheproof', name), 'utf8')
const CHACHA = vectors('chacha20_poly1305_test.json')
const XCHACHA = vectors('xchacha20_poly1305_test.json')
const CASES = 2000
const START = process.env.CHACHA_SIMD_START ? BigInt(process.env.CHACHA_SIMD_START) : BigInt(Date.now()) * 1000003n + BigInt(process.pid)
console.log(`# differential start ${START} (replay: CHACHA_SIMD_START=${START})`)

/** Runs every proof with `m` (the initialised module) and returns their summaries. */
function proofs (m, c, x, start, cases) {
  const out = { backend: m.backend(), poly1305Backend: m.poly1305_backend() }
  for (const [name, run] of [
    ['knownAnswers', () => m.known_answers()],
    ['poly1305KnownAnswers', () => m.poly1305_known_answers()],
    ['poly1305Differential', () => m.poly1305_differential(BigInt(start), cases)],
    ['chacha', () => m.wycheproof(c, 12)],
    ['xchacha', () => m.wycheproof(x, 24)],
    ['differential', () => m.differential(BigInt(start), cases)],
  ]) {
    try { out[name] = { ok: true, msg: run() } } catch (e) { out[name] = { ok: false, msg: String(e?.message ?? e) } }
  }
  return out
}

function check (r) {
  assert.equal(r.backend, 'simd128', 'the self-test module must be the SIMD build')
  assert.equal(r.poly1305Backend, 'simd128', 'the AEADs must run the SIMD Poly1305')
  for (const k of ['knownAnswers', 'poly1305KnownAnswers', 'poly1305Differential', 'chacha', 'xchacha', 'differential']) {
    assert.ok(r[k].ok, `${k}: ${r[k].msg}`)
  }
  assert.equal(r.poly1305KnownAnswers.msg, '18 Poly1305 known answers')
  assert.match(r.poly1305Differential.msg, new RegExp(`^${CASES * 2} Poly1305 differential cases`))
  assert.equal(r.chacha.msg, '256 valid + 69 invalid')
  assert.equal(r.xchacha.msg, '246 valid + 69 invalid')
  assert.match(r.differential.msg, new RegExp(`^${CASES * 4} differential cases`))
}

test('chacha20-simd128 in Node\'s WebAssembly', async () => {
  assert.ok(existsSync(JS), `${JS} is missing: make -C bindings/wasm selftest`)
  const m = await import(pathToFileURL(JS))
  m.initSync({ module: readFileSync(join(DIR, 'chacha20_selftest_bg.wasm')) })
  const r = proofs(m, CHACHA, XCHACHA, START.toString(), CASES)
  console.log(`# node ${process.version}: ${JSON.stringify(r)}`)
  check(r)
})

let browser
before(async () => { browser = await startBrowser() })
after(async () => { await browser?.close() })

test('chacha20-simd128 in Chromium', async () => {
  const r = await browser.page.evaluate(async ([src, c, x, start, cases]) => {
    const m = await import('/pkg/selftest/chacha20_selftest.js')
    await m.default()
    // eslint-disable-next-line no-new-func
    return (new Function('return ' + src)())(m, c, x, start, cases)
  }, [proofs.toString(), CHACHA, XCHACHA, START.toString(), CASES])
  console.log(`# chromium: ${JSON.stringify(r)}`)
  check(r)
})
