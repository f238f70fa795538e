'use strict'
// Large sync results are Buffers Node allocates, freed by the garbage collector itself: a loop of
// sync calls, which never lets the event loop turn (where external buffers' finalizers run),
// must not hold every result it made. Before, each 64 MiB result stayed until the loop ended.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const hs = require('..')

const MB = 1 << 20

test('a loop of large sync calls keeps memory flat, and results stay whole', () => {
  const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
  const data = Buffer.alloc(64 * MB, 3)
  let sealed = hs.encryptByPublicKey(data, publicKey)
  const base = process.memoryUsage().rss
  for (let i = 0; i < 12; i++) sealed = hs.encryptByPublicKey(data, publicKey)
  const growth = (process.memoryUsage().rss - base) / MB
  console.log(`# RSS growth over 12 sync encrypts of 64 MiB: ${growth.toFixed(0)} MB`)
  assert.ok(growth < 400, `${growth.toFixed(0)} MB (12 results held would be 768 MB)`)
  const back = hs.decryptByPrivateKey(sealed, privateKey)
  assert.equal(back.length, data.length, 'a sync decrypt result is exactly the plaintext (a view of a larger Buffer)')
  assert.ok(back.equals(data))
})
