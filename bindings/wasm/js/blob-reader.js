// How WorkerPool (js/workers.js) reads a Blob it seals or opens in parts: once, in order, on the
// page, straight into the buffers it moves to the workers. Chromium charges a Blob read per read
// and per fresh page (bindings/wasm/README.md, "Files"), so one BYOB stream into reused buffers
// costs a fraction of a read per part or a default stream's fresh chunk per read.

// The streams being read, held from a root. Chromium (156) collects a Blob's byte stream whose
// only holder is the function awaiting its read (an async frame is reachable only from the
// promise it awaits), and that read then never settles: a call that never ends, with no error.
// gc() during a read shows it (test/pool-sink.test.mjs); a stream held here is read to its end.
const reading = new Set()

/**
 * `blob` read in order: `read(buf, n)` gives the next `n` bytes in the ArrayBuffer `buf`, or in
 * the one that took its place (a BYOB reader moves it). Where a Blob's stream is not a byte
 * stream, its chunks are copied in.
 */
export function partReader (blob) {
  const stream = blob.stream()
  let byob = null
  try {
    byob = stream.getReader({ mode: 'byob' })
  } catch {
    // Not a byte stream in this browser: the default reader, copied from.
  }
  const reader = byob ?? stream.getReader()
  reading.add(stream)
  const ended = () => Object.assign(new Error('the file ended before its planned size: it changed while it was read'), { code: 'ERR_HYPERSEAL_IO' })
  let chunk = new Uint8Array(0)
  return {
    async read (buf, n) {
      for (let filled = 0; filled < n;) {
        if (byob) {
          const { done, value } = await byob.read(new Uint8Array(buf, filled, n - filled))
          if (done) throw ended()
          buf = value.buffer
          filled += value.length
          continue
        }
        if (chunk.length === 0) {
          const { done, value } = await reader.read()
          if (done) throw ended()
          chunk = value
        }
        const take = Math.min(n - filled, chunk.length)
        new Uint8Array(buf, filled, take).set(chunk.subarray(0, take))
        chunk = chunk.subarray(take)
        filled += take
      }
      return buf
    },
    /** Ends the read (the caller's `finally`, whatever happened) and lets the stream go. */
    cancel: () => {
      reading.delete(stream)
      return reader.cancel()
    },
  }
}
