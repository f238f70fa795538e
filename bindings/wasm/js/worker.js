// The worker side of WorkerPool (js/workers.js): one WebAssembly instance per worker, so each
// runs on its own core and the page's main thread never waits on cryptography.
//
// Messages in: { id, op: 'encryptFile' | 'decryptFile', blob, options } or { id, op: 'run', name,
// args }. Messages out: { id, progress: bytesRead }, then { id, ok: result } or
// { id, error: { message, code } }. Files are read with Blob.stream() and pushed through the
// library's Sealer/Opener (EncryptSession/DecryptSession), so memory stays flat; the result is
// a Blob (large Blobs may live on disk in Chromium, and cross threads without a copy).

import init, * as hs from './core.js'

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

function decryptSession ({ privateKey, passphrase }) {
  if (typeof passphrase === 'string') return hs.DecryptSession.withPassphrase(passphrase)
  return new hs.DecryptSession(privateKey)
}

// Functions a page may run here by name: everything the package exports that is a function.
const callable = (name) => typeof hs[name] === 'function' && !/^[A-Z]/.test(name) && name !== 'default' && name !== 'initSync'

self.onmessage = async ({ data: { id, op, blob, options, name, args } }) => {
  try {
    await ready
    let ok
    if (op === 'encryptFile') ok = await pump(id, blob, encryptSession(options ?? {}))
    else if (op === 'decryptFile') ok = await pump(id, blob, decryptSession(options ?? {}))
    else if (op === 'run' && callable(name)) ok = await hs[name](...(args ?? []))
    else throw Object.assign(new Error(`worker: unknown operation ${op} ${name ?? ''}`), { code: 'ERR_HYPERSEAL_ARGUMENT' })
    postMessage({ id, ok }, ok instanceof Uint8Array ? [ok.buffer] : [])
  } catch (e) {
    postMessage({ id, error: { message: String(e?.message ?? e), code: e?.code ?? 'ERR_HYPERSEAL_IO' } })
  }
}
