// SSH keys in the browser package (Chromium), against the real age v1.3.1 (.tools/bin/age,
// `make age`) both ways: ssh-ed25519 as recipient and identity, ssh-rsa as recipient only (the
// page has no constant-time RSA decryption, and says so). The keys are the throw-away ones of
// vectors/ssh (README there).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, REPO, b64, unb64 } from './harness.mjs'

const AGE = join(REPO, '.tools/bin/age')
const key = (name) => join(REPO, 'vectors/ssh', name)
const text = (name) => readFileSync(key(name), 'utf8')
const age = (args, input) => execFileSync(AGE, args, { input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] })

let h
const inPage = (fn, arg) => h.inPage(fn, arg)

before(async () => {
  if (!existsSync(AGE)) throw new Error(`age is missing: ${AGE} (make age)`)
  h = await startBrowser({ needsCli: false })
})

after(async () => { await h?.close() })

test('age encrypts to ssh-ed25519 and ssh-rsa keys; the page opens the ed25519 ones with the private key', async () => {
  const data = randomBytes(70_000)
  const inputs = {}
  for (const armor of [false, true]) {
    const file = age(['-e', '-R', key('ed25519.pub'), ...(armor ? ['-a'] : [])], data)
    inputs[armor ? 'armored' : 'binary'] = b64(file)
  }
  // One file for both keys: the ed25519 identity opens it past the ssh-rsa stanza.
  const both = join(h.work, 'both.txt')
  writeFileSync(both, text('rsa2048.pub') + text('ed25519.pub'))
  inputs.both = b64(age(['-e', '-R', both], data))
  const r = await inPage(async (hs, { inputs, pem }) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    const out = {}
    for (const [name, file] of Object.entries(inputs)) out[name] = b64(hs.decryptByPrivateKey(bytes(file), pem))
    out.publicKey = hs.publicKeyOf(pem)
    return out
  }, { inputs, pem: text('ed25519') })
  for (const name of ['binary', 'armored', 'both']) assert.deepEqual(unb64(r[name]), data, name)
  assert.equal(r.publicKey, text('ed25519.pub').split(' ').slice(0, 2).join(' '))
})

test('the page encrypts to ssh-ed25519 and ssh-rsa keys, and age opens the files with the private keys', async () => {
  const data = randomBytes(100_000)
  const r = await inPage(async (hs, { data, recipients }) => {
    const bytes = Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0))
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    const out = {}
    for (const [name, line] of Object.entries(recipients)) out[name] = b64(hs.encryptByPublicKey(bytes, line, { format: 'age' }))
    return out
  }, { data: b64(data), recipients: { ed25519: text('ed25519.pub'), rsa2048: text('rsa2048.pub'), rsa3072: text('rsa3072_ctr.pub') } })
  for (const name of ['ed25519', 'rsa2048']) {
    const file = join(h.work, `${name}.age`)
    writeFileSync(file, unb64(r[name]))
    assert.deepEqual(age(['-d', '-i', key(name), file]), data, name)
    assert.throws(() => age(['-d', '-i', key(name === 'ed25519' ? 'rsa2048' : 'ed25519'), file]), /no identity matched/, name)
  }
  // A 3072-bit key's stanza (its private key is passphrase-protected: age would ask on a terminal).
  assert.match(unb64(r.rsa3072).toString('latin1'), /\n-> ssh-rsa [A-Za-z0-9+/]{6}\n/)
})

test('an RSA private key is refused with the reason; a protected ed25519 key asks for a passphrase the package cannot answer', async () => {
  const r = await inPage(async (hs, pems) => {
    const file = hs.encryptByPublicKey('x', hs.generateKeyPair({ kind: 'x25519' }).publicKey, { format: 'age' })
    const out = {}
    for (const [name, pem] of Object.entries(pems)) {
      try { hs.decryptByPrivateKey(file, pem); out[name] = 'opened' } catch (e) { out[name] = { code: e.code, message: e.message } }
    }
    return out
  }, { rsa2048: text('rsa2048'), rsa3072: text('rsa3072_ctr') })
  for (const name of ['rsa2048', 'rsa3072']) {
    assert.equal(r[name].code, 'ERR_HYPERSEAL_KEY', name)
    assert.match(r[name].message, /ssh-rsa private keys are not available in this build, since RSA decryption in WebAssembly is not constant time/, name)
  }
  const sealed = age(['-e', '-R', key('ed25519_ctr.pub')], 'protected')
  const p = await inPage(async (hs, { file, pem }) => {
    try { hs.decryptByPrivateKey(Uint8Array.from(atob(file), (ch) => ch.charCodeAt(0)), pem); return 'opened' } catch (e) { return e.message }
  }, { file: b64(sealed), pem: text('ed25519_ctr') })
  assert.match(p, /passphrase-protected and no passphrase was given/)
})
