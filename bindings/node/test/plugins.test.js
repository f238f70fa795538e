'use strict'
// Key strings that name an age plugin run a program (`age-plugin-NAME` on PATH), so they are
// refused unless the call opts in with `allowPlugins: true`; with it, a plugin that is not
// installed gives the library's usual "not found" error, which proves the flag went through.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { pipeline } = require('node:stream/promises')
const { Readable, Writable } = require('node:stream')
const { hs, tmpdir, rejectsWith, throwsWith } = require('./helpers')

// A plugin named so that no such program exists anywhere.
const RECIPIENT = 'age1hsnotinstalled1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0sfphyrn'
const IDENTITY = 'AGE-PLUGIN-HSNOTINSTALLED-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0SVDU8G6'

const key = hs.generateKeyPair({ kind: 'x25519' })
const sealed = hs.encryptByPublicKey('hello', key.publicKey)

const DISABLED = /plugins are disabled, so age-plugin-hsnotinstalled was not started; pass allowPlugins: true/
const NOT_FOUND = /age-plugin-hsnotinstalled not found on PATH/

function matches (e, re) {
  assert.equal(e.code, 'ERR_HYPERSEAL_KEY', e.message)
  assert.match(e.message, re)
  return true
}

/** Every entry point that takes a key string, with `options` (undefined, or with allowPlugins). */
async function everyCall (options, re) {
  const allow = options?.allowPlugins
  assert.throws(() => hs.encryptByPublicKey('x', RECIPIENT, options), (e) => matches(e, re))
  assert.throws(() => hs.encryptByPublicKey('x', [key.publicKey, RECIPIENT], options), (e) => matches(e, re))
  assert.throws(() => hs.decryptByPrivateKey(sealed, IDENTITY, options), (e) => matches(e, re))
  assert.throws(() => hs.decryptByPrivateKey(sealed, `# file\n${IDENTITY}\n`, options), (e) => matches(e, re))
  await assert.rejects(hs.encryptByPublicKeyAsync('x', RECIPIENT, options), (e) => matches(e, re))
  await assert.rejects(hs.decryptByPrivateKeyAsync(sealed, IDENTITY, options), (e) => matches(e, re))

  const dir = tmpdir()
  const src = path.join(dir, 'plain')
  const enc = path.join(dir, 'sealed')
  fs.writeFileSync(src, 'hello')
  fs.writeFileSync(enc, sealed)
  const out = path.join(dir, 'out')
  await assert.rejects(hs.encryptFile(src, out, { publicKey: RECIPIENT, allowPlugins: allow }), (e) => matches(e, re))
  await assert.rejects(hs.decryptFile(enc, out, { privateKey: IDENTITY, allowPlugins: allow }), (e) => matches(e, re))
  assert.equal(fs.existsSync(out), false)

  // Streams: a refused key fails at creation; an allowed one when the plugin is first needed.
  const sink = new Writable({ write (c, e, cb) { cb() } })
  await assert.rejects(
    (async () => pipeline(Readable.from([Buffer.from('x')]), hs.createEncryptStream({ publicKey: RECIPIENT, allowPlugins: allow }), sink))(),
    (e) => matches(e, re))
  await assert.rejects(
    (async () => pipeline(Readable.from([sealed]), hs.createDecryptStream({ privateKey: IDENTITY, allowPlugins: allow }), sink))(),
    (e) => matches(e, re))
  fs.rmSync(dir, { recursive: true, force: true })
}

test('plugin keys are refused unless allowPlugins is true', async () => {
  await everyCall(undefined, DISABLED)
  await everyCall({}, DISABLED)
  await everyCall({ allowPlugins: false }, DISABLED)
})

test('allowPlugins: true passes through (a missing plugin is not found)', async () => {
  await everyCall({ allowPlugins: true }, NOT_FOUND)
})

test('a key parsed with plugins allowed is never reused for a call that did not allow them', async () => {
  // The parse with the opt-in succeeds (and is cached); only running the plugin fails.
  throwsWith(() => hs.encryptByPublicKey('x', RECIPIENT, { allowPlugins: true }), 'ERR_HYPERSEAL_KEY')
  assert.throws(() => hs.encryptByPublicKey('x', RECIPIENT), (e) => matches(e, DISABLED))
  throwsWith(() => hs.decryptByPrivateKey(sealed, IDENTITY, { allowPlugins: true }), 'ERR_HYPERSEAL_KEY')
  assert.throws(() => hs.decryptByPrivateKey(sealed, IDENTITY), (e) => matches(e, DISABLED))
  await rejectsWith(hs.decryptByPrivateKeyAsync(sealed, IDENTITY), 'ERR_HYPERSEAL_KEY')
  // Ordinary keys are unaffected by the flag.
  assert.equal(hs.decryptByPrivateKey(sealed, key.privateKey).toString(), 'hello')
  assert.equal(hs.decryptByPrivateKey(sealed, key.privateKey, { allowPlugins: true }).toString(), 'hello')
})
