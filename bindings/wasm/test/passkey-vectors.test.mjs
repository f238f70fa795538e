// Known answers for passkeys without any browser or authenticator: vectors/fido2prf.json (made
// by typage's own functions, test/fido2prf-vectors.mjs) through the WebAssembly build under
// Node (`hyperseal/wasm`): identity strings both ways, the PRF inputs of each stanza's nonce,
// typage's stanzas and file opened from the recorded PRF outputs, and the wrapping key (a file
// sealed here from the same answers opens in typage's own decrypter only if it is the same).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO, PKG_ROOT } from './harness.mjs'

const hs = await import('../js/node.js')
const pkg = await import('../pkg/hyperseal.js')
const v = JSON.parse(readFileSync(join(REPO, 'vectors/fido2prf.json'), 'utf8'))
const hex = (s) => Uint8Array.from(Buffer.from(s, 'hex'))
const answered = (c, nonce) => ({ fido2prf: { nonce, first: hex(c.prfFirst), second: hex(c.prfSecond) } })

test('the committed vectors are what typage\'s functions make today (the generator run again)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hyperseal-fido2prf-'))
  try {
    execFileSync(process.execPath, ['test/fido2prf-vectors.mjs', join(dir, 'v.json')], { cwd: PKG_ROOT })
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'v.json'), 'utf8')), v)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('identity strings: typage\'s parse to their parts, and the parts encode to them', () => {
  for (const c of v.identities) {
    const p = pkg.passkeyIdentityParse(c.identity)
    assert.equal(Buffer.from(p.credentialId).toString('hex'), c.credentialId)
    assert.equal(p.rpId, c.rpId)
    assert.deepEqual(p.transports, c.transports)
    assert.equal(pkg.passkeyIdentity(hex(c.credentialId), c.rpId, c.transports), c.identity)
  }
})

/** A one-stanza age header around a vector's stanza (enough for the stanza readers). */
const header = (c) => {
  const body = c.stanza.body.match(/.{1,64}/g) ?? ['']
  if (c.stanza.body.length % 64 === 0) body.push('')
  return new TextEncoder().encode(`age-encryption.org/v1\n-> ${c.stanza.args.join(' ')}\n${body.join('\n')}\n--- ${'A'.repeat(43)}\n`)
}

test('each stanza\'s PRF inputs are typage\'s, and its recorded answers open it', () => {
  for (const c of v.stanzas) {
    const head = header(c)
    const [inputs] = pkg.passkeyStanzas(head, true)
    assert.equal(Buffer.from(inputs.nonce).toString('hex'), c.nonce)
    assert.equal(Buffer.from(inputs.first).toString('hex'), c.prfInputFirst)
    assert.equal(Buffer.from(inputs.second).toString('hex'), c.prfInputSecond)
    assert.equal(pkg.passkeyOpens(head, answered(c, inputs.nonce)), true)
    // Another credential's answers do not.
    const other = v.stanzas.find((o) => o !== c)
    assert.equal(pkg.passkeyOpens(head, answered(other, inputs.nonce)), false)
  }
})

test('typage\'s whole file opens from its answers; another credential is ERR_HYPERSEAL_NO_IDENTITY', () => {
  const file = Uint8Array.from(Buffer.from(v.file.file, 'base64'))
  const [inputs] = pkg.passkeyStanzas(file.subarray(0, 1024), false)
  const plain = hs.decryptByPrivateKey(file, answered(v.file, inputs.nonce))
  assert.equal(Buffer.from(plain).toString(), v.file.plaintext)
  assert.throws(() => hs.decryptByPrivateKey(file, answered(v.stanzas[1], inputs.nonce)), { code: 'ERR_HYPERSEAL_NO_IDENTITY' })
})

test('sealed here from a vector\'s answers, typage\'s decrypter opens it (the same wrapping key)', async () => {
  const { Decrypter, webauthn } = await import('age-encryption')
  const c = v.stanzas[0]
  const sealed = hs.encryptByPublicKey('sealed by hyperseal', answered(c, hex(c.nonce)), { format: 'age' })
  const text = new TextDecoder().decode(sealed.subarray(0, 200))
  assert.match(text, new RegExp(`^age-encryption\\.org/v1\\n-> age-encryption\\.org/fido2prf ${Buffer.from(hex(c.nonce)).toString('base64').replace(/=+$/, '')}\\n`))
  // typage asks `navigator.credentials.get`; the recorded answers stand in for the authenticator.
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator')
  Object.defineProperty(globalThis, 'navigator', {
    configurable: true,
    value: { credentials: { get: async () => ({ getClientExtensionResults: () => ({ prf: { results: { first: hex(c.prfFirst).buffer, second: hex(c.prfSecond).buffer } } }) }) } },
  })
  try {
    const d = new Decrypter()
    d.addIdentity(new webauthn.WebAuthnIdentity({ identity: c.identity }))
    assert.equal(await d.decrypt(sealed, 'text'), 'sealed by hyperseal')
  } finally {
    if (saved) Object.defineProperty(globalThis, 'navigator', saved)
    else delete globalThis.navigator
  }
})
