'use strict'
// The async API keeps the event loop free, scales to many concurrent calls, and the streams
// keep memory flat.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const { pipeline } = require('node:stream/promises')
const { Readable, Writable } = require('node:stream')
const { hs } = require('./helpers')

const MB = 1 << 20

test('decrypting 200 MB asynchronously does not block the event loop (p99 < 20 ms)', { skip: hs.backend === 'wasm' && 'the WebAssembly fallback computes on the main thread (README.md)' }, async () => {
  const key = hs.generateKeyPair()
  const data = Buffer.alloc(200 * MB, 7)
  const sealed = await hs.encryptByPublicKeyAsync(data, key.publicKey)
  const h = monitorEventLoopDelay({ resolution: 1 })
  // Keep the loop busy with timers so delays are sampled throughout.
  const ticker = setInterval(() => {}, 1)
  h.enable()
  const t0 = performance.now()
  const plain = await hs.decryptByPrivateKeyAsync(sealed, key.privateKey)
  const ms = performance.now() - t0
  h.disable()
  clearInterval(ticker)
  assert.equal(plain.length, data.length)
  assert.ok(plain.equals(data))
  // A loop blocked throughout takes no samples at all, and its p99 would read 0.
  assert.ok(h.count >= 10, `${h.count} event-loop samples`)
  const p99 = h.percentile(99) / 1e6
  console.log(`# 200 MB async decrypt: ${ms.toFixed(0)} ms, event-loop delay p99 ${p99.toFixed(2)} ms, max ${(h.max / 1e6).toFixed(2)} ms`)
  assert.ok(p99 < 20, `p99 ${p99} ms`)
})

test('1000 concurrent async calls all succeed', async () => {
  const key = hs.generateKeyPair()
  const x = hs.generateKeyPair({ kind: 'x25519' })
  const inputs = Array.from({ length: 1000 }, (_, i) => crypto.randomBytes(i * 37))
  const keys = inputs.map((_, i) => (i % 2 ? key : x))
  const sealed = await Promise.all(inputs.map((d, i) => hs.encryptByPublicKeyAsync(d, keys[i].publicKey)))
  const opened = await Promise.all(sealed.map((c, i) => hs.decryptByPrivateKeyAsync(c, keys[i].privateKey)))
  opened.forEach((p, i) => assert.ok(p.equals(inputs[i]), `call ${i}`))
})

test('streams hold memory flat: 512 MiB through encrypt → decrypt, RSS growth < 100 MB', async () => {
  const key = hs.generateKeyPair()
  const total = 512 * MB
  const piece = Buffer.alloc(256 << 10)
  for (let i = 0; i < piece.length; i += 4) piece.writeUInt32LE(i * 2654435761 >>> 0, i)
  let produced = 0
  const src = new Readable({
    read () {
      if (produced >= total) return this.push(null)
      produced += piece.length
      this.push(Buffer.from(piece)) // a fresh buffer each time, as a real source would give
    },
  })
  let seen = 0
  let mismatch = false
  const sink = new Writable({
    write (chunk, enc, cb) {
      // Plaintext must come back in order: compare with the generator.
      for (let off = 0; off < chunk.length;) {
        const at = (seen + off) % piece.length
        const n = Math.min(piece.length - at, chunk.length - off)
        if (!mismatch && Buffer.compare(chunk.subarray(off, off + n), piece.subarray(at, at + n)) !== 0) mismatch = true
        off += n
      }
      seen += chunk.length
      cb()
    },
  })
  global.gc?.()
  const base = process.memoryUsage().rss
  let peak = base
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 5)
  const t0 = performance.now()
  await pipeline(src, hs.createEncryptStream({ publicKey: key.publicKey }), hs.createDecryptStream({ privateKey: key.privateKey }), sink)
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().rss)
  const growth = (peak - base) / MB
  const s = (performance.now() - t0) / 1000
  console.log(`# 512 MiB encrypt→decrypt stream: ${s.toFixed(1)} s (${(512 / s).toFixed(0)} MiB/s), RSS growth ${growth.toFixed(1)} MB`)
  assert.equal(seen, total)
  assert.ok(!mismatch, 'plaintext differs')
  assert.ok(growth < 100, `RSS grew ${growth} MB`)
})
