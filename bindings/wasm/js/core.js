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
  EncryptSession, DecryptSession, RangeJob, kdfPbkdf2Sync, kdfArgon2idSync, kdfScryptSync, kdfHkdf,
  aeadSeal, aeadOpen, aeadGenerateKey, tokenGenerateKey, tokenSeal, tokenOpen,
  signGenerateKeyPair, signMessage, signVerify, signPublicKeyOf,
} from '../pkg/hyperseal.js'

export default init
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

/** A TransformStream over a session: `push(bytes) → bytes ready`, `final() → the rest`. */
function sessionTransform (session) {
  const done = () => { try { session.free() } catch {} }
  return new TransformStream({
    transform (chunk, controller) {
      const bytes = typeof chunk === 'string' ? utf8.encode(chunk) : chunk
      if (!(bytes instanceof Uint8Array)) {
        done()
        throw argError('stream chunks must be Uint8Array or string')
      }
      let out
      try { out = session.push(bytes) } catch (e) { done(); throw e }
      if (out.length > 0) controller.enqueue(out)
    },
    flush (controller) {
      let out
      try { out = session.final() } finally { done() }
      if (out.length > 0) controller.enqueue(out)
    },
  })
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
  if (typeof privateKey !== 'string') throw argError('decryptRange: privateKey must be a string')
  const job = new RangeJob(blob.size, privateKey, options)
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
export const aead = Object.freeze({ seal: aeadSeal, open: aeadOpen, generateKey: aeadGenerateKey })
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
