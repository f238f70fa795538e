// WorkerPool: hyperseal off the main thread, on every core. Each worker (js/worker.js) holds its
// own WebAssembly instance; calls go to the least busy one. A large file is sealed (or opened)
// by all the workers together: one begins it (header and payload key, the library's PartKey),
// each seals the parts it is handed, and the parts are joined in order into one ordinary file —
// the same file the CLI opens. Smaller files, and armored ones, stream through one worker's
// Sealer/Opener.
//
//   import { WorkerPool } from 'hyperseal'
//   const pool = new WorkerPool()                       // navigator.hardwareConcurrency workers
//   const sealed = await pool.encryptFile(file, { publicKey, onProgress: (n) => bar.value = n })
//   const plain = await pool.decryptFile(sealed, { privateKey })          // Blobs in, Blobs out
//   const key = await pool.run('kdfArgon2id', 'pw', salt)                // any export, by name
//   pool.terminate()
//
// Rejections are Errors with the same `code`s as the direct calls.

import { startsArmor } from '../pkg/hyperseal.js'

/**
 * Files from this size on go through every worker in parts (AES-256-GCM parts on WebCrypto);
 * below it one worker streams the file. Measured (`npm run bench:browser`, group "file, all
 * cores", Chromium 156, 2 cores): at 1 MB one streaming worker was 7% faster, at 16 MB the
 * parts 9% faster; both are bound by Chromium's Blob reads and writes, not by the cipher.
 */
export const PARALLEL_MIN = 4 << 20

async function startsArmored (blob) {
  const first = new Uint8Array(await blob.slice(0, 1).arrayBuffer())
  return first.length === 1 && startsArmor(first[0])
}

/** Plaintext per part: a few per worker even for mid-sized files, little memory in flight. */
const PART_BYTES = 4 << 20

export class WorkerPool {
  /**
   * `size`: workers (default: the number of cores); `url`: the worker script (default:
   * worker.js beside this file; bundlers that know `new URL(…, import.meta.url)` emit it).
   */
  constructor ({ size, url } = {}) {
    const cores = (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 2
    this.size = Math.max(1, size ?? cores)
    this.url = url ?? new URL('./worker.js', import.meta.url)
    this.workers = []
    this.calls = new Map()
    this.next = 0
  }

  /**
   * Encrypts a Blob/File: `{ publicKey | passphrase, format, onProgress(bytesRead), parallel }`
   * → Blob. `parallel`: true/false forces all workers or one; by default files of
   * `PARALLEL_MIN` bytes and more use all of them.
   */
  encryptFile (blob, options) { return this.#file('encryptFile', blob, options) }

  /** Decrypts a Blob/File: `{ privateKey | passphrase, onProgress(bytesRead), parallel }` → Blob. */
  decryptFile (blob, options) { return this.#file('decryptFile', blob, options) }

  /** Runs the package's export `name` in a worker (arguments and result are structured-cloned). */
  run (name, ...args) { return this.#post({ op: 'run', name, args }) }

  /** Stops every worker; pending calls reject with ERR_HYPERSEAL_IO. */
  terminate () {
    for (const w of this.workers) w.worker.terminate()
    this.workers = []
    for (const c of this.calls.values()) c.reject(Object.assign(new Error('the worker pool was terminated'), { code: 'ERR_HYPERSEAL_IO' }))
    this.calls.clear()
  }

  async #file (op, blob, options = {}) {
    if (!(blob instanceof Blob)) throw Object.assign(new TypeError(`${op}: the input must be a Blob or a File`), { code: 'ERR_HYPERSEAL_ARGUMENT' })
    const { onProgress, parallel, ...rest } = options
    // Armor is a text encoding of the whole file: one worker streams it (the library's armored
    // writer and push decoder); parts work on binary files only. Even one worker gains from
    // parts: they are what lets AES-256-GCM run on WebCrypto.
    const armored = op === 'encryptFile' ? rest.armor === true : await startsArmored(blob)
    if (!armored && parallel !== false && (parallel === true || blob.size >= PARALLEL_MIN)) {
      return this.#parts(op === 'encryptFile', blob, rest, onProgress)
    }
    return this.#post({ op, blob, options: rest }, onProgress)
  }

  // One file across every worker. At most one part per worker is in flight (memory stays at a
  // few parts whatever the file size); the workers return Blobs, joined here in plan order
  // without copying (a 100 MB copy on the main thread would be a long task). Any failure rejects
  // the whole call and nothing is returned.
  async #parts (sealing, blob, options, onProgress) {
    const begun = await this.#post({ op: sealing ? 'beginSeal' : 'beginOpen', blob, options: { ...options, partSize: PART_BYTES } })
    const { key, plan } = begun
    const out = new Array(plan.length)
    let next = 0
    let done = 0
    const lane = async () => {
      while (next < plan.length) {
        const i = next++
        const [first, p0, p1, f0, f1] = plan[i]
        const slice = sealing ? blob.slice(p0, p1) : blob.slice(f0, f1)
        out[i] = await this.#post({ op: sealing ? 'sealPart' : 'openPart', blob: slice, options: { key, first } })
        done += slice.size
        onProgress?.(done)
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.size, plan.length) }, lane))
    return new Blob(sealing ? [begun.head, ...out] : out, { type: 'application/octet-stream' })
  }

  #pick () {
    if (this.workers.length < this.size) {
      const worker = new Worker(this.url, { type: 'module' })
      const entry = { worker, busy: 0 }
      worker.onmessage = ({ data }) => this.#receive(entry, data)
      worker.onerror = (e) => {
        // A worker that fails to load (bad URL, no WebAssembly) fails its calls, not silently.
        e.preventDefault()
        for (const [id, c] of this.calls) if (c.entry === entry) { this.calls.delete(id); c.reject(Object.assign(new Error(`worker failed: ${e.message}`), { code: 'ERR_HYPERSEAL_IO' })) }
      }
      this.workers.push(entry)
      return entry
    }
    return this.workers.reduce((a, b) => (b.busy < a.busy ? b : a))
  }

  #post (message, onProgress) {
    const entry = this.#pick()
    const id = this.next++
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject, onProgress, entry })
      entry.busy++
      entry.worker.postMessage({ id, ...message })
    })
  }

  #receive (entry, { id, progress, ok, error }) {
    const call = this.calls.get(id)
    if (!call) return
    if (progress !== undefined) { call.onProgress?.(progress); return }
    this.calls.delete(id)
    entry.busy--
    if (error) call.reject(Object.assign(new Error(error.message), { code: error.code }))
    else call.resolve(ok)
  }
}
