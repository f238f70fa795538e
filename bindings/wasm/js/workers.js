// WorkerPool: hyperseal off the main thread, on every core. Each worker (js/worker.js) holds its
// own WebAssembly instance; calls go to the least busy one. A large input is sealed (or opened)
// by all the workers together over the library's PartKey: the header and payload key are made
// once, each worker seals the chunk-aligned parts it is handed, and the parts are joined in
// order into one ordinary file — the same file the CLI opens. Smaller inputs run as one stream.
//
//   import { WorkerPool } from 'hyperseal'
//   const pool = new WorkerPool()                       // navigator.hardwareConcurrency workers
//   await pool.ready()                                  // optional: start the workers now
//   const sealed = await pool.encrypt(bytes, { publicKey, format: 'age' })   // Uint8Array
//   const file = await pool.encryptFile(blob, { publicKey, onProgress: (n) => bar.value = n })
//   const plain = await pool.decryptFile(file, { privateKey })           // Blobs in, Blobs out
//   const key = await pool.run('kdfArgon2id', 'pw', salt)                // any export, by name
//   pool.terminate()
//
// Rejections are Errors with the same `code`s as the direct calls. Every call has a deadline:
// a worker that sends nothing for `timeoutMs` fails the call with ERR_HYPERSEAL_IO and is
// replaced (so is a worker that crashes).

import * as hs from '../pkg/hyperseal.js'
import { createEncryptStream, createDecryptStream } from './core.js'
import { hasPasskey, answerRecipients, answerIdentitiesFor, forget } from './passkeys.js'
import { partReader } from './blob-reader.js'
import { openBegun, sealBegun } from './plan.js'

/**
 * Blob inputs from this size on go through every worker in parts (AES-256-GCM parts on
 * WebCrypto); below it one worker streams the file. Both are bound by Chromium's Blob reads and
 * writes, not by the cipher (bindings/wasm/README.md, "Files").
 */
export const PARALLEL_MIN = 4 << 20

/**
 * `encrypt` (bytes in memory) below this size runs as one stream on the calling thread, from it
 * on in parts across the workers; `decrypt` from `BYTES_OPEN_PARALLEL_MIN`. Measured with a
 * warm 2-worker pool against `encryptByPublicKey`/`decryptByPrivateKey` on the main thread,
 * interleaved in one page, 11 rounds, medians (age files to X25519; Chromium 156, AMD EPYC,
 * 2 CPUs; the page's processes given the CPUs over other sessions' builds, autogroup nice
 * -10; `node bench/browser.mjs --groups pool` shows the same comparison). Parts ÷ one stream,
 * encrypt: 0.53–0.56× at 250 KB, 0.67–0.73× at 1 MB, 0.63–0.87× at 2 MB, 1.06× at 3 MB,
 * 1.06–1.21× at 4 MB, 1.03× at 8 MB, 1.06–1.18× at 16 MB, 1.12× at 32 MB. Decrypt: below one
 * stream up to 8 MB (0.79–0.9×), 0.74–1.13× at 16 MB, 1.07× at 32 MB (opening wipes each
 * part's plaintext in WebAssembly memory, one more pass). Fixed costs per call: a round trip
 * per part (0.3 ms) and the copies; per byte, the result's fresh pages (faulted in on the main
 * thread while the workers run) and two copies through warm buffers.
 */
export const BYTES_PARALLEL_MIN = 4 << 20

/** `decrypt`'s crossover (see `BYTES_PARALLEL_MIN`). */
export const BYTES_OPEN_PARALLEL_MIN = 32 << 20

/**
 * Both crossovers on a cross-origin isolated page, where the workers read and write shared
 * memory (no part copied by the page, no result page faulted in on it). Measured with a warm
 * 2-worker pool against one stream on the main thread, interleaved in one isolated page, 15
 * calls each, medians (age files to X25519; Chromium 156, Intel Xeon, 2 CPUs, idle machine):
 * parts ÷ one stream, encrypt 0.70× at 1 MB, 1.26× at 2 MB, 1.39–1.46× at 4 MB, 1.66× at 8 MB;
 * decrypt 0.73×, 1.02×, 1.28–1.34×, 1.56×.
 */
