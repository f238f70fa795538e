// hyperseal/age (typage's API) against the real typage (npm `age-encryption`, a dev
// dependency): files both ways for every key kind both read, JavaScript recipients and
// identities, streams with their sizes, detached headers, armor, the errors typage throws
// synchronously, and the C2SP CCTV age vectors through the drop-in's Decrypter. Runs on the
// addon, and on the WebAssembly fallback in `make test`'s second pass.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { inflateSync } from 'node:zlib'
import * as age from 'hyperseal/age'
import * as typage from 'age-encryption'

const TESTKIT = new URL('../../../crates/hyperseal/tests/data/age-testkit/', import.meta.url)
const enc = (s) => new TextEncoder().encode(s)
const data = (n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255)
const read = async (stream) => new Uint8Array(await new Response(stream).arrayBuffer())
const chunked = (bytes, piece) => new ReadableStream({
  start (c) {
    for (let i = 0; i < bytes.length; i += piece) c.enqueue(bytes.slice(i, i + piece))
    c.close()
  },
})
/** The header of an age file: through the MAC line. */
const headerOf = (file) => file.subarray(0, file.indexOf(10, Buffer.from(file).indexOf('\n---') + 1) + 1)

test('exports the names typage exports', () => {
  assert.deepEqual(Object.keys(age).sort(), Object.keys(typage).sort())
  assert.deepEqual(Object.keys(age.armor).sort(), Object.keys(typage.armor).sort())
  assert.deepEqual(Object.keys(age.webauthn).sort(), Object.keys(typage.webauthn).sort())
})

for (const kind of ['X25519', 'Hybrid']) {
  test(`${kind} files open in typage and typage's open here`, async () => {
    const ours = await age[`generate${kind}Identity`]()
    const theirs = await typage[`generate${kind}Identity`]()
    assert.equal(await age.identityToRecipient(theirs), await typage.identityToRecipient(theirs))
    assert.equal(await age.identityToRecipient(ours), await typage.identityToRecipient(ours))
    for (const size of [0, 1, 65536, 65537, 200000]) {
      const plain = data(size)
      const e = new age.Encrypter()
      e.addRecipient(await typage.identityToRecipient(theirs))
      const d = new typage.Decrypter()
      d.addIdentity(theirs)
      assert.deepEqual(await d.decrypt(await e.encrypt(plain)), plain)
      const te = new typage.Encrypter()
      te.addRecipient(await age.identityToRecipient(ours))
      const od = new age.Decrypter()
      od.addIdentity(ours)
      const out = await od.decrypt(await te.encrypt(plain))
      assert.equal(out.constructor, Uint8Array)
      assert.deepEqual(out, plain)
    }
  })
}

test('passphrases both ways, text output', async () => {
  const e = new age.Encrypter()
  e.setPassphrase('correct horse')
  e.setScryptWorkFactor(10)
  const d = new typage.Decrypter()
  d.addPassphrase('correct horse')
  assert.equal(await d.decrypt(await e.encrypt('héllo'), 'text'), 'héllo')
  const te = new typage.Encrypter()
  te.setPassphrase('battery staple')
  te.setScryptWorkFactor(10)
  const od = new age.Decrypter()
  od.addPassphrase('wrong')
  od.addPassphrase('battery staple')
  assert.equal(await od.decrypt(await te.encrypt('héllo'), 'text'), 'héllo')
})

