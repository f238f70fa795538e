'use strict'
// Public entry: the native addon (or, where none fits, the WebAssembly build behind the same
// names: loader.js) plus what is better written in JS — the Transform streams and one place that
// guarantees every error carries a stable ERR_HYPERSEAL_* code (napi's own argument checks throw
// with its own codes).

const { Transform } = require('node:stream')
const { backend, binding: native } = require('./loader.js')

// The one list lives in the library (hyperseal::ErrorCode); the addon hands it over.
const ERROR_CODES = Object.freeze(native.errorCodes())

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

/**
 * The identity agent (`hyperseal agent start`, a Unix socket) as a private key: every call that
 * takes a `privateKey` or `identities` takes it too (alone, or in a list after the others).
 * The package reads no environment: pass the path (`process.env.HYPERSEAL_AGENT_SOCK`).
 */
class AgentIdentity {
  constructor (path) {
    if (typeof path !== 'string' || path === '') throw argError('AgentIdentity: path must be a non-empty string')
    try { this.privateKey = native.agentIdentity(path) } catch (e) { throw coded(e) }
    this.path = path
    Object.freeze(this)
  }

  toString () { return this.privateKey }
}

/** A key argument with every AgentIdentity turned into its key string. */
function key (k) {
  if (k instanceof AgentIdentity) return k.privateKey
  return Array.isArray(k) ? k.map(key) : k
}

/** `opts` with its `privateKey` turned into a string (see `key`). */
function withKey (opts) {
  return opts !== null && typeof opts === 'object' && opts.privateKey !== undefined ? { ...opts, privateKey: key(opts.privateKey) } : opts
}

function generateKeyPair (opts) {
  try { return native.generateKeyPair(opts) } catch (e) { throw coded(e) }
}

function publicKeyOf (privateKey) {
  try { return native.publicKeyOf(privateKey) } catch (e) { throw coded(e) }
}

// `options.allowPlugins`: keys naming an age plugin run `age-plugin-NAME`; refused unless true.
function encryptByPublicKey (data, publicKey, options) {
  try { return native.encryptByPublicKey(data, publicKey, options) } catch (e) { throw coded(e) }
}

function decryptByPrivateKey (data, privateKey, options) {
  try { return native.decryptByPrivateKey(data, key(privateKey), options) } catch (e) { throw coded(e) }
}

function encryptByPublicKeyAsync (data, publicKey, options) {
  try { return native.encryptByPublicKeyAsync(data, publicKey, options).catch(rethrow) } catch (e) { return Promise.reject(coded(e)) }
}

function decryptByPrivateKeyAsync (data, privateKey, options) {
  try { return native.decryptByPrivateKeyAsync(data, key(privateKey), options).catch(rethrow) } catch (e) { return Promise.reject(coded(e)) }
}

/** A throwing progress callback must not take the process down from a native thread. */
function safeProgress (opts) {
  const f = opts.onProgress
  if (f === undefined || f === null) return { ...opts, onProgress: undefined }
  if (typeof f !== 'function') throw argError('options.onProgress must be a function')
  return { ...opts, onProgress: (...args) => { try { f(...args) } catch (e) { process.emitWarning(e) } } }
}

