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

/**
 * A copy of this package that another user can `require` (for a test that runs a call as
 * another user, as root): the checkout may lie under a private folder (a `mktemp -d` of mode
 * 0700) that no other user can enter, so nothing in it can be given to that user by its path.
 * The copy is a new folder under the temporary directory (folders 0755, files 0644, the addon
 * 0755, whatever the umask) holding what the package ships (package.json's `files`, those that
 * are built) and the addon beside it, so the other user's process loads what the tests load.
 * `env` is what that process is given: NODE_OPTIONS names the copy of test/hide-addon.js where
 * the fallback's run preloads it, so that process runs the same backend. `remove` deletes it.
 */
function packageForOthers (extraEnv = {}) {
  const pkg = path.resolve(__dirname, '..')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hyperseal-node-others-'))
  const { files = [] } = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'))
  const hider = path.join(__dirname, 'hide-addon.js')
  const names = ['package.json', 'hyperseal.node', ...files, 'test/hide-addon.js']
  for (const name of new Set(names.map((n) => n.replace(/\/+$/, '')))) {
    const from = path.join(pkg, name)
    if (fs.existsSync(from)) fs.cpSync(from, path.join(dir, name), { recursive: true, dereference: true })
  }
  const open = (p) => {
    const st = fs.statSync(p)
    if (st.isDirectory()) {
      fs.chmodSync(p, 0o755)
      for (const e of fs.readdirSync(p)) open(path.join(p, e))
    } else {
      fs.chmodSync(p, p.endsWith('.node') ? 0o755 : 0o644)
    }
  }
  open(dir)
  // Every folder above the copy must let others through, or the copy is as unreachable.
  for (let up = path.dirname(dir); ; up = path.dirname(up)) {
    assert.ok(fs.statSync(up).mode & 0o001, `${up} does not let other users through (TMPDIR?)`)
    if (path.dirname(up) === up) break
  }
  const env = { ...process.env, ...extraEnv }
  if (env.NODE_OPTIONS) env.NODE_OPTIONS = env.NODE_OPTIONS.split(hider).join(path.join(dir, 'test', 'hide-addon.js'))
  return { dir, env, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
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

module.exports = { hs, KINDS, keyOrNull, tmpdir, cliBin, packageForOthers, rejectsWith, throwsWith }
