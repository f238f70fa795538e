// Passkeys and security keys (WebAuthn with the PRF extension), as typage's `age-encryption`
// names them: `createCredential`, `WebAuthnRecipient`, `WebAuthnIdentity`. Files carry an
// `age-encryption.org/fido2prf` stanza, byte for byte typage's, and open in typage and with
// age-plugin-fido2prf (a security key's credential).
//
// This file makes the WebAuthn calls and nothing else: the identity string, the nonces, the PRF
// inputs, which stanza an answer opens and every byte of the stanza are the library's
// (src/passkey.rs). The authenticator is asked here, on the page's thread (WebAuthn is not
// available in workers, and a person answers it); the answer is plain data
// (`{ fido2prf: { nonce, first, second } }`) that the calls of core.js and WorkerPool take
// where they take a key string, so the bulk work still runs in WebAssembly and in workers.
//
// Every error has a `code`: ERR_HYPERSEAL_KEY for no PRF support and for a prompt that was
// cancelled, timed out or found no credential (the DOMException is its `cause`),
// ERR_HYPERSEAL_NO_IDENTITY for a credential or a file that match no stanza,
// ERR_HYPERSEAL_FORMAT for a malformed stanza, ERR_HYPERSEAL_ARGUMENT for bad options.

import {
  passkeyIdentity, passkeyIdentityParse, passkeyPrfInputs, passkeyStanzas, passkeyOpens,
} from '../pkg/hyperseal.js'

const coded = (code, message, cause) => Object.assign(new Error(message, cause && { cause }), { code })
const argError = (message) => Object.assign(new TypeError(message), { code: 'ERR_HYPERSEAL_ARGUMENT' })

const NO_PRF = 'this browser or authenticator does not support the WebAuthn PRF extension, which passkey ' +
  'encryption needs (Chrome 132+, Safari 18+ on macOS 15+, or a security key with hmac-secret)'

// The public key is never used; every default algorithm is offered so any authenticator fits.
const ALGORITHMS = [-8, -7, -257].map((alg) => ({ type: 'public-key', alg }))

function credentials () {
  const c = globalThis.navigator?.credentials
  if (!c || typeof c.get !== 'function') throw coded('ERR_HYPERSEAL_KEY', 'WebAuthn is not available here: passkeys need a page in a secure context (https or localhost)')
  return c
}

/** A WebAuthn failure as a coded error. */
function authenticatorError (e) {
  if (typeof e?.code === 'string' && e.code.startsWith('ERR_HYPERSEAL_')) return e
  if (e?.name === 'NotAllowedError' || e?.name === 'AbortError') {
    return coded('ERR_HYPERSEAL_KEY', 'the passkey prompt was cancelled, timed out, or found no matching credential', e)
  }
  return coded('ERR_HYPERSEAL_KEY', `the authenticator failed: ${e?.name ?? 'Error'}: ${e?.message ?? e}`, e)
}

/**
 * Creates a credential for encryption and returns its identity string
 * (`AGE-PLUGIN-FIDO2PRF-1…`), as typage's `createCredential`. `type`: 'passkey' (default, a
 * discoverable credential the user can pick without the string) or 'security-key' (not
 * discoverable: the string is needed to use it, and cannot be made again). User verification
 * and the PRF extension are required. `rpId`: the relying party (default: this page's host).
 */
export async function createCredential (options) {
  const { keyName, type = 'passkey', rpId } = options ?? {}
  if (typeof keyName !== 'string' || keyName === '') throw argError('createCredential: keyName must be a non-empty string')
  if (type !== 'passkey' && type !== 'security-key') throw argError("createCredential: type must be 'passkey' or 'security-key'")
  if (rpId !== undefined && typeof rpId !== 'string') throw argError('createCredential: rpId must be a string')
  const passkey = type === 'passkey'
  let cred
  try {
    cred = await credentials().create({
      publicKey: {
        rp: { name: '', id: rpId },
        // A fresh user handle, so a new credential never replaces an existing one.
        user: { name: keyName, id: crypto.getRandomValues(new Uint8Array(8)), displayName: '' },
        pubKeyCredParams: ALGORITHMS,
        authenticatorSelection: {
          requireResidentKey: passkey,
          residentKey: passkey ? 'required' : 'discouraged',
          userVerification: 'required', // the PRF extension requires it
        },
        hints: passkey ? [] : ['security-key'],
        extensions: { prf: {} },
        challenge: new Uint8Array([0]), // unused: no attestation is asked for
      },
    })
  } catch (e) {
    throw authenticatorError(e)
  }
  if (!cred.getClientExtensionResults().prf?.enabled) throw coded('ERR_HYPERSEAL_KEY', NO_PRF)
  // A credential does not say its relying party: the default is the page's host, as typage's.
  return passkeyIdentity(new Uint8Array(cred.rawId), rpId ?? globalThis.location.hostname, cred.response.getTransports?.() ?? [])
}

/** What both classes share: which credential to ask for, and the asking. */
class WebAuthnKey {
  #credentialId
  #transports
  #rpId