test('JavaScript recipients and identities round trip with typage, beside built-in keys', async () => {
  const makeRecipient = (api) => ({
    wrapFileKey: (key) => [new api.Stanza(['example.com/xor', 'v1'], key.map((b) => b ^ 0x5a))],
  })
  const makeIdentity = (seen) => ({
    unwrapFileKey: async (stanzas) => {
      seen.push(stanzas.map((s) => s.args[0]))
      const s = stanzas.find((s) => s.args[0] === 'example.com/xor')
      return s ? s.body.map((b) => b ^ 0x5a) : null
    },
  })
  const other = await typage.generateIdentity()
  const plain = data(70000)
  for (const [E, D] of [[age, typage], [typage, age], [age, age]]) {
    const e = new E.Encrypter()
    e.addRecipient(makeRecipient(E))
    e.addRecipient(await typage.identityToRecipient(other))
    const file = await e.encrypt(plain)
    const seen = []
    const d = new D.Decrypter()
    d.addIdentity(makeIdentity(seen))
    assert.deepEqual(await d.decrypt(file), plain)
    assert.deepEqual(seen[0].sort(), ['X25519', 'example.com/xor'])
    const byKey = new D.Decrypter()
    byKey.addIdentity(other)
    assert.deepEqual(await byKey.decrypt(file), plain)
  }
  // A JavaScript identity's wrong key fails the header MAC, never opens the payload.
  const e = new age.Encrypter()
  e.addRecipient(makeRecipient(age))
  const d = new age.Decrypter()
  d.addIdentity({ unwrapFileKey: () => new Uint8Array(16) })
  await assert.rejects(d.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_AUTH' })
  const none = new age.Decrypter()
  none.addIdentity({ unwrapFileKey: () => null })
  await assert.rejects(none.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_NO_IDENTITY', message: "no identity matched any of the file's recipients" })
})

test('the file key a JavaScript identity returns stays its own: one that returns a kept key opens file after file', async () => {
  const id = await age.generateIdentity()
  const e = new age.Encrypter()
  e.addRecipient(await age.identityToRecipient(id))
  const file = await e.encrypt('again')
  const t = new typage.Decrypter()
  t.addIdentity(id)
  const key = await t.decryptHeader(headerOf(file))
  const kept = key.slice()
  const d = new age.Decrypter()
  d.addIdentity({ unwrapFileKey: () => key })
  for (let i = 0; i < 2; i++) {
    assert.equal(await d.decrypt(file, 'text'), 'again')
    assert.equal(new TextDecoder().decode(await read(await d.decrypt(chunked(file, 100)))), 'again')
    assert.deepEqual(await d.decryptHeader(headerOf(file)), kept)
  }
  assert.deepEqual(key, kept)
})

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

test('a JavaScript recipient\'s stanza that could not be written is refused, the process and module unharmed', async () => {
  for (const args of [['p q'], [''], ['é'], ['ok', ''], ['ok', 'a\nb'], []]) {
    const e = new age.Encrypter()
    e.addRecipient({ wrapFileKey: (k) => [new age.Stanza(args, k.slice())] })
    await assert.rejects(e.encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT' }, JSON.stringify(args))
    await assert.rejects(async () => read(await e.encrypt(chunked(enc('x'), 1))), { code: 'ERR_HYPERSEAL_ARGUMENT' }, JSON.stringify(args))
  }
  const id = await age.generateIdentity()
  const e = new age.Encrypter()
  e.addRecipient(await age.identityToRecipient(id))
  e.addRecipient({ wrapFileKey: (k) => [new age.Stanza(['ok', 'visible-ascii!~'], k.slice())] })
  const d = new age.Decrypter()
  d.addIdentity(id)
  assert.equal(await d.decrypt(await e.encrypt('fine'), 'text'), 'fine')
})

test('streams: a stream in gives a stream out, with typage\'s sizes', async () => {
  const id = await age.generateIdentity()
  const to = await age.identityToRecipient(id)
  for (const size of [0, 1000, 65536, 300001]) {
    const plain = data(size)
    const e = new age.Encrypter()
    e.addRecipient(to)
    const out = await e.encrypt(chunked(plain, 7777))
    const file = await read(out)
    assert.equal(out.size(size), file.length)
    const te = new typage.Encrypter()
    te.addRecipient(to)
    assert.equal((await te.encrypt(chunked(plain, 1000))).size(size), file.length)
    const d = new age.Decrypter()
    d.addIdentity(id)
    const ps = await d.decrypt(chunked(file, 5000))
    assert.equal(ps.size(file.length), size)
    assert.deepEqual(await read(ps), plain)
    const td = new typage.Decrypter()
    td.addIdentity(id)
    assert.deepEqual(await read(await td.decrypt(chunked(file, 4096))), plain)
    const custom = new age.Decrypter()
    custom.addIdentity({ unwrapFileKey: async (stanzas) => { const d2 = new typage.Decrypter(); d2.addIdentity(id); return d2.decryptHeader(headerOf(file)) } })
    assert.deepEqual(await read(await custom.decrypt(chunked(file, 3000))), plain)
  }
  const d = new age.Decrypter()
  d.addIdentity(id)
  const e = new age.Encrypter()
  e.addRecipient(to)
  const damaged = await e.encrypt(data(100000))
  damaged[damaged.length - 5] ^= 1
  await assert.rejects(read(await d.decrypt(chunked(damaged, 9000))), { code: 'ERR_HYPERSEAL_AUTH' })
})

test('decryptHeader returns the file key typage returns', async () => {
  const id = await age.generateHybridIdentity()
  const e = new typage.Encrypter()
  e.addRecipient(await age.identityToRecipient(id))
  const file = await e.encrypt('detached')
  const ours = new age.Decrypter()
  ours.addIdentity(id)
  const theirs = new typage.Decrypter()
  theirs.addIdentity(id)
  const key = await ours.decryptHeader(headerOf(file))
  assert.equal(key.length, 16)
  assert.deepEqual(key, await theirs.decryptHeader(headerOf(file)))
  const byKey = new age.Decrypter()
  byKey.addIdentity({ unwrapFileKey: () => key })
  assert.equal(await byKey.decrypt(file, 'text'), 'detached')
})

test('armor matches typage byte for byte, and refuses what it refuses', async () => {
  for (const n of [0, 1, 47, 48, 49, 1000]) {
    const bytes = data(n)
    assert.equal(age.armor.encode(bytes), typage.armor.encode(bytes))
    assert.deepEqual(age.armor.decode(typage.armor.encode(bytes)), bytes)
    assert.deepEqual(age.armor.decode(typage.armor.encode(bytes).replaceAll('\n', '\r\n')), bytes)
    assert.deepEqual(age.armor.decode(' \n' + typage.armor.encode(bytes) + '\n\n'), bytes)
  }
  for (const bad of ['', 'hello', '-----BEGIN AGE ENCRYPTED FILE-----\nAAAA\n']) {
    assert.throws(() => typage.armor.decode(bad))
    assert.throws(() => age.armor.decode(bad))
  }
})

test('errors are thrown where typage throws them, synchronously', async () => {
  const to = await age.identityToRecipient(await age.generateIdentity())
  for (const api of [age, typage]) {
    const p = new api.Encrypter()
    p.setPassphrase('a')
    assert.throws(() => p.setPassphrase('b'), /at most one passphrase/)
    assert.throws(() => p.addRecipient(to), /both recipients and passphrases/)
    const r = new api.Encrypter()
    r.addRecipient(to)
    assert.throws(() => r.setPassphrase('a'), /both recipients and passphrases/)
    assert.throws(() => r.addRecipient('age1notakey'))
    assert.throws(() => new api.Decrypter().addIdentity('AGE-SECRET-KEY-1NOTAKEY'))
  }
  const d = new age.Decrypter()
  d.addIdentity(await age.generateIdentity())
  const e = new age.Encrypter()
  e.addRecipient(to)
  await assert.rejects(d.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_NO_IDENTITY' })
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

test('encrypting to nobody is refused (typage writes a file with no stanzas); keys are read in either case', async () => {
  await assert.rejects(new age.Encrypter().encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT', message: /no recipients/ })
  const empty = new age.Encrypter()
  empty.addRecipient({ wrapFileKey: () => [] })
  await assert.rejects(empty.encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT', message: /no recipients/ })
  assert.equal((await new typage.Encrypter().encrypt('x')).length > 0, true)
  for (const kind of ['X25519', 'Hybrid']) {
    const id = await age[`generate${kind}Identity`]()
    const to = await age.identityToRecipient(id)
    assert.throws(() => new typage.Encrypter().addRecipient(to.toUpperCase()))
    const e = new age.Encrypter()
    e.addRecipient(to.toUpperCase())
    const d = new age.Decrypter()
    d.addIdentity(id.toLowerCase())
    assert.equal(await age.identityToRecipient(id.toLowerCase()), to)
    assert.equal(await d.decrypt(await e.encrypt('case'), 'text'), 'case')
  }
})

test('an X25519 CryptoKey, extractable or not, is an identity and has a recipient', async () => {
  for (const extractable of [false, true]) {
    const { privateKey } = await crypto.subtle.generateKey({ name: 'X25519' }, extractable, ['deriveBits'])
    const to = await age.identityToRecipient(privateKey)
    assert.equal(to, await typage.identityToRecipient(privateKey))
    const other = await typage.identityToRecipient(await typage.generateIdentity())
    const e = new typage.Encrypter()
    e.addRecipient(other)
    e.addRecipient(to)
    const d = new age.Decrypter()
    d.addIdentity(privateKey)
    assert.equal(await d.decrypt(await e.encrypt('key'), 'text'), 'key')
    const wrong = new age.Decrypter()
    wrong.addIdentity((await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])).privateKey)
    await assert.rejects(wrong.decrypt(await e.encrypt('key')), { code: 'ERR_HYPERSEAL_NO_IDENTITY' })
  }
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