function encryptFile (src, dst, opts) {
  try {
    return native.encryptFile(src, dst, safeProgress(options(opts, 'encryptFile', 'publicKey'))).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

function decryptFile (src, dst, opts) {
  try {
    return native.decryptFile(src, dst, safeProgress(withKey(options(opts, 'decryptFile', 'privateKey')))).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

// Re-keying (src/rekey.rs): a new header for the same file key; the payload is not touched.
function rekeyOptions (opts, name) {
  if (opts === null || typeof opts !== 'object') throw argError(`${name}: options must be an object`)
  return opts
}

function rekeyFile (path, identities, opts) {
  try {
    return native.rekeyFile(path, key(identities), rekeyOptions(opts, 'rekeyFile')).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

/** Every file of a tree, each re-keyed in place (src/rekey/tree.rs); `onProgress(done, total)`. */
function rekeyTree (paths, identities, opts) {
  try {
    const o = rekeyOptions(opts, 'rekeyTree')
    if (o.output !== undefined || o.force !== undefined) {
      throw argError('rekeyTree re-keys each file where it is: output and force are options of rekeyFile')
    }
    return native.rekeyTree(paths, key(identities), safeProgress(o)).catch(rethrow)
  } catch (e) { return Promise.reject(coded(e)) }
}

function rekey (data, identities, opts) {
  try { return native.rekey(data, key(identities), rekeyOptions(opts, 'rekey')) } catch (e) { throw coded(e) }
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
  try { return sessionTransform(new native.EncryptSession(opts.publicKey, opts.allowPlugins)) } catch (e) { throw coded(e) }
}

function createDecryptStream (opts) {
  options(opts, 'createDecryptStream', 'privateKey')
  try { return sessionTransform(new native.DecryptSession(key(opts.privateKey), opts.allowPlugins)) } catch (e) { throw coded(e) }
}

// ── toolkit (src/toolkit.rs): flat native exports, wrapped so every error is coded, then
//    assembled into namespaces. Both spellings are exported (`aead.seal` and `aeadSeal`).

function sync (f) {
  return function (...args) { try { return f(...args) } catch (e) { throw coded(e) } }
}

function async (f) {
  return function (...args) {
    try { return f(...args).catch(rethrow) } catch (e) { return Promise.reject(coded(e)) }
  }
}

function opts (o, name) {
  if (o === undefined || o === null) return undefined
  if (typeof o !== 'object') throw argError(`${name}: options must be an object`)
  return o
}

const toolkit = {
  hash: sync(native.hash),
  hashFile: async(native.hashFile),
  hmac: sync(native.hmac),
  hmacVerify: sync(native.hmacVerify),
  kdfPbkdf2: async((password, salt, o) => native.kdfPbkdf2(password, salt, opts(o, 'kdf.pbkdf2'))),
  kdfArgon2id: async((password, salt, o) => native.kdfArgon2id(password, salt, opts(o, 'kdf.argon2id'))),
  kdfScrypt: async((password, salt, o) => {
    o = opts(o, 'kdf.scrypt')
    if (o) {
      // Node's spellings: N / cost, r / blockSize, p / parallelization.
      o = {
        cost: o.cost ?? o.N,
        blockSize: o.blockSize ?? o.r,
        parallelization: o.parallelization ?? o.p,
        length: o.length,
      }
    }
    return native.kdfScrypt(password, salt, o)
  }),
  kdfHkdf: sync(native.kdfHkdf),
  aeadSeal: sync(native.aeadSeal),
  aeadOpen: sync(native.aeadOpen),
  aeadGenerateKey: sync(native.aeadGenerateKey),
  hazmatEncrypt: sync((algo, key, iv, data) => native.hazmatEncrypt(algo, key, iv ?? undefined, data)),
  hazmatDecrypt: sync((algo, key, iv, data) => native.hazmatDecrypt(algo, key, iv ?? undefined, data)),
  signGenerateKeyPair: sync(native.signGenerateKeyPair),
  signMessage: sync(native.signMessage),
  signVerify: sync(native.signVerify),
  signPublicKeyOf: sync(native.signPublicKeyOf),
  rsaEncrypt: sync(native.rsaEncrypt),
  rsaDecrypt: sync(native.rsaDecrypt),
  tokenGenerateKey: sync(native.tokenGenerateKey),
  batchEncrypt: async(native.batchEncrypt),
  batchDecrypt: async(native.batchDecrypt),
}

const nativeTokenSeal = native.tokenSeal
const nativeTokenOpen = native.tokenOpen

/** The token hot path, written out (no rest/spread) to keep a 1 KB seal+open in microseconds. */
function tokenSeal (key, plaintext, o) {
  try {
    if (o === undefined || o === null) return nativeTokenSeal(key, plaintext)
    if (typeof o !== 'object') throw argError('token.seal: options must be an object')
    return nativeTokenSeal(key, plaintext, o.aad, o.ttlSeconds)
  } catch (e) { throw coded(e) }
}

function tokenOpen (keys, token, o) {
  try {
    if (o === undefined || o === null) return nativeTokenOpen(keys, token)
    if (typeof o !== 'object') throw argError('token.open: options must be an object')
    return nativeTokenOpen(keys, token, o.aad)
  } catch (e) { throw coded(e) }
}

// The flat exports keep the native positional signatures (as index.d.ts declares them);
// `token.seal` / `token.open` take the options object.
toolkit.tokenSeal = sync(nativeTokenSeal)
toolkit.tokenOpen = sync(nativeTokenOpen)

const kdf = Object.freeze({
  pbkdf2: toolkit.kdfPbkdf2,
  argon2id: toolkit.kdfArgon2id,
  scrypt: toolkit.kdfScrypt,
  hkdf: toolkit.kdfHkdf,
})
const aead = Object.freeze({
  seal: toolkit.aeadSeal,
  open: toolkit.aeadOpen,
  generateKey: toolkit.aeadGenerateKey,
})
const hazmat = Object.freeze({ encrypt: toolkit.hazmatEncrypt, decrypt: toolkit.hazmatDecrypt })
const sign = Object.freeze({
  generateKeyPair: toolkit.signGenerateKeyPair,
  sign: toolkit.signMessage,
  verify: toolkit.signVerify,
  publicKeyOf: toolkit.signPublicKeyOf,
})
const rsa = Object.freeze({ encrypt: toolkit.rsaEncrypt, decrypt: toolkit.rsaDecrypt })
const token = Object.freeze({ generateKey: toolkit.tokenGenerateKey, seal: tokenSeal, open: tokenOpen })

module.exports = {
  // "0.1.0 (abc1234)": the release and its commit, as `hyperseal --version` prints them.
  VERSION: native.version(),
  // 'native' (the addon for this platform) or 'wasm' (the WebAssembly fallback: README.md).
  backend,
  ERROR_CODES,
  generateKeyPair,
  publicKeyOf,
  encryptByPublicKey,
  decryptByPrivateKey,
  encryptByPublicKeyAsync,
  decryptByPrivateKeyAsync,
  encryptFile,
  decryptFile,
  rekeyFile,
  rekeyTree,
  rekey,
  createEncryptStream,
  createDecryptStream,
  AgentIdentity,
  // An AgentIdentity's key string for `path` (what `hyperseal agent identity` prints).
  agentIdentity: (path) => new AgentIdentity(path).privateKey,
  EncryptSession: native.EncryptSession,
  DecryptSession: native.DecryptSession,
  ...toolkit,
  kdf,
  aead,
  hazmat,
  sign,
  rsa,
  token,
}
