// The worker side of WorkerPool (js/workers.js): one WebAssembly instance per worker, so each
// runs on its own core and the page's main thread never waits on cryptography.
//
// Messages in: { id, op: 'encryptFile' | 'decryptFile', blob, options }, { id, op: 'run', name,
// args }, or the steps of one file across workers (WorkerPool's parallel path, over the
// library's PartKey): { id, op: 'beginSeal' | 'beginOpen', blob, options } for a Blob's header,
// key and plan; each part, of a Blob or of bytes, as { id, op: 'sealBytes' | 'openBytes', data
// (the part's bytes, transferred), length, options: { key, first, partSize, blob } }, and 'beginSealBytes' |
// 'beginOpenBytes' when a passphrase's KDF must run here; { id, op: 'ping' } answers once the
// module has loaded. A sealed part comes back with its claim record (the library's), which the
// page settles before it keeps the part.
// Messages out: { id, progress: bytesRead }, then { id, ok: result } or
// { id, error: { message, code } }. Files are read with Blob.stream() and pushed through the
// library's Sealer/Opener (EncryptSession/DecryptSession), so memory stays flat; the result is
// a Blob (large Blobs may live on disk in Chromium, and cross threads without a copy).

import init, * as hs from './core.js'
// Not a public export (it hands its caller duties, see the library's parts::PartKey): only
// WorkerPool's parallel path uses it, here.
import { PartKey } from '../pkg/hyperseal.js'
import { openBegun, sealBegun } from './plan.js'

const ready = init()

/** Reports progress at most once per this many bytes. */
const PROGRESS_STEP = 1 << 20

async function pump (id, blob, session) {
  const parts = []
  const reader = blob.stream().getReader()
  let read = 0
  let reported = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const out = session.push(value)
      if (out.length > 0) parts.push(out)
      read += value.length
      if (read - reported >= PROGRESS_STEP) {
        reported = read
        postMessage({ id, progress: read })
      }
    }
    const last = session.final()
    if (last.length > 0) parts.push(last)
  } finally {
    session.free()
  }
  postMessage({ id, progress: read })
  return new Blob(parts, { type: 'application/octet-stream' })
}

function encryptSession ({ publicKey, passphrase, ...options }) {
  if (typeof passphrase === 'string') return hs.EncryptSession.withPassphrase(passphrase, options)
  return new hs.EncryptSession(publicKey, options)
}

function decryptSession ({ privateKey, passphrase, allowPlugins }) {
  if (typeof passphrase === 'string') return hs.DecryptSession.withPassphrase(passphrase)
  return new hs.DecryptSession(privateKey, { allowPlugins })
}

/** The header and salt always fit in this many bytes from the start of a file. */
const HEADER_MAX = (1 << 20) + 64

/** Begins a file of blob.size bytes: its first bytes, the part key (as bytes) and its plan. */
function beginSeal (blob, { publicKey, passphrase, partSize, ...options }) {
  // Hyperseal files sealed in parts are AES-256-GCM where WebCrypto can run it (see `part`).
  if (subtle && options.format !== 'age' && options.suite === undefined) options.suite = 'aes-256-gcm'
  const key = typeof passphrase === 'string'
    ? PartKey.sealNewWithPassphrase(passphrase, blob.size, options)
    : PartKey.sealNew(publicKey, blob.size, options)
  try {
    return { head: key.head(), key: key.toBytes(), plan: key.plan(partSize), partSize }
  } finally {
    key.free()
  }
}

/** Opens the header of an encrypted blob: the part key (as bytes) and its plan. */
async function beginOpen (blob, { privateKey, passphrase, partSize, allowPlugins }) {
  const prefix = new Uint8Array(await blob.slice(0, HEADER_MAX).arrayBuffer())
  const key = typeof passphrase === 'string'
    ? PartKey.openFileWithPassphrase(prefix, blob.size, passphrase)
    : PartKey.openFile(prefix, blob.size, privateKey, { allowPlugins })
  try {
    // Parts are counted in plaintext; whole chunks of it, so the plan is chunk-aligned.
    return { key: key.toBytes(), plan: key.plan(partSize) }
  } finally {
    key.free()
  }
}

