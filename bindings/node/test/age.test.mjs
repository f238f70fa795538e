// hyperseal/age (typage's API) against the real typage (npm `age-encryption`, a dev
// dependency), in Node: the shared suite (test/age-suite.mjs: files both ways for every key kind
// both read, JavaScript recipients and identities, streams with their sizes, detached headers,
// armor, the errors typage throws synchronously), then what only Node can check, the C2SP CCTV
// age vectors among them. Runs on the addon, and on the WebAssembly fallback in `make test`'s
// second pass.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { inflateSync } from 'node:zlib'
import * as age from 'hyperseal/age'
import * as typage from 'age-encryption'
import { CASES, helpers } from './age-suite.mjs'

const TESTKIT = new URL('../../../crates/hyperseal/tests/data/age-testkit/', import.meta.url)
const { enc, data, read, chunked, headerOf } = helpers()

for (const [name, run] of CASES) test(name, () => run({ age, typage, t: helpers() }))

// What only Node can check: the file key's copies wiped (Uint8Array.prototype.fill watched),
// Node's own Buffer as a chunk, and the CCTV vectors read from the repository.

/** Runs `f`, recording every array wiped (filled with zeros) meanwhile. */
async function wipedDuring (f) {
  const wiped = []
  const fill = Uint8Array.prototype.fill
  Uint8Array.prototype.fill = function (value, ...rest) {
    if (value === 0) wiped.push(this)
    return fill.call(this, value, ...rest)
  }
  try {
    await f()
  } finally {
    Uint8Array.prototype.fill = fill
  }
  return wiped
}
const aWipedKey = (wiped) => wiped.some((a) => a.length === 16 && a.every((x) => x === 0))

test('the copy of a file key is wiped when the call that holds it throws', async () => {
  const id = await age.generateIdentity()
  const e = new age.Encrypter()
  e.addRecipient(await age.identityToRecipient(id))
  const file = await e.encrypt(data(100000))
  const t = new typage.Decrypter()
  t.addIdentity(id)
  const key = await t.decryptHeader(headerOf(file))
  const damaged = file.slice()
  damaged[damaged.length - 5] ^= 1
  const d = new age.Decrypter()
  d.addIdentity({ unwrapFileKey: () => key })
  // The payload fails after the key opened the header.
  assert.ok(aWipedKey(await wipedDuring(() => assert.rejects(d.decrypt(damaged), { code: 'ERR_HYPERSEAL_AUTH' }))))
  // A key that does not open the header.
  const wrong = new age.Decrypter()
  wrong.addIdentity({ unwrapFileKey: () => new Uint8Array(16).fill(7) })
  assert.ok(aWipedKey(await wipedDuring(() => assert.rejects(wrong.decrypt(file)))))
  assert.ok(aWipedKey(await wipedDuring(() => assert.rejects(wrong.decrypt(chunked(file, 1000))))))
  // A JavaScript recipient that throws: the file key it was given is wiped all the same.
  const failing = new age.Encrypter()
  failing.addRecipient({ wrapFileKey: () => { throw new Error('no card') } })
  assert.ok(aWipedKey(await wipedDuring(() => assert.rejects(failing.encrypt('x'), /no card/))))
  assert.deepEqual(key, await t.decryptHeader(headerOf(file)), "the identity's own array is left as it was")
})

test('arguments of the wrong type are refused with a TypeError on both backends, never read as other bytes', async () => {
  const id = await age.generateIdentity()
  const to = await age.identityToRecipient(id)
  const arg = { name: 'TypeError', code: 'ERR_HYPERSEAL_ARGUMENT' }
  const streamOf = (...chunks) => new ReadableStream({ start (c) { for (const x of chunks) c.enqueue(x); c.close() } })
  // A stream's chunks are Uint8Arrays (typage's ReadableStream<Uint8Array>): a string, an
  // ArrayBuffer or another view is refused, not sealed as zeros, as nothing or element by element.
  for (const bad of ['abc', new ArrayBuffer(3), new Uint16Array([1, 2]), new DataView(new ArrayBuffer(2)), 5]) {
    const e = new age.Encrypter()
    e.addRecipient(to)
    await assert.rejects(read(await e.encrypt(streamOf(enc('ok'), bad))), arg)
    const d = new age.Decrypter()
    d.addIdentity(id)
    await assert.rejects(async () => read(await d.decrypt(streamOf(bad))), arg)
    const custom = new age.Decrypter()
    custom.addIdentity({ unwrapFileKey: () => null })
    await assert.rejects(async () => read(await custom.decrypt(streamOf(bad))), arg)
  }
  const e = new age.Encrypter()
  e.addRecipient(to)
  const file = await e.encrypt('chunks')
  const d = new age.Decrypter()
  d.addIdentity(id)
  assert.equal(new TextDecoder().decode(await read(await d.decrypt(streamOf(Buffer.from(file))))), 'chunks')
  // Strings the library reads: a number is refused here, not handed to the backend.
  for (const bad of [5, new Uint8Array(3), undefined]) {
    assert.throws(() => age.armor.decode(bad), arg)
    await assert.rejects(age.identityToRecipient(bad), arg)
  }
  // The scrypt work factor is a whole number (typage: scrypt refuses the rest), not rounded or wrapped.
  for (const bad of [12.5, -1, NaN, 2 ** 40, '12', undefined]) {
    const p = new age.Encrypter()
    p.setScryptWorkFactor(bad)
    p.setPassphrase('p')
    await assert.rejects(p.encrypt('x'), arg)
  }
  const p = new age.Encrypter()
  p.setScryptWorkFactor(10)
  p.setPassphrase('p')
  const pd = new age.Decrypter()
  pd.addPassphrase('p')
  assert.equal(await pd.decrypt(await p.encrypt('x'), 'text'), 'x')
})

test('C2SP CCTV age vectors through the Decrypter', async () => {
  let run = 0
  for (const name of readdirSync(TESTKIT)) {
    if (name.endsWith('.md')) continue
    const raw = readFileSync(new URL(name, TESTKIT))
    const split = raw.indexOf('\n\n')
    const head = {}
    for (const [k, v] of raw.subarray(0, split).toString().split('\n').map((l) => l.split(': '))) (head[k] ??= []).push(v)
    const one = (k) => head[k]?.[0]
    let file = raw.subarray(split + 2)
    if (one('compressed') === 'zlib') file = inflateSync(file)
    const outcome = await (async () => {
      const d = new age.Decrypter()
      for (const v of head.identity ?? []) d.addIdentity(v)
      for (const v of head.passphrase ?? []) d.addPassphrase(v)
      const bytes = one('armored') === 'yes' ? age.armor.decode(new TextDecoder().decode(file)) : new Uint8Array(file)
      return createHash('sha256').update(await d.decrypt(bytes)).digest('hex')
    })().catch((e) => e)
    if (one('expect') === 'success') assert.equal(outcome, one('payload'), name)
    else assert.ok(outcome instanceof Error, `${name}: expected ${one('expect')}`)
    // A wrong passphrase is the library's ERR_HYPERSEAL_AUTH ("incorrect passphrase").
    const noMatch = head.passphrase ? ['ERR_HYPERSEAL_AUTH', 'ERR_HYPERSEAL_NO_IDENTITY'] : ['ERR_HYPERSEAL_NO_IDENTITY']
    if (one('expect') === 'no match') assert.ok(noMatch.includes(outcome.code), `${name}: ${outcome.code}`)
    run++
  }
  assert.ok(run >= 140, `ran ${run} vectors`)
})