export const BYTES_SHARED_PARALLEL_MIN = 2 << 20

/** Blob inputs: plaintext per part; the largest chunk a Blob's stream gives in Chromium. */
const PART_BYTES = 2 << 20

/**
 * Blob inputs written to a sink (`encryptFileTo`/`decryptFileTo`): plaintext per part, each part
 * one write. Chromium makes a Blob of every write to a file handle and has the browser process
 * copy it to the file, a cost per write: 1 GiB through the web app to an Origin Private File
 * System handle (AMD EPYC, 2 cores, Chromium 156; three alternated runs each) was encrypted at
 * 200–238 MB/s in 2 MiB parts and 215–254 MB/s in 8 MiB parts, with about 10% less CPU in the
 * browser process. Larger parts add to the memory in flight (a few parts per worker), not to
 * the speed.
 */
const SINK_PART_BYTES = 8 << 20


/**
 * The largest Blob sealed in parts: the library's PartKey sizes a sealed payload in the
 * platform's word, 32 bits in WebAssembly, so it refuses to begin a file of 4 GiB (less the
 * tags) or more; such a file is sealed as one stream. Opening takes any size.
 */
const SEAL_PARTS_MAX = 2 ** 32 - 2 ** 21


/**
 * Shared-memory results a worker may have written into before it is replaced. A worker keeps
 * every `SharedArrayBuffer` it was handed (the views of each call's result) until its own
 * garbage collector runs, and a worker that only seals allocates almost nothing, so that is
 * rarely: after 76 calls of 16 MB in a row the page's renderer held 3.4 GB, all of it released
 * when the workers were terminated (Chromium 156; a collection on the page does not help). So a
 * worker that has written this much is terminated once it has no call in flight, and a fresh one
 * starts loading at once (about 50 ms, off the next call's path when there is any pause).
 */
const SHARED_RECYCLE = 256 << 20

/** Default deadline: the longest a worker may stay silent (no result, no progress) in a call. */
const TIMEOUT_MS = 60_000

const ioError = (message) => Object.assign(new Error(message), { code: 'ERR_HYPERSEAL_IO' })
const argError = (message) => Object.assign(new TypeError(message), { code: 'ERR_HYPERSEAL_ARGUMENT' })

/** `blob` through this thread's encrypt or decrypt stream into `sink`, chunk by chunk. */
async function streamTo (sealing, blob, sink, options, onProgress) {
  let read = 0
  const counted = new TransformStream({
    transform (chunk, controller) {
      read += chunk.length
      onProgress?.(read)
      controller.enqueue(chunk)
    },
  })
  await blob.stream()
    .pipeThrough(counted)
    .pipeThrough(sealing ? createEncryptStream(options) : createDecryptStream(options))
    .pipeTo(new WritableStream({ write: (chunk) => sink.write(chunk) }))
}

async function startsArmored (blob) {
  const first = new Uint8Array(await blob.slice(0, 1).arrayBuffer())
  return first.length === 1 && hs.startsArmor(first[0])
}

