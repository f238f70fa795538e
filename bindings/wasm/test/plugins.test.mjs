// Key strings that name an age plugin: refused in the browser package unless the call passes
// `allowPlugins: true` — in the page and through WorkerPool's workers (streaming and parts). With
// the opt-in, the library's usual "not found" error (a browser runs no plugin programs) proves
// the flag went through.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startBrowser } from './harness.mjs'

let h

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

const KEYS = {
  recipient: 'age1hsnotinstalled1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0sfphyrn',
  identity: 'AGE-PLUGIN-HSNOTINSTALLED-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0SVDU8G6',
}
const DISABLED = /plugins are disabled, so age-plugin-hsnotinstalled was not started; pass allowPlugins: true/
const NOT_FOUND = /age-plugin-hsnotinstalled not found on PATH/

/** Every entry point that takes a key, run in the page with `extra` merged into its options. */
async function everyCall (extra) {
  return h.inPage(async (hs, { recipient, identity, extra }) => {
    const key = hs.generateKeyPair({ kind: 'x25519' })
    const sealed = hs.encryptByPublicKey('hello', key.publicKey)
    const big = new Uint8Array(5 << 20)
    const bigSealed = hs.encryptByPublicKey(big, key.publicKey)
    const pool = new hs.WorkerPool({ size: 2 })
    const drain = async (readable) => { for await (const _ of readable) { /* empty */ } }
    const calls = {
      encryptByPublicKey: () => hs.encryptByPublicKey('x', recipient, { ...extra }),
      encryptList: () => hs.encryptByPublicKey('x', [key.publicKey, recipient], { ...extra }),
      decryptByPrivateKey: () => hs.decryptByPrivateKey(sealed, identity, extra),
      decryptIdentityFile: () => hs.decryptByPrivateKey(sealed, `# id\n${identity}\n`, extra),
      EncryptSession: () => new hs.EncryptSession(recipient, { ...extra }).push(new Uint8Array(1)),
      DecryptSession: () => new hs.DecryptSession(identity, extra).push(sealed),
      encryptStream: () => drain(hs.encryptStream(new Blob(['x']).stream(), { publicKey: recipient, ...extra })),
      decryptStream: () => drain(hs.decryptStream(new Blob([sealed]).stream(), { privateKey: identity, ...extra })),
      decryptRange: () => hs.decryptRange(new Blob([sealed]), identity, 0, 5, extra),
      poolEncrypt: () => pool.encryptFile(new Blob(['x']), { publicKey: recipient, ...extra }),
      poolDecrypt: () => pool.decryptFile(new Blob([sealed]), { privateKey: identity, ...extra }),
      poolEncryptParts: () => pool.encryptFile(new Blob([big]), { publicKey: recipient, parallel: true, ...extra }),
      poolDecryptParts: () => pool.decryptFile(new Blob([bigSealed]), { privateKey: identity, parallel: true, ...extra }),
    }
    const out = {}
    for (const [name, call] of Object.entries(calls)) {
      try {
        await call()
        out[name] = { ok: true }
      } catch (e) {
        out[name] = { code: e.code, message: String(e.message) }
      }
    }
    pool.terminate()
    // Ordinary keys do not care about the flag.
    out.ordinary = new TextDecoder().decode(hs.decryptByPrivateKey(sealed, key.privateKey, extra))
    return out
  }, { ...KEYS, extra })
}

function check (r, re) {
  assert.equal(r.ordinary, 'hello')
  delete r.ordinary
  assert.equal(Object.keys(r).length, 13)
  for (const [name, e] of Object.entries(r)) {
    assert.equal(e.code, 'ERR_HYPERSEAL_KEY', `${name}: ${JSON.stringify(e)}`)
    assert.match(e.message, re, name)
  }
}

test('plugin keys are refused unless allowPlugins is true', async () => {
  check(await everyCall({}), DISABLED)
  check(await everyCall({ allowPlugins: false }), DISABLED)
})

test('allowPlugins: true passes through, in the page and in the workers', async () => {
  check(await everyCall({ allowPlugins: true }), NOT_FOUND)
})
