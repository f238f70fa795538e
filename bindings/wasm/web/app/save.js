// The only way out of the page: files written through the File System Access API, as they are
// made, never gathered in memory or in a Blob. One output: `showSaveFilePicker` with the
// suggested name; several, or any under a dropped folder: `showDirectoryPicker`, one file each
// at its path in the chosen folder (`photos/a.jpg.age`, the folders made as needed). (Tests
// replace these two functions with ones that return Origin Private File System handles.)
// Without them (Firefox, Safari) one file at a time goes out as a download, streamed through the
// page's service worker (sw.js): the page sends the bytes over a MessageChannel as they are made,
// one chunk each time the download asks for one, and starts the download in a hidden frame; the
// worker answers it with a ReadableStream of the bytes. A failure aborts the stream, and the
// browser then marks the download failed and drops what it had written.
//
// A write goes to the browser's temporary copy and becomes the file only when the stream
// closes, so an operation that fails (a wrong key, a damaged file, the last chunk not
// authenticating) aborts the write and nothing unauthenticated is ever named as the file. The
// operation is all or nothing: on failure every file it created is removed, including the
// empty file a save dialog creates, so nothing is left behind.

/** Why there is no way out in a browser without the API nor a service worker (one sentence). */
const NO_API = 'This browser cannot write files as they are made, so it cannot save large files: use a recent Chrome, Edge or another Chromium-based browser.'

/**
 * Why several files cannot go out as downloads: a failed run could not take back the downloads
 * made before it, so the page saves one at a time there.
 */
const ONE_AT_A_TIME = 'This browser saves each file as a download, one file at a time: choose one file.'

export class Outputs {
  #dir
  #single
  #created = []

  constructor (dir, single) {
    this.#dir = dir
    this.#single = single
  }

  /**
   * Asks where `names` go (the picker's suggested name for one, a folder for several).
   * A folder that already holds one of the names is refused before anything is written.
   */
  static async choose (names) {
    if (typeof window.showSaveFilePicker !== 'function' || typeof window.showDirectoryPicker !== 'function') {
      if (!canDownload()) throw new Error(NO_API)
      if (names.length !== 1) throw new Error(ONE_AT_A_TIME)
      return new Outputs(null, null)
    }
    if (names.length === 1 && !names[0].includes('/')) {
      const handle = await window.showSaveFilePicker({ suggestedName: names[0], id: 'hyperseal' })
      return new Outputs(null, handle)
    }
    // Two inputs of one name (dropped from two folders) would write one output twice.
    const twice = names.find((name, i) => names.indexOf(name) !== i)
    if (twice !== undefined) throw new Error(`Two of the chosen files would both be saved as ${twice}, so choose them one at a time.`)
    const dir = await window.showDirectoryPicker({ id: 'hyperseal', mode: 'readwrite' })
    for (const name of names) {
      if (await exists(dir, name)) throw new Error(`The chosen folder already has a file named ${name}, so choose another folder.`)
    }
    return new Outputs(dir, null)
  }