export class WorkerPool {
  /**
   * `size`: workers (default: the number of cores); `url`: the worker script (default:
   * worker.js beside this file; bundlers that know `new URL(…, import.meta.url)` emit it);
   * `timeoutMs`: how long a worker may stay silent in a call before the call fails and the
   * worker is replaced (default 60 s; progress counts as an answer).
   */
  constructor ({ size, url, timeoutMs } = {}) {
    const cores = (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 2
    this.size = Math.max(1, size ?? cores)
    this.url = url ?? new URL('./worker.js', import.meta.url)
    this.timeoutMs = timeoutMs ?? TIMEOUT_MS
    this.workers = []
    this.calls = new Map()
    this.next = 0
    this.spare = []
    this.sharedIn = null
  }

  /** Starts every worker and waits until each has loaded its WebAssembly instance. */
  async ready () {
    while (this.workers.length < this.size) this.#spawn()
    await Promise.all(this.workers.map((w) => this.#post({ op: 'ping' }, undefined, w)))
  }

  /**
   * Encrypts bytes (Uint8Array, ArrayBuffer or string) → Uint8Array: `{ publicKey | passphrase,
   * format, armor, parallel }`. From `BYTES_PARALLEL_MIN` bytes on, in parts across the
   * workers; below, one stream on this thread (a passphrase's KDF always runs in a worker, and
   * so does one stream of a larger input: armor, or `parallel: false`). `parallel`: true/false
   * forces parts or one stream. The input is copied, never detached.
   */
  encrypt (data, options = {}) { return this.#bytes(true, data, options) }

  /** Decrypts bytes → Uint8Array: `{ privateKey | passphrase, parallel }`, as `encrypt` (parts from `BYTES_OPEN_PARALLEL_MIN`). */
  decrypt (data, options = {}) { return this.#bytes(false, data, options) }

  /**
   * Encrypts a Blob/File: `{ publicKey | passphrase, format, onProgress(bytesRead), parallel }`
   * → Blob. `parallel`: true/false forces all workers or one; by default files of
   * `PARALLEL_MIN` bytes and more use all of them.
   */
  encryptFile (blob, options) { return this.#file('encryptFile', blob, options) }

  /** Decrypts a Blob/File: `{ privateKey | passphrase, onProgress(bytesRead), parallel }` → Blob. */
  decryptFile (blob, options) { return this.#file('decryptFile', blob, options) }

  /**
   * `encryptFile`, written to `sink` (a `FileSystemWritableFileStream`, or any object whose
   * `write(Blob | Uint8Array)` returns a promise and writes in call order) instead of returned:
   * each part is written as soon as it and every part before it are sealed, so the output is
   * never joined into one Blob, and at most a few parts per worker wait for the writer. The
   * caller closes the sink; on a rejection it aborts it (what was written is not a file).
   */
  encryptFileTo (blob, sink, options) { return this.#file('encryptFile', blob, options, sink) }

  /**
   * `decryptFile` written to `sink`, as `encryptFileTo`. Every part is authenticated before it
   * is written; the file is complete only when the call resolves (the last part checks the
   * final chunk), so the caller closes the sink then, and aborts it on a rejection.
   */
  decryptFileTo (blob, sink, options) { return this.#file('decryptFile', blob, options, sink) }

  /** Runs the package's export `name` in a worker (arguments and result are structured-cloned). */
  run (name, ...args) { return this.#post({ op: 'run', name, args }) }

  /** Stops every worker; pending calls reject with ERR_HYPERSEAL_IO. */
  terminate () {
    for (const w of this.workers) w.worker.terminate()
    this.workers = []
    this.spare = []
    for (const c of this.calls.values()) { clearTimeout(c.timer); c.reject(ioError('the worker pool was terminated')) }
    this.calls.clear()
  }

  async #bytes (sealing, data, options) {
    const input = bytesOf(data, sealing ? 'encrypt' : 'decrypt')
    const given = options
    options = await answered(sealing, options, async (n) => input.subarray(0, n), input.length)
    try {
      return await this.#bytesWith(sealing, input, options)
    } finally {
      if (options !== given) forget(sealing ? options.publicKey : options.privateKey)
    }
  }

  async #bytesWith (sealing, input, options) {
    const { parallel, ...rest } = options
    const pass = typeof rest.passphrase === 'string'
    const armored = sealing ? rest.armor === true : input.length > 0 && hs.startsArmor(input[0])
    const min = sharedMemory() ? BYTES_SHARED_PARALLEL_MIN : sealing ? BYTES_PARALLEL_MIN : BYTES_OPEN_PARALLEL_MIN
    const parts = !armored && parallel !== false && (parallel === true || input.length >= min)
    if (!parts) {
      // One stream: here below the crossover; in one worker for a passphrase (its KDF would
      // hold this thread for long) and for a larger input that must be one stream (armor, or
      // `parallel: false`), moved there as a copy.
      const name = sealing ? (pass ? 'encryptWithPassphrase' : 'encryptByPublicKey') : (pass ? 'decryptWithPassphrase' : 'decryptByPrivateKey')
      const secret = sealing ? (pass ? rest.passphrase : rest.publicKey) : (pass ? rest.passphrase : rest.privateKey)
      const { passphrase, publicKey, privateKey, ...opts } = rest
      if (!pass && input.length < min) return hs[name](input, secret, opts)
      const copy = input.slice()
      return this.#post({ op: 'run', name, args: [copy, secret, opts] }, undefined, undefined, [copy.buffer])
    }
    // The header and payload key: here for keys (an X25519 or ML-KEM operation, well under a
    // millisecond), in a worker for a passphrase (its KDF).
    const begun = pass
      ? await this.#post({ op: sealing ? 'beginSealBytes' : 'beginOpenBytes', data: sealing ? input.length : input.slice(0, HEADER_MAX), options: { ...rest, total: input.length, workers: this.size } })
      : (sealing ? beginSeal : beginOpen)(input, rest, this.size)
    const { key, plan, partSize } = begun
    // Every sealed part passes through here: its claim is settled before the part is kept, so
    // one part index never seals two plaintexts under this key (the library's claims).
    const claims = sealing ? new hs.PartClaims(key, partSize) : null
    try {
      return sharedMemory()
        ? await this.#bytesShared(sealing, input, begun, claims)
        : await this.#bytesMoved(sealing, input, begun, claims)
    } finally {
      claims?.free()
    }
  }

  // Where the page is cross-origin isolated: the input (unless it already is shared memory) is
  // copied into a SharedArrayBuffer the pool reuses, one part at a time just before the part is
  // handed out (so the first worker starts after one part's copy, not the whole input's, and
  // the rest of the copy overlaps the workers), and the result is a fresh SharedArrayBuffer the
  // workers write into. The page copies nothing else and never touches the result's pages
  // (their first-touch faults are the workers').
  async #bytesShared (sealing, input, { key, plan, partSize, head, plaintextLength }, claims) {
    const shared = input.buffer instanceof SharedArrayBuffer
    const src = shared ? input : this.#sharedInput(input.length)
    try {
      const out = new Uint8Array(new SharedArrayBuffer(sealing ? plan.at(-1)[4] : plaintextLength))
      if (sealing) out.set(head)
      let next = 0
      const lane = async () => {
        while (next < plan.length) {
          const [first, p0, p1, f0, f1] = plan[next++]
          const [a, b, c, d] = sealing ? [p0, p1, f0, f1] : [f0, f1, p0, p1]
          if (!shared) src.set(input.subarray(a, b), a)
          // Views of shared memory cross threads without a copy.
          const r = await this.#post({ op: sealing ? 'sealShared' : 'openShared', data: src.subarray(a, b), into: out.subarray(c, d), options: { key, first, partSize } })
          if (sealing) claims.settle(first, r.claim)
        }
      }
      await Promise.all(Array.from({ length: Math.min(2 * this.size, plan.length) }, lane))
      return out
    } finally {
      if (!shared) this.sharedIn = src.buffer
    }
  }

  /** A view of `length` bytes of the pool's reusable SharedArrayBuffer (taken while a call uses it). */
  #sharedInput (length) {
    let buf = this.sharedIn
    this.sharedIn = null
    if (!buf || buf.byteLength < length || buf.byteLength > 2 * length + (1 << 20)) buf = new SharedArrayBuffer(length)
    return new Uint8Array(buf, 0, length)
  }

  // Elsewhere: each part is copied into an ArrayBuffer the pool reuses and moved (transferred)
  // to the worker, which moves it back with the result in it; no structured-clone copies.
  async #bytesMoved (sealing, input, begun, claims) {
    const { key, plan, partSize } = begun
    let out
    let next = 0
    const lane = async () => {
      while (next < plan.length) {
        const [first, p0, p1, f0, f1] = plan[next++]
        const [a, b] = sealing ? [p0, p1] : [f0, f1]
        // A reused buffer: a fresh 8 MB array costs several times its copy (the pages are
        // zeroed and faulted in). Posting a subarray of the input would structured-clone its
        // whole underlying buffer.
        const buf = this.#scratch(Math.max(b - a, f1 - f0))
        new Uint8Array(buf, 0, b - a).set(input.subarray(a, b))
        const r = await this.#post({ op: sealing ? 'sealBytes' : 'openBytes', data: buf, length: b - a, options: { key, first, partSize } }, undefined, undefined, [buf])
        if (sealing) claims.settle(first, r.claim)
        out.set(new Uint8Array(r.buffer, 0, r.length), sealing ? f0 : p0)
        this.#unscratch(r.buffer)
      }
    }
    // Two parts in flight per worker: one sealing, the next already there when it finishes.
    const lanes = Array.from({ length: Math.min(2 * this.size, plan.length) }, lane)
    // Allocated while the workers run (each lane has posted its first part by now). Plan
    // offsets are absolute in the file (header included): the last part ends the file.
    out = new Uint8Array(sealing ? plan.at(-1)[4] : begun.plaintextLength)
    if (sealing) out.set(begun.head)
    await Promise.all(lanes)
    return out
  }

  async #file (op, blob, options = {}, sink = null) {
    if (!(blob instanceof Blob)) throw argError(`${op}: the input must be a Blob or a File`)
    if (sink !== null && typeof sink?.write !== 'function') throw argError(`${op}To: the sink must have a write method (a FileSystemWritableFileStream)`)
    const sealing = op === 'encryptFile'
    const given = options
    options = await answered(sealing, options, async (n) => new Uint8Array(await blob.slice(0, n).arrayBuffer()), blob.size)
    try {
      return await this.#fileWith(op, blob, options, sink)
    } finally {
      if (options !== given) forget(sealing ? options.publicKey : options.privateKey)
    }
  }

  async #fileWith (op, blob, options, sink) {
    const { onProgress, parallel, ...rest } = options
    // Armor is a text encoding of the whole file: one worker streams it (the library's armored
    // writer and push decoder); parts work on binary files only. Even one worker gains from
    // parts: they are what lets AES-256-GCM run on WebCrypto.
    const sealing = op === 'encryptFile'
    const armored = sealing ? rest.armor === true : await startsArmored(blob)
    const fits = !sealing || blob.size <= SEAL_PARTS_MAX
    if (!armored && fits && parallel !== false && (parallel === true || blob.size >= PARALLEL_MIN)) {
      return this.#parts(sealing, blob, rest, onProgress, sink)
    }
    // Into a sink, armor (and a file too large for parts) streams on this thread: one worker's
    // stream would return one Blob.
    if (sink && (armored || !fits)) return streamTo(sealing, blob, sink, rest, onProgress)
    const out = await this.#post({ op, blob, options: rest }, onProgress)
    if (sink) await sink.write(out)
    return sink ? undefined : out
  }

  // One Blob across every worker. The page reads the Blob once, as one BYOB stream into buffers
  // it reuses, and moves each part to a worker, which seals (opens) it in place and moves the
  // buffer back: Chromium's cost is per read and per fresh page (16 MB read this way: 12–14 ms
  // of CPU in all; as the workers' own 4 MB slices 40–46 ms; bindings/wasm/README.md). Two parts
  // per worker are in flight. Without a sink the workers make the parts' Blobs, joined here in
  // plan order without copying; with a `sink` the bytes are written in plan order (no Blob) and
  // the buffer reused once written (parts of SINK_PART_BYTES: fewer, larger writes), and no part
  // starts while one per worker and one more await the writer, so memory stays at a few parts
  // whatever the file size. Any failure rejects the whole call;
  // nothing is returned and no further part starts.
  async #parts (sealing, blob, options, onProgress, sink = null) {
    const partSize = sink ? SINK_PART_BYTES : PART_BYTES
    // The header and key: here for keys (the first part is read at once, not after a round
    // trip), in a worker for a passphrase (its KDF) and to open (its header read there).
    const begun = sealing && typeof options.passphrase !== 'string'
      ? beginSealFile(blob.size, options, partSize)
      : await this.#post({ op: sealing ? 'beginSeal' : 'beginOpen', blob, options: { ...options, partSize } })
    const { key, plan } = begun
    // As in `#bytes`: each sealed part's claim is settled here before the part is kept.
    const claims = sealing ? new hs.PartClaims(key, partSize) : null
    let reading = Promise.resolve()
    const out = new Array(plan.length)
    let next = 0
    let done = 0
    let failed = false
    // With a sink: parts handed to the writes (one promise chain in order), parts written, lanes waiting.
    let flushed = 0
    let writing = sink ? (sealing ? sink.write(begun.head) : Promise.resolve()) : null
    let written = 0
    let waiting = []
    const wake = () => { for (const w of waiting) w(); waiting = [] }
    const flush = () => {
      while (out[flushed] !== undefined) {
        const part = out[flushed]
        out[flushed++] = null
        writing = writing.then(() => sink.write(part)).then(() => {
          // Opened bytes are wiped before their buffer is reused.
          if (!sealing) part.fill(0)
          this.#unscratch(part.buffer)
          written++
          wake()
        }, (e) => { failed = true; wake(); throw e })
      }
    }
    const lanes = Math.min(2 * this.size, plan.length)
    // With a sink, the parts read and not yet written: the writer takes one at a time, so one
    // part per worker and one more keep it busy.
    const unwritten = this.size + 1
    const lane = async () => {
      while (next < plan.length && !failed) {
        if (sink && next - written >= unwritten) {
          await new Promise((resolve) => waiting.push(resolve))
          continue
        }
        const i = next++
        const [first, p0, p1, f0, f1] = plan[i]
        const [n, m] = sealing ? [p1 - p0, f1 - f0] : [f1 - f0, p1 - p0]
        // Reads chained in part order (this lane took its place with `next++`); one failed fails the rest.
        const buf = this.#scratch(Math.max(n, m))
        const read = reading.then(() => reader.read(buf, n))
        reading = read
        const filled = await read
        const r = await this.#post({ op: sealing ? 'sealBytes' : 'openBytes', data: filled, length: n, options: { key, first, partSize, blob: sink === null } }, undefined, undefined, [filled])
        if (sealing) claims.settle(first, r.claim)
        if (sink) {
          out[i] = new Uint8Array(r.buffer, 0, r.length)
          flush()
        } else {
          out[i] = r.blob
          this.#unscratch(r.buffer)
        }
        done += n
        onProgress?.(done)
      }
    }
    // Opening: the payload starts after the header. Made just before the `try` that cancels it.
    const reader = partReader(sealing ? blob : blob.slice(plan[0][3]))
    try {
      await Promise.all(Array.from({ length: lanes }, () => lane().catch((e) => { failed = true; wake(); throw e })))
      if (sink) await writing
    } finally {
      claims?.free()
      reader.cancel().catch(() => {})
      // A failed write is this call's failure (above); the chain is not left to reject unseen.
      writing?.catch(() => {})
    }
    if (sink) return undefined
    return new Blob(sealing ? [begun.head, ...out] : out, { type: 'application/octet-stream' })
  }

  /** A reusable ArrayBuffer of at least `n` bytes (see `#bytes`). */
  #scratch (n) {
    const i = this.spare.findIndex((b) => b.byteLength >= n)
    return i >= 0 ? this.spare.splice(i, 1)[0] : new ArrayBuffer(n)
  }

  /** Keeps `buf` for the next part: at most three per worker (the parts a file has in flight). */
  #unscratch (buf) {
    if (this.spare.length < 3 * this.size) this.spare.push(buf)
  }

