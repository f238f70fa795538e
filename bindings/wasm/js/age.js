// `hyperseal/age` in the page (the `browser` condition): typage's API (npm `age-encryption`
// 0.3) over this package's WebAssembly build, for code that imports 'age-encryption' to run
// with one changed import. Importing it loads nothing: the .wasm is fetched (from beside
// pkg/hyperseal.js) on the first call that needs it. The API itself is ./age-api.js; passkeys
// (`webauthn`) are ./passkeys.js, as in the rest of the package.

import { ageApi } from './age-api.js'
import {
  createCredential, WebAuthnRecipient, WebAuthnIdentity, answerRecipients, answerIdentities,
} from './passkeys.js'

let bindings = null
let loading = null

// A classic-script bundle (esbuild's IIFE, as typage's README builds one for a `<script>` tag)
// has no `import.meta.url` for wasm-bindgen to find the .wasm from; there it is looked for
// beside the script, whose address is only known while the script first runs.
const script = typeof document === 'undefined' ? undefined : document.currentScript?.src

async function load () {
  if (bindings) return bindings
  loading ??= import('../pkg/hyperseal.js').then(async (m) => {
    const beside = !import.meta.url && script ? { module_or_path: new URL('hyperseal_bg.wasm', script) } : undefined
    await m.default(beside)
    bindings = m
    return m
  })
  return loading
}

const passkeys = {
  webauthn: Object.freeze({ createCredential, WebAuthnRecipient, WebAuthnIdentity }),
  isRecipient: (k) => k instanceof WebAuthnRecipient,
  isIdentity: (k) => k instanceof WebAuthnIdentity,
  answerRecipient: async (k) => (await answerRecipients([k]))[0],
  /** The passkey answered for the header's stanza it opens, or null where it opens none. */
  async answerIdentity (k, header) {
    try {
      return (await answerIdentities([k], header, true))[0]
    } catch (e) {
      if (e.code === 'ERR_HYPERSEAL_NO_IDENTITY') return null
      throw e
    }
  },
}

const api = ageApi({ load, loaded: () => bindings, passkeys })

export const {
  Encrypter, Decrypter, Stanza, armor, webauthn,
  generateIdentity, generateX25519Identity, generateHybridIdentity, identityToRecipient,
} = api
