// hyperseal on WebAssembly, without loading the module: the wasm-bindgen build (pkg/hyperseal.js,
// made by `make wasm`) plus what is better written in JS — the Web Streams wrappers. Same names as
// the Node package. `index.js` (browsers) and `node.js` (Node) load the module and re-export this;
// import this file directly only to load the .wasm from somewhere else:
//
//   import init, { generateKeyPair, encryptByPublicKey, decryptByPrivateKey } from 'hyperseal/wasm/core'
//   await init({ module_or_path: '/assets/hyperseal_bg.wasm' })   // once; later calls return at once
//   const { publicKey, privateKey } = generateKeyPair({ kind: 'x25519' })
//   const file = encryptByPublicKey('hello', publicKey, { format: 'age' })
//   decryptByPrivateKey(file, privateKey)   // Uint8Array [104, 101, 108, 108, 111]
//
// Every error is an Error whose `code` is an ERR_HYPERSEAL_* string (see errorCodes()).

import init, {
  EncryptSession, DecryptSession, RangeJob, rekeyHead, encryptByPublicKey, decryptByPrivateKey, kdfPbkdf2Sync, kdfArgon2idSync, kdfScryptSync, kdfHkdf,
  aeadSeal, aeadSealInto, aeadOpen, aeadGenerateKey, tokenGenerateKey, tokenSeal, tokenOpen,
  signGenerateKeyPair, signMessage, signVerify, signPublicKeyOf,
} from '../pkg/hyperseal.js'
import {
  hasPasskey, answerRecipients, answerIdentities, answerIdentitiesFor, forget, createCredential, WebAuthnRecipient, WebAuthnIdentity,
} from './passkeys.js'

export default init
export { createCredential, WebAuthnRecipient, WebAuthnIdentity }
/** typage's namespace (`import { webauthn } from 'age-encryption'`), so its code moves over unchanged. */
export const webauthn = Object.freeze({ createCredential, WebAuthnRecipient, WebAuthnIdentity })
export {
  errorCodes,
  generateKeyPair,
  publicKeyOf,
  encryptByPublicKey,
  decryptByPrivateKey,
  encryptWithPassphrase,
  decryptWithPassphrase,
  EncryptSession,
  DecryptSession,
  hash,
  hmac,
  hmacVerify,
  kdfHkdf,
  aeadSeal,
  aeadSealInto,
  aeadOpen,
  aeadGenerateKey,
  tokenGenerateKey,
  tokenSeal,
  tokenOpen,
  signGenerateKeyPair,
  signMessage,
  signVerify,
  signPublicKeyOf,
} from '../pkg/hyperseal.js'

const utf8 = new TextEncoder()

function argError (msg) {
  const e = new TypeError(msg)
  e.code = 'ERR_HYPERSEAL_ARGUMENT'
  return e
}

/**
 * A TransformStream over a session: `push(bytes) → bytes ready`, `final() → the rest`. `first`
 * is the session, or a function `(bytes so far, ended) → Promise<session | undefined>` that
 * makes it once it can: for a passkey, after the authenticator answered (encrypting: at the
 * first chunk; decrypting: once the header has arrived, since the answer depends on it).
 */
function sessionTransform (first) {
  let session = typeof first === 'function' ? null : first
  let held = []
  const done = () => { try { session?.free() } catch {} }
  const push = (bytes, controller) => {
    let out
    try { out = session.push(bytes) } catch (e) { done(); throw e }
    if (out.length > 0) controller.enqueue(out)
  }
  // Until the session exists, chunks are held (a header's worth, for a passkey).
  const begin = async (ended) => {
    const bytes = concat(held)
    session = (await first(bytes, ended)) ?? null
    if (session) held = null
    return bytes
  }
  return new TransformStream({
    async transform (chunk, controller) {
      const bytes = typeof chunk === 'string' ? utf8.encode(chunk) : chunk
      if (!(bytes instanceof Uint8Array)) {
        done()
        throw argError('stream chunks must be Uint8Array or string')
      }
      if (session) return push(bytes, controller)
      held.push(bytes)
      const all = await begin(false)
      if (session) push(all, controller)
    },
    async flush (controller) {
      if (!session) {
        const all = await begin(true)
        if (!session) throw Object.assign(new Error('the stream ended inside the header'), { code: 'ERR_HYPERSEAL_FORMAT' })
        if (all.length > 0) push(all, controller)
      }
      let out
      try { out = session.final() } finally { done() }
      if (out.length > 0) controller.enqueue(out)
    },
  })
}

