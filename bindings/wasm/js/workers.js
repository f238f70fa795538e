// WorkerPool: hyperseal off the main thread, on every core. Each worker (js/worker.js) holds its
// own WebAssembly instance; calls go to the least busy one. One file is sealed by one worker
// (the library's sealer is sequential); several files, or a file and a KDF, run side by side.
//
//   import { WorkerPool } from 'hyperseal'
//   const pool = new WorkerPool()                       // navigator.hardwareConcurrency workers
//   const sealed = await pool.encryptFile(file, { publicKey, onProgress: (n) => bar.value = n })
//   const plain = await pool.decryptFile(sealed, { privateKey })          // Blobs in, Blobs out
//   const key = await pool.run('kdfArgon2id', 'pw', salt)                // any export, by name
//   pool.terminate()
//
// Rejections are Errors with the same `code`s as the direct calls.

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

  /** Encrypts a Blob/File: `{ publicKey | passphrase, format, onProgress(bytesRead) }` → Blob. */
  encryptFile (blob, options) { return this.#file('encryptFile', blob, options) }

  /** Decrypts a Blob/File: `{ privateKey | passphrase, onProgress(bytesRead) }` → Blob. */
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

  #file (op, blob, options = {}) {
    if (!(blob instanceof Blob)) return Promise.reject(Object.assign(new TypeError(`${op}: the input must be a Blob or a File`), { code: 'ERR_HYPERSEAL_ARGUMENT' }))
    const { onProgress, ...rest } = options
    return this.#post({ op, blob, options: rest }, onProgress)
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
