'use strict'
// Public entry: the native addon (built by `npm run build` into hyperseal.node) plus what is
// better written in JS — the Transform streams and one place that guarantees every error
// carries a stable ERR_HYPERSEAL_* code (napi's own argument checks throw with its own codes).

const { Transform } = require('node:stream')
const native = require('./hyperseal.node')

const ERROR_CODES = Object.freeze([
  'ERR_HYPERSEAL_AUTH',
  'ERR_HYPERSEAL_NO_IDENTITY',
  'ERR_HYPERSEAL_FORMAT',
  'ERR_HYPERSEAL_KEY',
  'ERR_HYPERSEAL_ARGUMENT',
  'ERR_HYPERSEAL_IO',
])

/** Anything not already coded came from a type check before our code ran: an argument error. */
function coded (e) {
  if (e instanceof Error) {
    if (typeof e.code !== 'string' || !e.code.startsWith('ERR_HYPERSEAL_')) e.code = 'ERR_HYPERSEAL_ARGUMENT'
    return e
  }
  const err = new Error(String(e))
  err.code = 'ERR_HYPERSEAL_ARGUMENT'
  return err
}

function argError (msg) {
  const e = new TypeError(msg)
  e.code = 'ERR_HYPERSEAL_ARGUMENT'
  return e
}

function options (opts, name, keyField) {
  if (opts === null || typeof opts !== 'object') throw argError(`${name}: options must be an object`)
  if (opts[keyField] === undefined) throw argError(`${name}: options.${keyField} is required`)
  return opts
}

function rethrow (e) { throw coded(e) }

function generateKeyPair (opts) {
  try { return native.generateKeyPair(opts) } catch (e) { throw coded(e) }
}

function publicKeyOf (privateKey) {
  try { return native.publicKeyOf(privateKey) } catch (e) { throw coded(e) }
}

function encryptByPublicKey (data, publicKey) {
  try { return native.encryptByPublicKey(data, publicKey) } catch (e) { throw coded(e) }
}

function decryptByPrivateKey (data, privateKey) {
  try { return native.decryptByPrivateKey(data, privateKey) } catch (e) { throw coded(e) }
}

function encryptByPublicKeyAsync (data, publicKey) {
  try { return native.encryptByPublicKeyAsync(data, publicKey).catch(rethrow) } catch (e) { return Promise.reject(coded(e)) }
}

function decryptByPrivateKeyAsync (data, privateKey) {
  try { return native.decryptByPrivateKeyAsync(data, privateKey).catch(rethrow) } catch (e) { return Promise.reject(coded(e)) }
}

/** A throwing progress callback must not take the process down from a native thread. */
function safeProgress (opts) {
  const f = opts.onProgress
  if (f === undefined || f === null) return { ...opts, onProgress: undefined }
  if (typeof f !== 'function') throw argError('options.onProgress must be a function')
  return { ...opts, onProgress: (p) => { try { f(p) } catch (e) { process.emitWarning(e) } } }
}

function encryptFile (src, dst, opts) {
  try {
    return native.encryptFile(src, dst, safeProgress(options(opts, 'encryptFile', 'publicKey'))).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

function decryptFile (src, dst, opts) {
  try {
    return native.decryptFile(src, dst, safeProgress(options(opts, 'decryptFile', 'privateKey'))).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

/** A Transform over a native session: `push(bytes) → bytes ready`, `final() → the rest`. */
function sessionTransform (session) {
  return new Transform({
    transform (chunk, encoding, cb) {
      let out
      try {
        out = session.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk)
      } catch (e) { return cb(coded(e)) }
      cb(null, out.length > 0 ? out : undefined)
    },
    flush (cb) {
      let out
      try { out = session.final() } catch (e) { return cb(coded(e)) }
      cb(null, out.length > 0 ? out : undefined)
    },
  })
}

function createEncryptStream (opts) {
  options(opts, 'createEncryptStream', 'publicKey')
  try { return sessionTransform(new native.EncryptSession(opts.publicKey)) } catch (e) { throw coded(e) }
}

function createDecryptStream (opts) {
  options(opts, 'createDecryptStream', 'privateKey')
  try { return sessionTransform(new native.DecryptSession(opts.privateKey)) } catch (e) { throw coded(e) }
}

module.exports = {
  ERROR_CODES,
  generateKeyPair,
  publicKeyOf,
  encryptByPublicKey,
  decryptByPrivateKey,
  encryptByPublicKeyAsync,
  decryptByPrivateKeyAsync,
  encryptFile,
  decryptFile,
  createEncryptStream,
  createDecryptStream,
  EncryptSession: native.EncryptSession,
  DecryptSession: native.DecryptSession,
  // ── toolkit APIs (hash, hmac, kdf, aead, hazmat, sign/verify, token, batch*) are added here
  //    by the hyperseal-toolkit merge; see src/toolkit.rs.
}
