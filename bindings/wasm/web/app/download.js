// The way out where a browser cannot write files from a page (no `showSaveFilePicker`): a
// download, streamed through the page's service worker (sw.js). The page sends the bytes over a
// MessageChannel as they are made, one chunk each time the download asks for one, and starts
// the download in a hidden frame; the worker answers it with a ReadableStream of the bytes.
// Nothing is held whole in memory or in a Blob. A failure aborts the stream: the browser then
// marks the download failed and drops what it had written.

/** Whether this page can stream a download (its service worker controls it). */
export const canDownload = () => Boolean(navigator.serviceWorker?.controller)

/**
 * A writable stream that becomes the download `name` (with `write(chunk)` too, as a
 * FileSystemWritableFileStream has): the file is complete only when it closes.
 */
export async function download (name) {
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