/** `WorkerPool.encrypt` with a passphrase: the KDF runs here; the head, key and plan go back. */
function beginSealBytes (total, { passphrase, workers, ...options }) {
  return sealBegun(PartKey.sealNewWithPassphrase(passphrase, total, options), total, workers)
}

/** `WorkerPool.decrypt` with a passphrase: `prefix` holds the header. */
function beginOpenBytes (prefix, { passphrase, total, workers }) {
  return openBegun(PartKey.openFileWithPassphrase(prefix, total, passphrase), workers)
}

/** WebCrypto, where the page has it (secure contexts). */
const subtle = globalThis.crypto?.subtle

/**
 * Seals or opens one part moved here from the page: the first `length` bytes of `buf`, which
 * goes back with the result in its first bytes (`buf` has room for it): one copy into
 * WebAssembly memory, one copy out, no new array. A sealed part also carries its claim. With
 * `blob` (a file's part, for a Blob result) the result goes back as a Blob made here, where two
 * workers make theirs at once, and `buf` only for the page to reuse (opened bytes wiped).
 *
 * AES-256-GCM parts go to WebCrypto, chunk by chunk with the calls the library plans (its
 * nonces, its boundaries, its shape checks): Chromium runs them on its own threads with AES
 * instructions, 1.6–1.9× the WebAssembly ChaCha20-Poly1305 and 5–6× its AES-GCM
 * (bindings/wasm/README.md). Everything else runs in WebAssembly.
 */
async function bytesPart (buf, length, { key, first, partSize, blob }, sealing) {
  const data = new Uint8Array(buf, 0, length)
  const k = PartKey.fromBytes(key)
  try {
    let n, claim
    if (subtle && k.suite === 'aes-256-gcm') {
      // WebCrypto copies each chunk's input when called, so the results may overwrite `buf`.
      const r = await viaWebCrypto(k, first, data, sealing)
      if (sealing) claim = k.partClaim(partSize, first, r)
      new Uint8Array(buf).set(r)
      n = r.length
    } else if (sealing) {
      ;[n, claim] = k.sealInto(partSize, first, data, new Uint8Array(buf))
    } else {
      n = k.openInto(first, data, new Uint8Array(buf))
    }
    if (!blob) return { buffer: buf, length: n, claim }
    const result = new Uint8Array(buf, 0, n)
    const made = new Blob([result])
    if (!sealing) result.fill(0)
    return { blob: made, buffer: buf, claim }
  } finally {
    k.free()
  }
}

/** Buffers for `sharedPart`, reused: a worker may hold two parts at once (two per worker in flight). */
const scratch = []

/**
 * `bytesPart` on shared memory (a cross-origin isolated page): `data` is the part's input and
 * `into` its place in the result, both views of SharedArrayBuffers. Suites sealed in
 * WebAssembly take both views as they are: the binding copies `data` into WebAssembly memory
 * once (a snapshot no other thread can change mid-part) and writes the result straight into
 * `into`, so a byte is copied three times here (in, the engine, out) instead of five. WebCrypto
 * refuses shared views, so AES-256-GCM parts go through a private buffer.
 */