  /**
   * `identity`: the string from `createCredential` (required for a security key; for a passkey
   * it only spares the user the choice). Without it the user picks a discoverable credential of
   * `rpId` (default: this page's host).
   */
  constructor (options) {
    const { identity, rpId } = options ?? {}
    if (identity !== undefined && identity !== null && identity !== '') {
      if (typeof identity !== 'string') throw argError('options.identity must be a string')
      const id = passkeyIdentityParse(identity)
      this.#credentialId = id.credentialId
      this.#transports = id.transports
      this.#rpId = id.rpId
    } else {
      if (rpId !== undefined && typeof rpId !== 'string') throw argError('options.rpId must be a string')
      this.#rpId = rpId
    }
  }

  /** The authenticator's answer for `inputs` (`{ nonce, first, second }`), as the library takes it. */
  async answer ({ nonce, first, second }) {
    let assertion
    try {
      assertion = await credentials().get({
        publicKey: {
          allowCredentials: this.#credentialId
            ? [{ type: 'public-key', id: this.#credentialId, transports: this.#transports }]
            : [],
          challenge: crypto.getRandomValues(new Uint8Array(16)), // unused: nothing is signed for a server
          extensions: { prf: { eval: { first, second } } },
          userVerification: 'required',
          rpId: this.#rpId,
        },
      })
    } catch (e) {
      throw authenticatorError(e)
    }
    const r = assertion.getClientExtensionResults().prf?.results
    if (!r?.first || !r?.second) throw coded('ERR_HYPERSEAL_KEY', NO_PRF)
    return { fido2prf: { nonce, first: new Uint8Array(r.first), second: new Uint8Array(r.second) } }
  }
}

/** A passkey or security key to encrypt to (typage's name and options: `{ identity, rpId }`). */
export class WebAuthnRecipient extends WebAuthnKey {}

/** A passkey or security key to decrypt with (typage's name and options: `{ identity, rpId }`). */
export class WebAuthnIdentity extends WebAuthnKey {}

const list = (keys) => (Array.isArray(keys) ? keys : [keys])

/** Whether a key argument (one key or an array) holds a passkey to ask. */
export const hasPasskey = (keys) => list(keys).some((k) => k instanceof WebAuthnKey)

/** Recipients with every passkey answered for a fresh nonce (one answer seals one file). */
export async function answerRecipients (keys) {
  if (!hasPasskey(keys)) return keys
  const out = []
  for (const k of list(keys)) out.push(k instanceof WebAuthnKey ? await k.answer(passkeyPrfInputs()) : k)
  return out
}

/**
 * Identities with every passkey answered for the stanza it opens in the file that starts with
 * `prefix` (its whole header; `ended`: nothing follows); `undefined` while the header is not
 * complete and more can come. The authenticator is asked once per passkey stanza until one
 * opens (one, in the usual file). A passkey that opens none is dropped where other keys are
 * given (the library then tries them), else it is ERR_HYPERSEAL_NO_IDENTITY; with `every`
 * (passkeys to remove from a file) each must open one.
 */
export async function answerIdentities (keys, prefix, ended, { every = false } = {}) {
  if (!hasPasskey(keys)) return keys
  const others = every ? [] : list(keys).filter((k) => !(k instanceof WebAuthnKey))
  let stanzas
  try {
    stanzas = passkeyStanzas(prefix, ended)
  } catch (e) {
    if (e.code === 'ERR_HYPERSEAL_NO_IDENTITY' && others.length > 0) return others
    throw e
  }
  if (stanzas === undefined) return undefined
  const out = []
  for (const k of list(keys)) {
    if (!(k instanceof WebAuthnKey)) { out.push(k); continue }
    let opened = false
    for (const inputs of stanzas) {
      const a = await k.answer(inputs)
      if ((opened = passkeyOpens(prefix, a))) { out.push(a); break }
    }
    if (!opened && every) throw coded('ERR_HYPERSEAL_NO_IDENTITY', 'a passkey to remove opens none of the file\'s passkey stanzas')
  }
  if (out.length === 0) {
    throw coded('ERR_HYPERSEAL_NO_IDENTITY', 'this credential does not open the file: it was encrypted to another passkey')
  }
  return out
}

/**
 * Zeroes the page's copies of answered passkeys' PRF outputs, once the call that took them has
 * copied them into WebAssembly (a worker's copy is its own; JavaScript cannot do more).
 */
export function forget (keys) {
  for (const k of list(keys)) {
    const a = k?.fido2prf
    if (a) { a.first.fill(0); a.second.fill(0) }
  }
}

/** The first bytes tried for a header; then up to the most any header can take (armored). */
const HEAD_STEPS = [64 << 10, 1 << 20, 14 << 20]

/**
 * `answerIdentities` for a file of `size` bytes read by `read(n)` (a promise of its first `n`
 * bytes): reads no more of it than the header needs.
 */
export async function answerIdentitiesFor (keys, read, size, options) {
  if (!hasPasskey(keys)) return keys
  for (const step of HEAD_STEPS) {
    const n = Math.min(size, step)
    const ended = n === size || step === HEAD_STEPS.at(-1)
    const answered = await answerIdentities(keys, await read(n), ended, options)
    if (answered !== undefined) return answered
  }
}