  #spawn () {
    const worker = new Worker(this.url, { type: 'module' })
    const entry = { worker, busy: 0, shared: 0 }
    worker.onmessage = ({ data }) => this.#receive(entry, data)
    worker.onerror = (e) => {
      // A worker that fails to load (bad URL, no WebAssembly) or throws outside a call fails
      // its calls, and is replaced by the next call.
      e.preventDefault()
      this.#drop(entry, `worker failed: ${e.message}`)
    }
    this.workers.push(entry)
    return entry
  }

  /** Stops `entry`'s worker, fails its calls with `why`, and forgets it (the next call spawns). */
  #drop (entry, why) {
    entry.worker.terminate()
    this.workers = this.workers.filter((w) => w !== entry)
    for (const [id, c] of this.calls) {
      if (c.entry === entry) { this.calls.delete(id); clearTimeout(c.timer); c.reject(ioError(why)) }
    }
  }

  /** Replaces an idle worker that holds too much shared memory (see `SHARED_RECYCLE`). */
  #renew (entry) {
    entry.worker.terminate()
    this.workers = this.workers.filter((w) => w !== entry)
    this.#spawn()
  }

  #pick () {
    if (this.workers.length < this.size) return this.#spawn()
    return this.workers.reduce((a, b) => (b.busy < a.busy ? b : a))
  }

  #post (message, onProgress, entry = this.#pick(), transfer = []) {
    const id = this.next++
    return new Promise((resolve, reject) => {
      const call = { resolve, reject, onProgress, entry }
      call.arm = () => {
        clearTimeout(call.timer)
        call.timer = setTimeout(() => this.#drop(entry, `a worker did not answer within ${this.timeoutMs} ms; it was stopped`), this.timeoutMs)
      }
      this.calls.set(id, call)
      call.arm()
      entry.busy++
      if (message.op === 'sealShared' || message.op === 'openShared') entry.shared += message.into.byteLength
      entry.worker.postMessage({ id, ...message }, transfer)
    })
  }

  #receive (entry, { id, progress, ok, error }) {
    const call = this.calls.get(id)
    if (!call) return
    call.arm()
    if (progress !== undefined) { call.onProgress?.(progress); return }
    this.calls.delete(id)
    clearTimeout(call.timer)
    entry.busy--
    if (entry.busy === 0 && entry.shared >= SHARED_RECYCLE) this.#renew(entry)
    if (error) call.reject(Object.assign(new Error(error.message), { code: error.code }))
    else call.resolve(ok)
  }
}

