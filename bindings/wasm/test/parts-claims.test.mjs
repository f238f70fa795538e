// Claims of parts sealed in workers (src/parts.rs over the library's parts::claim): every seal
// returns its claim record, and the page's PartClaims (the library's in-memory store) keeps the
// first claim of each part index, so one key and nonce never seal two plaintexts. The same
// bytes again pass; other bytes are refused. Runs the WebAssembly build in Node: these are the
// calls WorkerPool (js/workers.js, js/worker.js) makes on the page and in its workers.

import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import init, { PartKey, PartClaims, generateKeyPair, decryptByPrivateKey } from '../pkg/hyperseal.js'

const KIB = 1 << 10
let pair

before(async () => {
  await init({ module_or_path: await readFile(new URL('../pkg/hyperseal_bg.wasm', import.meta.url)) })
  pair = generateKeyPair({ kind: 'x25519' })
})

for (const suite of ['chacha20-poly1305', 'aes-256-gcm']) {
  test(`${suite}: a part index seals one plaintext; the same bytes again pass`, () => {
    const plain = randomBytes(3 * 64 * KIB + 5)
    const begun = PartKey.sealNew(pair.publicKey, plain.length, { suite })
    const size = 128 * KIB
    const plan = begun.plan(size)
    const claims = new PartClaims(begun.toBytes(), size)
    // A worker's key: from bytes, as WorkerPool sends it.
    const worker = PartKey.fromBytes(begun.toBytes())
    const parts = plan.map(([first, p0, p1]) => {
      const [sealed, claim] = worker.seal(size, first, plain.subarray(p0, p1))
      assert.equal(claim.length, 32)
      // The WebCrypto path computes the same record from the bytes it sealed.
      assert.deepEqual(worker.partClaim(size, first, sealed), claim)
      claims.settle(first, claim)
      claims.settle(first, claim) // a retry with the same bytes
      return sealed
    })
    const file = new Uint8Array([...begun.head(), ...parts.flatMap((p) => [...p])])
    assert.deepEqual(Buffer.from(decryptByPrivateKey(file, pair.privateKey)), plain)

    // Other bytes for a part already kept: refused with the library's error.
    const [first, p0, p1] = plan[1]
    const changed = Buffer.from(plain.subarray(p0, p1))
    changed[7] ^= 1
    const out = new Uint8Array(p1 - p0 + 1024)
    const [n, other] = worker.sealInto(size, first, changed, out)
    assert.equal(n, parts[1].length)
    assert.throws(() => claims.settle(first, other), (e) => e.code === 'ERR_HYPERSEAL_ARGUMENT' && /reuse a nonce/.test(e.message))
    // A part that is not one of the plan, a claim of another length: refused too.
    assert.throws(() => claims.settle(1, other), /no part of a plan/)
    assert.throws(() => claims.settle(first, other.subarray(1)), /32 bytes/)
    claims.free(); worker.free(); begun.free()
  })
}

test('PartClaims holds one plan: parts of another plan and part sizes the key cannot plan are refused', () => {
  const plain = randomBytes(4 * 64 * KIB)
  const begun = PartKey.sealNew(pair.publicKey, plain.length, {})
  const claims = new PartClaims(begun.toBytes(), 128 * KIB)
  const [, claim] = begun.seal(128 * KIB, 0, plain.subarray(0, 128 * KIB))
  claims.settle(0, claim)
  // Chunk 1 starts a part of a 64 KiB plan, whose bytes overlap part 0 of this one.
  const [, c1] = begun.seal(64 * KIB, 1, plain.subarray(64 * KIB, 128 * KIB))
  assert.throws(() => claims.settle(1, c1), /no part of a plan/)
  assert.throws(() => begun.seal(64 * KIB, 1, plain.subarray(0, 128 * KIB)), /not the part|does not fit/)
  assert.throws(() => new PartClaims(begun.toBytes(), 1000), /multiple of the chunk size/)
  claims.free(); begun.free()
})
