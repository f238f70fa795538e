// WorkerPool.encrypt/decrypt on both of its memory paths in Chromium: shared memory where the
// page is cross-origin isolated (the test server sends COOP/COEP), transferable ArrayBuffers
// where it is not. On each, parts across two workers give what one stream gives: files the
// one-stream API opens to the same bytes, and plaintext byte-identical to one stream's.

import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { execSync } from 'node:child_process'
import { startBrowser, cliKey, b64, PAGE_B64 } from './harness.mjs'

const MIB = 1 << 20
const browsers = []
after(async () => { for (const h of browsers) await h.close() })

for (const isolated of [true, false]) {
  test(`pool parts ${isolated ? 'in shared memory (isolated page)' : 'as transferables (no COOP/COEP)'} match one stream`, async () => {
    const h = await startBrowser({ isolated })
    browsers.push(h)
    const { key, pub } = cliKey(h.work)
    const sizes = [4 * MIB + 3, 9 * MIB, 16 * MIB + 12345]
    const r = await h.inPage(async (hs, { pt, sizes, pub, privateKey, B64 }) => {
      const { bytes } = new Function(`${B64}; return { bytes }`)()
      const seed = bytes(pt)
      const pool = new hs.WorkerPool({ size: 2 })
      const out = []
      for (const n of sizes) {
        const data = new Uint8Array(n)
        for (let i = 0; i < n; i += seed.length) data.set(seed.subarray(0, Math.min(seed.length, n - i)), i)
        const isShared = (u8) => typeof SharedArrayBuffer === 'function' && u8.buffer instanceof SharedArrayBuffer
        const same = (x, y) => x.length === y.length && x.every((b, j) => b === y[j])
        const sealed = await pool.encrypt(data, { publicKey: pub, parallel: true })
        const viaOne = hs.decryptByPrivateKey(sealed, privateKey)
        const one = hs.encryptByPublicKey(data, pub)
        const opened = await pool.decrypt(one, { privateKey, parallel: true })
        const oneOpened = hs.decryptByPrivateKey(one, privateKey)
        out.push({
          n,
          shared: isShared(sealed),
          openedShared: isShared(opened),
          sealedOpens: same(viaOne, data),
          sameLength: sealed.length === one.length,
          openedSame: same(opened, oneOpened) && same(opened, data),
        })
      }
      pool.terminate()
      return { isolated: globalThis.crossOriginIsolated === true, out }
    }, { pt: b64(randomBytes(MIB + 7)), sizes, pub, privateKey: readFileSync(key, 'utf8'), B64: PAGE_B64 })
    assert.equal(r.isolated, isolated, 'the page is isolated exactly when the server sends COOP/COEP')
    for (const o of r.out) {
      assert.equal(o.shared, isolated, `${o.n}: a shared result only on an isolated page`)
      assert.equal(o.openedShared, isolated, `${o.n}: decrypt's result likewise`)
      assert.ok(o.sealedOpens, `${o.n}: the pool's file opens with the one-stream API to the input`)
      assert.ok(o.sameLength, `${o.n}: the pool's file is as long as one stream's`)
      assert.ok(o.openedSame, `${o.n}: the pool's plaintext is byte-identical to one stream's`)
    }
  })
}

// Workers keep every SharedArrayBuffer they were handed until their own garbage collector runs,
// which a worker that only seals rarely does: without renewal, 76 calls of 16 MB in a row left
// the renderer holding 3.4 GB. The bound below sits between the two workers' budget (2 × 256
// MiB) and what 80 calls would leave without renewal (1.3 GB). The pool replaces a worker once it has written SHARED_RECYCLE
// bytes of results, so memory stays bounded however many calls a page makes.
test('pool calls on shared memory leave the renderer\'s memory bounded', async () => {
  const h = await startBrowser({ isolated: true })
  browsers.push(h)
  const { pub } = cliKey(h.work)
  const rss = () => Math.max(...execSync('ps -C chromium -o rss=').toString().trim().split('\n').map(Number)) * 1024
  const before = rss()
  const r = await h.inPage(async (hs, { pub }) => {
    const data = new Uint8Array(16 << 20)
    const pool = new hs.WorkerPool({ size: 2 })
    let shared = 0
    for (let i = 0; i < 80; i++) {
      const sealed = await pool.encrypt(data, { publicKey: pub, parallel: true })
      shared += sealed.length
    }
    // The page's own garbage (every result) is collected here; what a worker holds is not.
    globalThis.gc()
    await new Promise((resolve) => setTimeout(resolve, 500))
    return { isolated: globalThis.crossOriginIsolated === true, shared }
  }, { pub })
  const grown = rss() - before
  assert.equal(r.isolated, true)
  assert.ok(r.shared > 1200 * MIB, 'the calls handed out more shared results than the bound below')
  assert.ok(grown < 800 * MIB, `the renderer grew by ${Math.round(grown / MIB)} MiB over 80 calls of 16 MiB`)
})
