'use strict'
// Shared test helpers: the module under test, the key kinds this build implements, temp dirs
// and the CLI binary for interop.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const assert = require('node:assert/strict')

const hs = require('..')

const KINDS = ['hybrid', 'x25519', 'mlkem1024', 'rsa3072', 'rsa4096']

/**
 * Generates a key of `kind`, or returns null when this build does not have it: a kind not
 * implemented yet, or RSA in the WebAssembly fallback (README.md: without a native addon).
 */
function keyOrNull (kind) {
  try {
    return hs.generateKeyPair({ kind })
  } catch (e) {
    if (/not implemented/.test(e.message)) return null
    if (hs.backend === 'wasm' && /RSA keys are not available in this build/.test(e.message)) return null
    throw e
  }
}

function tmpdir () {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'hyperseal-node-test-'))
}

/** The CLI: $HYPERSEAL_BIN, else the workspace build at ../../target/release/hyperseal. */
function cliBin () {
  const candidates = [process.env.HYPERSEAL_BIN, path.resolve(__dirname, '../../../target/release/hyperseal')]
  return candidates.find((p) => p && fs.existsSync(p)) || null
}

async function rejectsWith (promise, code) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`)
    return true
  })
}

function throwsWith (fn, code) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`)
    return true
  })
}

module.exports = { hs, KINDS, keyOrNull, tmpdir, cliBin, rejectsWith, throwsWith }