function concat (parts) {
  if (parts.length === 1) return parts[0]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

/**
 * `encryptByPublicKey` as a promise, which also takes passkeys (`WebAuthnRecipient`) among the
 * keys: the authenticator is asked first, on this thread, then the file is sealed here (use a
 * `WorkerPool` to seal off the main thread).
 */
export async function encryptByPublicKeyAsync (data, publicKey, options) {
  const keys = await answerRecipients(publicKey)
  try {
    return encryptByPublicKey(data, keys, options)
  } finally {
    if (keys !== publicKey) forget(keys)
  }
}

/**
 * `decryptByPrivateKey` as a promise, which also takes passkeys (`WebAuthnIdentity`): the
 * authenticator is asked for the file's passkey stanza first (only the header is read for it).
 */
export async function decryptByPrivateKeyAsync (data, privateKey, options) {
  if (hasPasskey(privateKey)) {
    const bytes = typeof data === 'string' ? utf8.encode(data) : data
    if (!(bytes instanceof Uint8Array)) throw argError('data must be a Uint8Array or a string')
    const keys = await answerIdentitiesFor(privateKey, async (n) => bytes.subarray(0, n), bytes.length)
    try {
      return decryptByPrivateKey(data, keys, options)
    } finally {
      forget(keys)
    }
  }
  return decryptByPrivateKey(data, privateKey, options)
}

/**
 * A TransformStream that encrypts to `publicKey` (a string or an array) or with `passphrase`:
 * plaintext chunks in, a hyperseal file (or age with `format: 'age'`) out, binary or with
 * `armor: true` ASCII-armored. Memory stays flat. A key that names an age plugin is refused
 * unless `allowPlugins: true` (as in every call that takes a key).
 */
export function createEncryptStream (options) {
  if (options == null) throw argError('createEncryptStream: options are required')
  if (typeof options.passphrase === 'string') return sessionTransform(EncryptSession.withPassphrase(options.passphrase, options))
  if (options.publicKey === undefined) throw argError('createEncryptStream: options.publicKey or options.passphrase is required')
  if (hasPasskey(options.publicKey)) {
    return sessionTransform(async () => {
      const keys = await answerRecipients(options.publicKey)
      try { return new EncryptSession(keys, options) } finally { forget(keys) }
    })
  }
  return sessionTransform(new EncryptSession(options.publicKey, options))
}

/**
 * A TransformStream that decrypts a hyperseal or age file, binary or armored, with `privateKey` or
 * `passphrase`. Only authenticated plaintext comes out; a cut or tampered file errors the
 * stream with ERR_HYPERSEAL_AUTH.
 */
export function createDecryptStream (options) {
  if (options == null) throw argError('createDecryptStream: options are required')
  if (typeof options.passphrase === 'string') return sessionTransform(DecryptSession.withPassphrase(options.passphrase))
  if (options.privateKey === undefined) throw argError('createDecryptStream: options.privateKey or options.passphrase is required')
  if (hasPasskey(options.privateKey)) {
    return sessionTransform(async (prefix, ended) => {
      const ids = await answerIdentities(options.privateKey, prefix, ended)
      try { return ids && new DecryptSession(ids, options) } finally { forget(ids) }
    })
  }
  return sessionTransform(new DecryptSession(options.privateKey, options))
}

/** `readable.pipeThrough(createEncryptStream(options))`. */
export function encryptStream (readable, options) {
  return readable.pipeThrough(createEncryptStream(options))
}

/** `readable.pipeThrough(createDecryptStream(options))`. */
export function decryptStream (readable, options) {
  return readable.pipeThrough(createDecryptStream(options))
}

/**
 * Plaintext bytes `offset … offset + length` of an encrypted `Blob` or `File` (a binary hyperseal
 * or age file), reading only the blocks the library's random-access reader asks for (the header,
 * the final chunk, which it authenticates first, and the chunks of the range), each with one
 * `Blob.slice`. Fewer bytes at the end of the plaintext, none past it. Only authenticated bytes
 * come back; damage in what is read rejects with ERR_HYPERSEAL_AUTH.
 */
export async function decryptRange (blob, privateKey, offset, length, options) {
  if (!(blob instanceof Blob)) throw argError('decryptRange: blob must be a Blob or a File')
  if (hasPasskey(privateKey)) privateKey = await answerIdentitiesFor(privateKey, headOf(blob), blob.size)
  else if (typeof privateKey !== 'string') throw argError('decryptRange: privateKey must be a string')
  let job
  try { job = new RangeJob(blob.size, privateKey, options) } finally { forget(privateKey) }
  try {
    const block = RangeJob.blockSize()
    const read = new Set()
    for (;;) {
      const out = job.run(offset, length)
      if (out !== undefined) return out
      const i = job.wanted()
      // Each block is read once; asking again would mean the reader does not progress.
      if (read.has(i)) throw Object.assign(new Error(`decryptRange: block ${i} was asked for twice`), { code: 'ERR_HYPERSEAL_IO' })
      read.add(i)
      const piece = blob.slice(i * block, Math.min(blob.size, (i + 1) * block))
      job.supply(i, new Uint8Array(await piece.arrayBuffer()))
    }
  } finally {
    job.free()
  }
}

// ── re-keying (src/rekey.rs): a new header wrapping the same file key; the payload is kept ──

/** The most of a file read for its header (a header needs far less unless it has thousands of stanzas). */
const HEADER_BUDGET = 8 << 20
/** What is read first; only a header longer than this makes a second, full-budget read. */
const HEADER_FIRST = 64 << 10

function rekeyOptions (o, what) {
  if (o === null || typeof o !== 'object') throw argError(`${what}: options must be an object`)
  return o
}

function report (r) {
  return { before: r.before, after: r.after, removed: r.removed, added: r.added, inPlace: false }
}

/**
 * Re-keys a binary hyperseal or age file held in memory without re-encrypting it: the new
 * header followed by the old salt and payload. `identities`: the private key(s) that open it now,
 * or `null` with `options.passphrase`. `options`: `recipients` (the full new list) or
 * `add` / `remove`, `removeOwn`, `passphrase`, `allowPlugins`. Where the new header fits the old one's length
 * the result is exactly as long as `data`.
 */
export function rekey (data, identities, options) {
  options = rekeyOptions(options, 'rekey')
  if (options.output !== undefined || options.force !== undefined || options.dryRun !== undefined) {
    throw argError('rekey returns the new bytes: output, force and dryRun are options of rekeyFile')
  }
  if (!(data instanceof Uint8Array)) throw argError('rekey: data must be a Uint8Array')
  const r = rekeyHead(data, identities, options)
  const out = new Uint8Array(r.header.length + data.length - r.oldHeaderLength)
  out.set(r.header)
  out.set(data.subarray(r.oldHeaderLength), r.header.length)
  return out
}

/** A reader of a Blob's first bytes (`n` at most). */
const headOf = (blob) => async (n) => new Uint8Array(await blob.slice(0, Math.min(blob.size, n)).arrayBuffer())

/**
 * A re-key's passkeys answered: identities for the stanza each opens, `add` and `recipients`
 * for a fresh nonce each, `remove` for the stanza each opens (which is how it names it).
 */
async function answerRekey (identities, options, head, size) {
  const lists = ['add', 'recipients', 'remove'].filter((f) => options[f] != null && hasPasskey(options[f]))
  if (lists.length === 0 && (identities == null || !hasPasskey(identities))) return [identities, options]
  if (identities != null) identities = await answerIdentitiesFor(identities, head, size)
  const o = { ...options }
  for (const f of lists) {
    o[f] = f === 'remove' ? await answerIdentitiesFor(o[f], head, size, { every: true }) : await answerRecipients(o[f])
  }
  return [identities, o]
}

/**
 * Re-keys an encrypted `Blob` or `File` in O(header): only its start is read, and the result is
 * `{ blob, before, after, removed, added, inPlace: false }` where `blob` is the new header
 * followed by a slice of the original (a `File` with the same name when given one; `null` with
 * `dryRun`). Options as for {@link rekey}, plus `dryRun`.
 */
export async function rekeyFile (file, identities, options) {
  options = rekeyOptions(options, 'rekeyFile')
  if (!(file instanceof Blob)) throw argError('rekeyFile: file must be a Blob or a File')
  if (options.output !== undefined || options.force !== undefined) {
    throw argError('rekeyFile: a page writes no files: the result is the returned blob (output and force are for Node)')
  }
  const head = headOf(file)
  ;[identities, options] = await answerRekey(identities, options, head, file.size)
  let r
  try {
    r = rekeyHead(await head(HEADER_FIRST), identities, options)
  } catch (e) {
    // A header longer than the first read fails as a cut one; the full budget decides.
    if (file.size <= HEADER_FIRST) throw e
    r = rekeyHead(await head(HEADER_BUDGET), identities, options)
  } finally {
    for (const keys of [identities, options.add, options.recipients, options.remove]) forget(keys)
  }
  const out = report(r)
  if (options.dryRun === true) return { blob: null, ...out }
  const parts = [r.header, file.slice(r.oldHeaderLength)]
  const blob = typeof File !== 'undefined' && file instanceof File
    ? new File(parts, file.name, { type: file.type, lastModified: Date.now() })
    : new Blob(parts, { type: file.type })
  return { blob, ...out }
}

// ── toolkit namespaces, as in the Node package ──────────────────────────────────────────────
// The password KDFs return promises as in Node; here they run on the calling thread (use the
// worker, js/worker.js, to keep a page responsive while Argon2id or scrypt run).

const settle = (f) => new Promise((resolve) => resolve(f()))

/** PBKDF2-HMAC: `{ iterations, hash: 'sha256' | 'sha512', length }`. */
export function kdfPbkdf2 (password, salt, options) { return settle(() => kdfPbkdf2Sync(password, salt, options)) }
/** Argon2id v1.3: `{ memoryKib, timeCost, parallelism, length }`. */
export function kdfArgon2id (password, salt, options) { return settle(() => kdfArgon2idSync(password, salt, options)) }
/** scrypt: `{ cost, blockSize, parallelization, length }` (or Node's `N`, `r`, `p`). */
export function kdfScrypt (password, salt, o) {
  if (o != null && typeof o === 'object') o = { cost: o.cost ?? o.N, blockSize: o.blockSize ?? o.r, parallelization: o.parallelization ?? o.p, length: o.length }
  return settle(() => kdfScryptSync(password, salt, o))
}

export const kdf = Object.freeze({ pbkdf2: kdfPbkdf2, argon2id: kdfArgon2id, scrypt: kdfScrypt, hkdf: kdfHkdf })
export const aead = Object.freeze({ seal: aeadSeal, sealInto: aeadSealInto, open: aeadOpen, generateKey: aeadGenerateKey })
/** Signatures with PEM keys (Ed25519, ECDSA P-256, ML-DSA-65; RSA is native-only), as in Node. */
export const sign = Object.freeze({ generateKeyPair: signGenerateKeyPair, sign: signMessage, verify: signVerify, publicKeyOf: signPublicKeyOf })

function options (o, what) {
  if (o === undefined || o === null) return {}
  if (typeof o !== 'object') throw argError(`${what}: options must be an object`)
  return o
}

/** Compact authenticated tokens: `seal(key, plaintext, { aad, ttlSeconds })`, `open(keys, token, { aad })`. */
export const token = Object.freeze({
  generateKey: tokenGenerateKey,
  seal (key, plaintext, o) { o = options(o, 'token.seal'); return tokenSeal(key, plaintext, o.aad, o.ttlSeconds) },
  open (keys, tok, o) { return tokenOpen(keys, tok, options(o, 'token.open').aad) },
})
