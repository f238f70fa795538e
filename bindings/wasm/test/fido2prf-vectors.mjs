// Writes vectors/fido2prf.json: known answers for passkey (`age-encryption.org/fido2prf`)
// stanzas and identity strings, made by typage's own functions (npm `age-encryption`, a dev
// dependency here) under Node. Run from bindings/wasm: `node test/fido2prf-vectors.mjs [OUT]`.
//
// Two stand-ins make typage's code run outside a browser, each deterministic so the file is the
// same at every run:
// - randomness: `crypto.getRandomValues` counts through SHA-256("fido2prf vectors" ‖ counter),
//   so typage's nonces, file keys and payload nonces are fixed;
// - the authenticator: `navigator.credentials` answers as a CTAP2 authenticator with the
//   hmac-secret extension does, PRF(input) = HMAC-SHA-256(credential secret,
//   SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input)), with a fixed secret per credential.
// The wrapping key is not exposed by typage: it is computed here with HKDF-Extract from
// @noble/hashes (typage's own dependency), and the stanza typage wrote checks it.

import { createHash, createHmac } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

let counter = 0
function fill (a) {
  let off = 0
  while (off < a.length) {
    const block = createHash('sha256').update('fido2prf vectors').update(String(counter++)).digest()
    const n = Math.min(block.length, a.length - off)
    a.set(block.subarray(0, n), off)
    off += n
  }
  return a
}
Object.defineProperty(globalThis, 'crypto', { value: { getRandomValues: fill, subtle: globalThis.crypto.subtle }, configurable: true })

const secrets = new Map() // credential id (hex) → secret
let lastInputs = null
const hex = (b) => Buffer.from(b).toString('hex')
const prf = (secret, input) => {
  const salt = createHash('sha256').update('WebAuthn PRF').update(Buffer.from([0])).update(input).digest()
  return new Uint8Array(createHmac('sha256', secret).update(salt).digest())
}

Object.defineProperty(globalThis, 'navigator', {
  configurable: true,
  value: {
    credentials: {
      async create ({ publicKey }) {
        const id = fill(new Uint8Array(publicKey.user.name.length)) // length chosen by the case
        secrets.set(hex(id), createHash('sha256').update('secret').update(id).digest())
        return {
          rawId: id.buffer,
          response: { getTransports: () => JSON.parse(publicKey.rp.name || '[]') },
          getClientExtensionResults: () => ({ prf: { enabled: true } }),
        }
      },
      async get ({ publicKey }) {
        const cred = publicKey.allowCredentials[0]
        const secret = secrets.get(hex(cred.id))
        const { first, second } = publicKey.extensions.prf.eval
        lastInputs = { first: new Uint8Array(first), second: new Uint8Array(second) }
        return {
          getClientExtensionResults: () => ({ prf: { results: { first: prf(secret, first).buffer, second: prf(secret, second).buffer } } }),
        }
      },
    },
  },
})

const { webauthn, Encrypter, Decrypter, Stanza } = await import('age-encryption')
const { extract } = await import('@noble/hashes/hkdf.js')
const { sha256 } = await import('@noble/hashes/sha2.js')
const label = new TextEncoder().encode('age-encryption.org/fido2prf')

// createCredential takes the credential ID's length from `keyName` here (the stand-in reads it)
// and the transports from `rp.name`, which typage leaves empty: patched per call below.
async function credential (idLength, rpId, transports) {
  const create = navigator.credentials.create
  navigator.credentials.create = ({ publicKey }) => create({ publicKey: { ...publicKey, rp: { ...publicKey.rp, name: JSON.stringify(transports) } } })
  try {
    const identity = await webauthn.createCredential({ keyName: 'k'.repeat(idLength), type: 'security-key', rpId })
    const credentialId = [...secrets.keys()].at(-1)
    return { identity, credentialId, rpId, transports }
  } finally {
    navigator.credentials.create = create
  }
}

const identities = [
  await credential(16, 'localhost', ['internal', 'hybrid']),
  await credential(32, 'example.com', ['usb']),
  await credential(64, 'a-relying-party-id-longer-than-23.example', []),
  await credential(300, 'example.org', ['usb', 'nfc', 'ble']),
]

async function stanzaCase (id) {
  const fileKey = fill(new Uint8Array(16))
  const recipient = new webauthn.WebAuthnRecipient({ identity: id.identity })
  const [s] = await recipient.wrapFileKey(fileKey)
  const secret = secrets.get(id.credentialId)
  const out = {
    identity: id.identity,
    nonce: hex(Buffer.from(s.args[1], 'base64')),
    prfInputFirst: hex(lastInputs.first),
    prfInputSecond: hex(lastInputs.second),
    prfFirst: hex(prf(secret, lastInputs.first)),
    prfSecond: hex(prf(secret, lastInputs.second)),
    fileKey: hex(fileKey),
    stanza: { args: s.args, body: Buffer.from(s.body).toString('base64').replace(/=+$/, '') },
  }
  const ikm = Buffer.concat([Buffer.from(out.prfFirst, 'hex'), Buffer.from(out.prfSecond, 'hex')])
  out.wrappingKey = hex(extract(sha256, ikm, label))
  // typage opens its own stanza with the same credential.
  const back = await new webauthn.WebAuthnIdentity({ identity: id.identity }).unwrapFileKey([new Stanza(s.args, s.body)])
  if (hex(back) !== out.fileKey) throw new Error('typage did not open its own stanza')
  return out
}

const stanzas = []
for (const id of identities) stanzas.push(await stanzaCase(id))

// A whole age file from typage's Encrypter to the first credential, with the answers for its
// stanza: the library opens it without a browser.
const e = new Encrypter()
e.addRecipient(new webauthn.WebAuthnRecipient({ identity: identities[0].identity }))
const plaintext = 'hello from typage, sealed to a passkey'
const file = await e.encrypt(plaintext)
const secret = secrets.get(identities[0].credentialId)
const fileCase = {
  identity: identities[0].identity,
  plaintext,
  file: Buffer.from(file).toString('base64'),
  prfFirst: hex(prf(secret, lastInputs.first)),
  prfSecond: hex(prf(secret, lastInputs.second)),
}
const d = new Decrypter()
d.addIdentity(new webauthn.WebAuthnIdentity({ identity: identities[0].identity }))
if (await d.decrypt(file, 'text') !== plaintext) throw new Error('typage did not open its own file')

const doc = {
  about: 'age-encryption.org/fido2prf known answers, made by typage (npm age-encryption) with bindings/wasm/test/fido2prf-vectors.mjs; hex unless named base64',
  typage: JSON.parse((await import('node:fs')).readFileSync(new URL('../node_modules/age-encryption/package.json', import.meta.url))).version,
  identities: identities.map(({ identity, credentialId, rpId, transports }) => ({ identity, credentialId, rpId, transports })),
  stanzas,
  file: fileCase,
}
// The output path: the first argument (test/passkey-vectors.test.mjs regenerates into a temporary
// file and compares), else the committed file.
const path = process.argv[2] ?? fileURLToPath(new URL('../../../vectors/fido2prf.json', import.meta.url))
writeFileSync(path, JSON.stringify(doc, null, 2) + '\n')
console.log(`wrote ${path}`)
