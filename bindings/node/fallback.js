'use strict'
// The WebAssembly fallback (loader.js picks it where no native addon fits): the browser
// package's Rust bindings (bindings/wasm), whose wasm-bindgen glue for Node
// (browser/pkg/hyperseal-node.cjs) loads the very .wasm a page runs, behind the names and
// shapes of the native addon, so that index.js wraps either one the same way.
// This file converts (Uint8Array → Buffer, positional → options) and sequences calls; the
// library does every cryptographic step, parses every key and assigns every error code. Files go
// through node:fs in fallback-files.js.
//
// What the WebAssembly build cannot do (README.md, "Without a native addon"): RSA keys and
// RSA-OAEP/RSA signatures, the hazmat legacy modes, rekeyTree, age plugins (no child
// processes) and the identity agent (no sockets) throw or reject with coded errors; work runs
// on the calling thread, one core.

const wasm = require('./browser/pkg/hyperseal-node.cjs')
const files = require('./fallback-files.js')
const { version } = require('./package.json')

const PIECE = 2 << 20

const buffer = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength)

function coded (code, message) {
  return Object.assign(new Error(message), { code })
}

/** Runs `f` after the current event-loop turn, as the addon's async tasks settle later. */
function later (f) {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try { resolve(f()) } catch (e) { reject(e) }
    })
  })
}

