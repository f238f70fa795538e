// `hyperseal/age` in Node: typage's API (npm `age-encryption` 0.3) over this package's native
// addon, or its WebAssembly fallback where no addon fits (loader.js), for code that imports
// 'age-encryption' to run with one changed import. Importing it loads nothing: the backend is
// loaded on the first call. The API itself is browser/js/age-api.js, shared with the page.
//
// WebAuthn needs a browser: `webauthn`'s classes exist here with typage's names and options,
// and using one fails with ERR_HYPERSEAL_KEY, as typage fails in Node.

import { createRequire } from 'node:module'
import { ageApi } from './browser/js/age-api.js'

const require = createRequire(import.meta.url)
let bindings = null
const loaded = () => (bindings ??= require('./loader.js').binding)

const noWebAuthn = () => Object.assign(new Error('WebAuthn is not available in Node: passkeys need a page in a secure context'), { code: 'ERR_HYPERSEAL_KEY' })

class WebAuthnKey {
  constructor (options) { this.options = options ?? {} }
}
class WebAuthnRecipient extends WebAuthnKey {}
class WebAuthnIdentity extends WebAuthnKey {}

const passkeys = {
  webauthn: Object.freeze({ createCredential: async () => { throw noWebAuthn() }, WebAuthnRecipient, WebAuthnIdentity }),
  isRecipient: (k) => k instanceof WebAuthnRecipient,
  isIdentity: (k) => k instanceof WebAuthnIdentity,
  answerRecipient: async () => { throw noWebAuthn() },
  answerIdentity: async () => { throw noWebAuthn() },
}

const api = ageApi({ load: async () => loaded(), loaded, passkeys })

export const {
  Encrypter, Decrypter, Stanza, armor, webauthn,
  generateIdentity, generateX25519Identity, generateHybridIdentity, identityToRecipient,
} = api
