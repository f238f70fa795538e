// Flat memory: 1 GiB of plaintext streamed through encryptStream and then decryptStream in
// Chromium (the file is never held whole) leaves the WebAssembly memory where a few chunks put
// it, and only authenticated bytes come out in order.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startBrowser } from './harness.mjs'

let h

before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

test('1 GiB through encryptStream → decryptStream: WebAssembly memory stays flat', async () => {
  const r = await h.inPage(async (hs) => {
    const memory = (await hs.default()).memory // init() returns the instance's exports once loaded
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const total = 1 << 30
    const piece = 1 << 20
    // Piece i is filled with (i * 7 + j) & 0xff, so order and content can be checked as they come.
    const source = new ReadableStream({
      pull (c) {
        if (this.i === undefined) this.i = 0
        if (this.i * piece >= total) { c.close(); return }
        const p = new Uint8Array(piece)
        for (let j = 0; j < piece; j += 4096) p[j] = (this.i * 7 + j) & 0xff
        this.i++
        c.enqueue(p)
      },
    }, { highWaterMark: 2 })
    // Warm up: the first chunks size the module's buffers; memory is read after them.
    const warm = hs.decryptStream(hs.encryptStream(new Blob([new Uint8Array(4 << 20)]).stream(), { publicKey }), { privateKey })
    for await (const _ of warm) void _
    const before = memory.buffer.byteLength
    let n = 0
    let bad = 0
    let peak = before
    for await (const chunk of hs.decryptStream(hs.encryptStream(source, { publicKey }), { privateKey })) {
      for (let k = 0; k < chunk.length; k++) {
        const pos = n + k
        if (pos % 4096 === 0 && chunk[k] !== ((Math.floor(pos / piece) * 7 + (pos % piece)) & 0xff)) bad++
      }
      n += chunk.length
      peak = Math.max(peak, memory.buffer.byteLength)
    }
    return { n, bad, before, peak }
  })
  console.log(`# WebAssembly memory: ${r.before} bytes after warm-up, ${r.peak} at most while 1 GiB went through`)
  assert.equal(r.n, 1 << 30)
  assert.equal(r.bad, 0)
  // Growth bounded by a few pieces in flight, not by the 1 GiB that went through.
  assert.ok(r.peak - r.before <= 16 << 20, `WebAssembly memory grew from ${r.before} to ${r.peak} bytes`)
})