  /**
   * A writable stream for output `i` named `name` (a path under the chosen folder, its folders
   * made as needed): the file appears only when it closes.
   */
  async open (i, name) {
    // No picker: a download, which the browser itself drops if it is aborted.
    if (!this.#single && !this.#dir) return download(name.split('/').join('_'))
    let handle = this.#single
    if (handle) {
      // A save dialog has already created the file, empty, unless the person chose to replace
      // one: only an empty one is ours to remove on failure (a replaced file stays as it was,
      // since the aborted write never reaches it).
      const empty = (await handle.getFile()).size === 0
      if (empty) this.#created.push({ handle })
    } else {
      const parts = name.split('/')
      let dir = this.#dir
      for (const [j, part] of parts.slice(0, -1).entries()) {
        if (!await exists(dir, part, 'getDirectoryHandle')) this.#created.push({ parent: dir, name: part, depth: j + 1 })
        dir = await dir.getDirectoryHandle(part, { create: true })
      }
      handle = await dir.getFileHandle(parts.at(-1), { create: true })
      this.#created.push({ parent: dir, name: parts.at(-1) })
    }
    return handle.createWritable({ keepExistingData: false })
  }

  /**
   * Removes every file and folder this operation created (after its writes were aborted):
   * files first, then the folders, the deepest first.
   */
  async discard () {
    const created = this.#created.splice(0)
    const files = created.filter((c) => c.depth === undefined)
    const folders = created.filter((c) => c.depth !== undefined).sort((a, b) => b.depth - a.depth)
    for (const c of [...files, ...folders]) {
      try {
        if (c.handle) await c.handle.remove()
        else await c.parent.removeEntry(c.name)
      } catch {
        // Already gone, or the browser forbids it: there is nothing more the page can do.
      }
    }
  }
}

/** Whether `path` (a name, or a path of names) is there under `dir`; `last` says as what. */
async function exists (dir, path, last = 'getFileHandle') {
  const parts = path.split('/')
  try {
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part)
    await dir[last](parts.at(-1))
    return true
  } catch (e) {
    if (e?.name === 'NotFoundError' || e?.name === 'TypeMismatchError') return false
    throw e
  }
}

/** Writes `text` to a file the person names (the recovery key). */
export async function saveText (suggestedName, text) {
  const out = await Outputs.choose([suggestedName])
  const w = await out.open(0, suggestedName)
  try {
    await w.write(text)
    await w.close()
  } catch (e) {
    await w.abort().catch(() => {})
    await out.discard()
    throw e
  }
}

// ── downloads, where the browser has no save pickers ─────────────────────────────────────

/** Whether this page can stream a download (its service worker controls it). */
const canDownload = () => Boolean(navigator.serviceWorker?.controller)

/**
 * A writable stream that becomes the download `name` (with `write(chunk)` too, as a
 * FileSystemWritableFileStream has): the file is complete only when it closes.
 */
async function download (name) {
  const id = crypto.randomUUID()
  const channel = new MessageChannel()
  const port = channel.port1
  let more = null
  let cancelled = false
  let asked = 0
  const ready = new Promise((resolve) => {
    port.onmessage = ({ data }) => {
      if (data.ready) resolve()
      if (data.more) { asked++; more?.() }
      if (data.cancelled) { cancelled = true; more?.() }
    }
  })
  const worker = navigator.serviceWorker.controller
  worker.postMessage({ download: id, name }, [channel.port2])
  await ready
  // A message keeps the worker alive while a long file is made (browsers stop idle workers).
  const alive = setInterval(() => worker.postMessage({ alive: id }), 10_000)
  const frame = document.createElement('iframe')
  frame.hidden = true
  frame.src = `download/${id}/${encodeURIComponent(name)}`
  document.body.append(frame)
  const done = () => {
    clearInterval(alive)
    setTimeout(() => frame.remove(), 1000)
  }
  const send = async (message, transfer = []) => {
    while (asked === 0 && !cancelled) await new Promise((resolve) => { more = resolve })
    more = null
    if (cancelled) throw new DOMException('The download was cancelled.', 'AbortError')
    asked--
    port.postMessage(message, transfer)
  }
  const stream = new WritableStream({
    async write (chunk) {
      // A copy of its own: the caller may reuse its buffer once the write resolved.
      const bytes = chunk instanceof Blob ? new Uint8Array(await chunk.arrayBuffer()) : new Uint8Array(ArrayBuffer.isView(chunk) ? chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) : chunk.slice(0))
      await send({ chunk: bytes }, [bytes.buffer])
    },
    async close () {
      await send({ end: true })
      done()
    },
    abort (reason) {
      port.postMessage({ abort: String(reason?.message ?? reason ?? 'failed') })
      done()
    },
  })
  stream.write = async (chunk) => {
    const writer = stream.getWriter()
    try {
      await writer.write(chunk)
    } finally {
      writer.releaseLock()
    }
  }
  return stream
}