async function sharedPart (data, into, options, sealing) {
  const k = PartKey.fromBytes(options.key)
  let direct
  try {
    if (!(subtle && k.suite === 'aes-256-gcm')) {
      const [n, claim] = sealing ? k.sealInto(options.partSize, options.first, data, into) : [k.openInto(options.first, data, into)]
      direct = { length: n, claim }
    }
  } finally {
    k.free()
  }
  if (direct) {
    return fits(direct, into)
  }
  const need = Math.max(data.length, into.length)
  const i = scratch.findIndex((b) => b.byteLength >= need)
  const buf = i >= 0 ? scratch.splice(i, 1)[0] : new ArrayBuffer(need)
  try {
    new Uint8Array(buf, 0, data.length).set(data)
    const r = await bytesPart(buf, data.length, options, sealing)
    fits(r, into)
    into.set(new Uint8Array(buf, 0, r.length))
    return { length: r.length, claim: r.claim }
  } finally {
    if (scratch.length < 2) scratch.push(buf)
  }
}

/** `r` if its length is the planned part's (`into`'s), else the error that names both. */
function fits (r, into) {
  if (r.length !== into.length) throw Object.assign(new Error(`worker: a part came out ${r.length} bytes, the plan says ${into.length}`), { code: 'ERR_HYPERSEAL_IO' })
  return r
}

async function viaWebCrypto (k, first, data, sealing) {
  const calls = k.chunkCalls(first, data.length, sealing)
  const raw = k.rawAeadKey()
  const key = await subtle.importKey('raw', raw, 'AES-GCM', false, [sealing ? 'encrypt' : 'decrypt'])
  raw.fill(0)
  const out = new Uint8Array(sealing ? k.sealedLength(first, data.length) : k.openedLength(data.length))
  const results = await Promise.allSettled(calls.map(([iv, a, b]) =>
    subtle[sealing ? 'encrypt' : 'decrypt']({ name: 'AES-GCM', iv, tagLength: 128 }, key, data.subarray(a, b))))
  for (let i = 0; i < calls.length; i++) {
    const r = results[i]
    if (r.status === 'rejected') {
      out.fill(0) // nothing of a part that failed leaves the worker
      const index = first + i
      throw Object.assign(new Error(`payload chunk ${index} failed to authenticate: the file is corrupted or was tampered with`), { code: sealing ? 'ERR_HYPERSEAL_IO' : 'ERR_HYPERSEAL_AUTH' })
    }
    out.set(new Uint8Array(r.value), calls[i][3])
  }
  return out
}

// Functions a page may run here by name: everything the package exports that is a function.
const callable = (name) => typeof hs[name] === 'function' && !/^[A-Z]/.test(name) && name !== 'default' && name !== 'initSync'

self.onmessage = async ({ data: { id, op, blob, data, into, length, options, name, args } }) => {
  try {
    await ready
    let ok
    if (op === 'encryptFile') ok = await pump(id, blob, encryptSession(options ?? {}))
    else if (op === 'decryptFile') ok = await pump(id, blob, decryptSession(options ?? {}))
    else if (op === 'beginSeal') ok = beginSeal(blob, options)
    else if (op === 'beginOpen') ok = await beginOpen(blob, options)
    // A Blob, made here: joining Blobs on the main thread is cheap, copying bytes into one is not.
    else if (op === 'beginSealBytes') ok = beginSealBytes(data, options)
    else if (op === 'beginOpenBytes') ok = beginOpenBytes(data, options)
    else if (op === 'sealBytes' || op === 'openBytes') ok = await bytesPart(data, length, options, op === 'sealBytes')
    else if (op === 'sealShared' || op === 'openShared') ok = await sharedPart(data, into, options, op === 'sealShared')
    else if (op === 'ping') ok = true
    else if (op === 'run' && callable(name)) ok = await hs[name](...(args ?? []))
    else throw Object.assign(new Error(`worker: unknown operation ${op} ${name ?? ''}`), { code: 'ERR_HYPERSEAL_ARGUMENT' })
    const moved = ok instanceof Uint8Array ? ok.buffer : ok?.buffer instanceof ArrayBuffer ? ok.buffer : undefined
    postMessage({ id, ok }, moved ? [moved] : [])
  } catch (e) {
    postMessage({ id, error: { message: String(e?.message ?? e), code: e?.code ?? 'ERR_HYPERSEAL_IO' } })
  }
}