/** `f()` now, its result or error delivered as `later` delivers them. */
function settled (f) {
  let r
  try { r = { ok: f() } } catch (e) { r = { e } }
  return later(() => { if ('e' in r) throw r.e; return r.ok })
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

// The addon's argument types that the WebAssembly bindings would coerce: napi accepts only a
// Buffer/Uint8Array where the addon takes `&[u8]`, and only a string for a path.
function bytes (v, name) {
  if (!(v instanceof Uint8Array)) throw coded('ERR_HYPERSEAL_ARGUMENT', `${name} must be a Buffer or Uint8Array`)
  return v
}

function flag (v, name) {
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw coded('ERR_HYPERSEAL_ARGUMENT', `${name} must be a boolean`)
  return v === true
}

function string (v, name) {
  if (typeof v !== 'string') throw coded('ERR_HYPERSEAL_ARGUMENT', `${name} must be a string`)
  return v
}

// ── keys and buffers ────────────────────────────────────────────────────────────────────────

function generateKeyPair (options) {
  return wasm.generateKeyPair(options ?? undefined)
}

function encryptByPublicKey (data, publicKey, options) {
  return buffer(wasm.encryptByPublicKey(data, publicKey, options ?? undefined))
}

function decryptByPrivateKey (data, privateKey, options) {
  return buffer(wasm.decryptByPrivateKey(data, privateKey, options ?? undefined))
}

// ── streams: the addon's session shape (`push` → bytes ready, `final` → the rest) ────────────

/** A session made by a static `age` rather than the constructor. */
const AGE = Symbol('age')

class Session {
  push (chunk) { return buffer(this.session.push(chunk)) }

  final () {
    // An age session answers `size` after its end (typage's streams do): the collector frees it.
    try { return buffer(this.session.final()) } finally { if (!this.keep) this.session.free() }
  }
}

class EncryptSession extends Session {
  constructor (publicKey, allowPlugins) {
    super()
    if (publicKey !== AGE) this.session = new wasm.EncryptSession(publicKey, { allowPlugins })
  }

  /** An age file for `hyperseal/age` (the addon's `EncryptSession.age`). */
  static age (plan) { return Object.assign(new EncryptSession(AGE), { session: wasm.EncryptSession.age(plan), keep: true }) }

  size (n) { return this.session.size(n) }
}

class DecryptSession extends Session {
  constructor (privateKey, allowPlugins) {
    super()
    if (privateKey !== AGE) this.session = new wasm.DecryptSession(privateKey, { allowPlugins })
  }

  /** An age file for `hyperseal/age` (the addon's `DecryptSession.age`). */
  static age (keys) { return Object.assign(new DecryptSession(AGE), { session: wasm.DecryptSession.age(keys), keep: true }) }

  size (n) { return this.session.size(n) }

  get headerRead () { return this.session.headerRead }
}

// ── files ───────────────────────────────────────────────────────────────────────────────────

/**
 * `src` through a session into `dst`, in pieces of 2 MiB with a progress report after each;
 * `total` is what `bytes` counts towards. Resolves with the plaintext byte count.
 */
async function sessionFile (src, dst, options, session, plaintextSide) {
  const input = await files.readInput(src)
  const where = await files.destination(dst, { force: options.force, input: input.stat })
  const progress = typeof options.onProgress === 'function' ? options.onProgress : () => {}
  const bytes = input.bytes
  const out = []
  let n = 0
  try {
    for (let at = 0; at < bytes.length; at += PIECE) {
      const piece = bytes.subarray(at, at + PIECE)
      const o = session.push(piece)
      if (o.length > 0) out.push(o)
      n += plaintextSide === 'input' ? piece.length : o.length
      // The decrypted size is known only at the end; the sealed size bounds it from above.
      progress({ bytes: n, total: bytes.length, percentage: Math.min(100, (n * 100) / (bytes.length || 1)) })
      await turn()
    }
    const last = session.final()
    if (last.length > 0) out.push(last)
    if (plaintextSide === 'output') n += last.length
    await files.writeAll(dst, out, where)
    progress({ bytes: n, total: n, percentage: 100 })
    return n
  } finally {
    // Plaintext copies: the input when encrypting, the output when decrypting.
    for (const p of plaintextSide === 'input' ? [bytes] : out) p.fill(0)
  }
}

function fileOptions (src, dst, options) {
  string(src, 'src')
  string(dst, 'dst')
  return { force: flag(options.force, 'options.force'), onProgress: options.onProgress }
}

function encryptFile (src, dst, options) {
  const o = fileOptions(src, dst, options)
  return later(() => new EncryptSession(options.publicKey, options.allowPlugins))
    .then((s) => sessionFile(src, dst, o, s, 'input'))
}

function decryptFile (src, dst, options) {
  const o = fileOptions(src, dst, options)
  return later(() => new DecryptSession(options.privateKey, options.allowPlugins))
    .then((s) => sessionFile(src, dst, o, s, 'output'))
}

// ── re-keying: the library's `rekey_head`, the payload copied after the new header ──────────

function rekeyHead (data, identities, options) {
  const { recipients, add, remove, passphrase, removeOwn, allowPlugins } = options
  return wasm.rekeyHead(data, identities ?? null, { recipients, add, remove, passphrase, removeOwn, allowPlugins })
}

// sops files need the library's sops parsers, which the WebAssembly build does not carry.
function refuseSops (options) {
  if (options !== null && typeof options === 'object' && options.sops) {
    unavailable('ERR_HYPERSEAL_ARGUMENT', 'sops files (the sops option)')()
  }
}

function rekey (data, identities, options) {
  refuseSops(options)
  if (options.output !== undefined || options.force !== undefined || options.dryRun !== undefined) {
    throw coded('ERR_HYPERSEAL_ARGUMENT', 'rekey returns the new bytes: output, force and dryRun are options of rekeyFile')
  }
  const bytes = typeof data === 'string' ? Buffer.from(data) : data
  const r = rekeyHead(bytes, identities, options)
  return Buffer.concat([r.header, bytes.subarray(r.oldHeaderLength)])
}

/**
 * Never in place here: the file is written anew (README.md), so its hard links would split, and
 * on Linux its extended attributes would be lost: there only `output` is written.
 */
async function rekeyFile (path, identities, options) {
  refuseSops(options)
  string(path, 'path')
  if (options.output !== undefined) string(options.output, 'options.output')
  const [force, dryRun, splitLinks] = ['force', 'dryRun', 'splitLinks'].map((n) => flag(options[n], `options.${n}`))
  const output = options.output ?? path
  const input = await files.openForRekey(path)
  try {
    const r = rekeyHead(input.bytes, identities, options)
    const report = { before: r.before, after: r.after, removed: r.removed, added: r.added, inPlace: false }
    const pieces = [r.header, input.bytes.subarray(r.oldHeaderLength)]
    if (output !== path) {
      const where = await files.destination(output, { force, input: { dev: Number(input.stat.dev), ino: Number(input.stat.ino) } })
      if (!dryRun) await files.writeAll(output, pieces, where)
      return report
    }
    // First, and in a dry run too: splitLinks would not help, and nothing is created yet.
    files.refuseRewriteOver(path)
    if (input.stat.nlink > 1n && !splitLinks) {
      throw files.ioError(`${path} has ${input.stat.nlink} hard links and the WebAssembly build cannot re-key it in place: pass splitLinks: true to rewrite this name only`)
    }
    if (dryRun) return report
    await files.replaceIfUnchanged(path, pieces, input)
    return report
  } finally {
    if (input.fh !== null) await input.fh.close().catch(() => {})
  }
}

// ── toolkit ─────────────────────────────────────────────────────────────────────────────────

const unavailable = (code, what) => () => {
  throw coded(code, `${what} is not available in the WebAssembly build (backend 'wasm'): it needs the native addon`)
}

async function batch (algo, key, messages, seal) {
  bytes(key, 'key')
  if (!Array.isArray(messages)) throw coded('ERR_HYPERSEAL_ARGUMENT', 'messages must be an array')
  const out = []
  for (let i = 0; i < messages.length; i++) {
    try {
      out.push(buffer(seal ? wasm.aeadSeal(algo, key, messages[i]) : wasm.aeadOpen(algo, key, messages[i])))
    } catch (e) {
      if (!seal && e.code === 'ERR_HYPERSEAL_AUTH') throw coded(e.code, `batchDecrypt: message ${i} failed to authenticate`)
      throw e
    }
  }
  return out
}

module.exports = {
  version: () => version,
  errorCodes: () => wasm.errorCodes(),
  generateKeyPair,
  publicKeyOf: (privateKey) => wasm.publicKeyOf(privateKey),
  // The identity agent listens on a Unix socket, which WebAssembly cannot reach.
  agentIdentity: () => { throw coded('ERR_HYPERSEAL_KEY', 'the identity agent is not available in the WebAssembly build (it needs a Unix socket; the native addon has it)') },
  encryptByPublicKey,
  decryptByPrivateKey,
  encryptByPublicKeyAsync: (data, publicKey, options) => later(() => encryptByPublicKey(data, publicKey, options)),
  decryptByPrivateKeyAsync: (data, privateKey, options) => later(() => decryptByPrivateKey(data, privateKey, options)),
  encryptFile,
  decryptFile,
  rekeyFile: (path, identities, options) => later(() => rekeyFile(path, identities, options)),
  // The tree walk, its manifest and each file's in-place write are the library's file system
  // code, which the WebAssembly build does not have.
  rekeyTree: () => later(unavailable('ERR_HYPERSEAL_ARGUMENT', 'rekeyTree (re-keying a tree of files)')),
  rekey,
  EncryptSession,
  DecryptSession,
  // hyperseal/age (typage's API): the same calls as the addon's src/age.rs.
  // Computed at once (the caller wipes the plan's file key when the call returns), settled
  // on a later turn as the addon's tasks are.
  ageEncrypt: (data, plan) => settled(() => buffer(wasm.ageEncrypt(data, plan))),
  ageDecrypt: (data, keys) => settled(() => buffer(wasm.ageDecrypt(data, keys))),
  ageHeader: (prefix, ended) => wasm.ageHeader(prefix, ended),
  ageDecryptHeader: (header, keys) => wasm.ageDecryptHeader(header, keys),
  ageArmor: (file) => wasm.ageArmor(file),
  ageDearmor: (text) => buffer(wasm.ageDearmor(text)),
  ageFileKey: () => buffer(wasm.ageFileKey()),
  ageCheckRecipient: (recipient) => wasm.ageCheckRecipient(recipient),
  ageX25519Shares: (header) => wasm.ageX25519Shares(header),
  ageX25519Recipient: (pub) => wasm.ageX25519Recipient(pub),
  ageX25519Unwrap: (header, pub, shares, secrets) => { const k = wasm.ageX25519Unwrap(header, pub, shares, secrets); return k && buffer(k) },
  hash: (algo, data) => buffer(wasm.hash(algo, data)),
  hashFile: (algo, path) => later(() => string(path, 'path')).then(files.readInput).then((input) => buffer(wasm.hash(algo, input.bytes))),
  hmac: (algo, key, data) => buffer(wasm.hmac(algo, key, data)),
  hmacVerify: (algo, key, data, tag) => wasm.hmacVerify(algo, key, data, bytes(tag, 'tag')),
  kdfPbkdf2: (password, salt, options) => later(() => buffer(wasm.kdfPbkdf2Sync(password, salt, options))),
  kdfArgon2id: (password, salt, options) => later(() => buffer(wasm.kdfArgon2idSync(password, salt, options))),
  kdfScrypt: (password, salt, options) => later(() => buffer(wasm.kdfScryptSync(password, salt, options))),
  kdfHkdf: (ikm, salt, info, length, hash) => buffer(wasm.kdfHkdf(ikm, salt, info, length, hash)),
  aeadSeal: (algo, key, data, aad) => buffer(wasm.aeadSeal(algo, bytes(key, 'key'), data, aad)),
  aeadOpen: (algo, key, sealed, aad) => buffer(wasm.aeadOpen(algo, bytes(key, 'key'), bytes(sealed, 'sealed'), aad)),
  aeadGenerateKey: (algo) => buffer(wasm.aeadGenerateKey(algo)),
  hazmatEncrypt: unavailable('ERR_HYPERSEAL_ARGUMENT', 'hazmat (legacy unauthenticated modes)'),
  hazmatDecrypt: unavailable('ERR_HYPERSEAL_ARGUMENT', 'hazmat (legacy unauthenticated modes)'),
  signGenerateKeyPair: (kind) => wasm.signGenerateKeyPair(kind),
  signMessage: (privateKey, data, padding) => buffer(wasm.signMessage(privateKey, data, padding)),
  signVerify: (publicKey, data, signature, padding) => wasm.signVerify(publicKey, data, bytes(signature, 'signature'), padding),
  signPublicKeyOf: (privateKey) => wasm.signPublicKeyOf(privateKey),
  rsaEncrypt: unavailable('ERR_HYPERSEAL_KEY', 'RSA-OAEP'),
  rsaDecrypt: unavailable('ERR_HYPERSEAL_KEY', 'RSA-OAEP'),
  tokenGenerateKey: () => wasm.tokenGenerateKey(),
  tokenSeal: (key, plaintext, aad, ttlSeconds) => wasm.tokenSeal(key, plaintext, aad, ttlSeconds),
  tokenOpen: (keys, token, aad) => buffer(wasm.tokenOpen(keys, token, aad)),
  batchEncrypt: (algo, key, messages) => later(() => batch(algo, key, messages, true)),
  batchDecrypt: (algo, key, messages) => later(() => batch(algo, key, messages, false)),
}
