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
  EncryptSession, DecryptSession, RangeJob, rekeyHead, kdfPbkdf2Sync, kdfArgon2idSync, kdfScryptSync, kdfHkdf,
  aeadSeal, aeadSealInto, aeadOpen, aeadGenerateKey, tokenGenerateKey, tokenSeal, tokenOpen,
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
  const head = async (n) => new Uint8Array(await file.slice(0, Math.min(file.size, n)).arrayBuffer())
  let r
  try {
    r = rekeyHead(await head(HEADER_FIRST), identities, options)
  } catch (e) {
    // A header longer than the first read fails as a cut one; the full budget decides.
    if (file.size <= HEADER_FIRST) throw e
    r = rekeyHead(await head(HEADER_BUDGET), identities, options)
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