/**
 * Whether workers can share memory with this page: only where it is cross-origin isolated (served
 * with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy:
 * require-corp`), which is what makes `SharedArrayBuffer` available.
 */
export const sharedMemory = () => globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'

/**
 * The call's options with its passkeys answered, here on the page's thread (WebAuthn is not
 * available in workers): recipients for a fresh nonce, identities for the stanza each opens in
 * the file (read by `read(n)`, its first `n` bytes). The answers are plain data, handed to the
 * workers like key strings.
 */
async function answered (sealing, options, read, size) {
  const field = sealing ? 'publicKey' : 'privateKey'
  if (options == null || !hasPasskey(options[field])) return options
  const keys = sealing ? await answerRecipients(options[field]) : await answerIdentitiesFor(options[field], read, size)
  return { ...options, [field]: keys }
}

/** The header and salt always fit in this many bytes from the start of a file. */
const HEADER_MAX = (1 << 20) + 64

function bytesOf (data, op) {
  if (typeof data === 'string') return new TextEncoder().encode(data)
  if (data instanceof Uint8Array) return data
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  throw argError(`${op}: the input must be a Uint8Array, an ArrayBuffer or a string`)
}

/** Begins sealing `input` on this thread: the file's head, the part key as bytes, its plan. */
function beginSeal (input, { publicKey, ...options }, workers) {
  return sealBegun(hs.PartKey.sealNew(publicKey, input.length, options), input.length, workers)
}

/**
 * Begins sealing a Blob of `size` bytes on this thread, as a worker's `beginSeal` does: hyperseal
 * files in parts are AES-256-GCM where WebCrypto can run it (js/worker.js).
 */
function beginSealFile (size, { publicKey, passphrase, ...options }, partSize) {
  if (globalThis.crypto?.subtle && options.format !== 'age' && options.suite === undefined) options.suite = 'aes-256-gcm'
  const key = hs.PartKey.sealNew(publicKey, size, options)
  try {
    return { head: key.head(), key: key.toBytes(), plan: key.plan(partSize) }
  } finally {
    key.free()
  }
}

/** Opens `input`'s header on this thread: the part key as bytes, its plan, the plaintext size. */
function beginOpen (input, { privateKey, allowPlugins }, workers) {
  const key = hs.PartKey.openFile(input.subarray(0, HEADER_MAX), input.length, privateKey, { allowPlugins })
  return openBegun(key, workers)
}
