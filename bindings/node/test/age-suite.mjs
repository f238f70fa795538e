// hyperseal/age (typage's API) against the real typage (npm `age-encryption`): one suite, run
// on each backend. test/age.test.mjs runs it in Node (on the addon, and on the WebAssembly
// fallback in `make test`'s second pass); bindings/wasm/test/age.test.mjs runs it in Chromium,
// as a page gets the package from a bundler.
//
// Each case is `async ({ age, typage, t }) => …` and throws on failure. The browser runner sends
// a case's source text into the page, so a case may use only its argument and what both Node and
// a page have (TextEncoder, ReadableStream, crypto.subtle): never a name from this
// module. `t` is `helpers()`, sent the same way.

/** The assertions and data makers the cases use: self-contained, so the page can rebuild it. */
export function helpers () {
  const show = (x) => x instanceof Uint8Array ? `bytes[${x.length}] ${Array.from(x.subarray(0, 24))}` : JSON.stringify(x)
  const norm = (x) => x instanceof Uint8Array ? 'u8:' + Array.from(x).join(',') : JSON.stringify(x)
  const fail = (what, detail) => { throw new Error(`${what || 'check failed'}: ${detail}`) }
  const matches = (e, want) => {
    if (want === undefined) return true
    if (want instanceof RegExp) return want.test(e?.message)
    return (want.code === undefined || e?.code === want.code) &&
      (want.message === undefined || (want.message instanceof RegExp ? want.message.test(e?.message) : e?.message === want.message))
  }
  const t = {
    ok: (value, what) => { if (!value) fail(what, show(value)) },
    eq: (a, b, what) => { if (norm(a) !== norm(b)) fail(what, `${show(a)} !== ${show(b)}`) },
    throws: (f, want, what) => {
      try { f() } catch (e) {
        if (!matches(e, want)) fail(what, `threw ${e?.code} ${e?.message}`)
        return
      }
      fail(what, 'did not throw')
    },
    rejects: async (p, want, what) => {
      try { await (typeof p === 'function' ? p() : p) } catch (e) {
        if (!matches(e, want)) fail(what, `rejected with ${e?.code} ${e?.message}`)
        return
      }
      fail(what, 'did not reject')
    },
    enc: (s) => new TextEncoder().encode(s),
    data: (n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255),
    // A reader, not `new Response(stream)`: Chromium turns a stream's error into its own
    // "Failed to fetch" there, and the cases check the error the stream raised.
    read: async (stream) => {
      const parts = []
      const reader = stream.getReader()
      for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value)
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
      parts.reduce((at, p) => { out.set(p, at); return at + p.length }, 0)
      return out
    },
    chunked: (bytes, piece) => new ReadableStream({
      start (c) {
        for (let i = 0; i < bytes.length; i += piece) c.enqueue(bytes.slice(i, i + piece))
        c.close()
      },
    }),
    /** The header of an age file: through the MAC line ("---" and its end of line). */
    headerOf: (file) => {
      for (let i = 0; i + 4 <= file.length; i++) {
        if (file[i] === 10 && file[i + 1] === 45 && file[i + 2] === 45 && file[i + 3] === 45) {
          return file.subarray(0, file.indexOf(10, i + 1) + 1)
        }
      }
      throw new Error('no header end')
    },
  }
  return t
}

/** `[name, case]` pairs, in the order they run. */
export const CASES = [
  ['exports the names typage exports', async ({ age, typage, t }) => {
    t.eq(Object.keys(age).sort(), Object.keys(typage).sort())
    t.eq(Object.keys(age.armor).sort(), Object.keys(typage.armor).sort())
    t.eq(Object.keys(age.webauthn).sort(), Object.keys(typage.webauthn).sort())
  }],

  ['X25519 and hybrid files open in typage and typage\'s open here', async ({ age, typage, t }) => {
    for (const kind of ['X25519', 'Hybrid']) {
      const ours = await age[`generate${kind}Identity`]()
      const theirs = await typage[`generate${kind}Identity`]()
      t.eq(await age.identityToRecipient(theirs), await typage.identityToRecipient(theirs), kind)
      t.eq(await age.identityToRecipient(ours), await typage.identityToRecipient(ours), kind)
      for (const size of [0, 1, 65536, 65537, 200000]) {
        const plain = t.data(size)
        const e = new age.Encrypter()
        e.addRecipient(await typage.identityToRecipient(theirs))
        const d = new typage.Decrypter()
        d.addIdentity(theirs)
        t.eq(await d.decrypt(await e.encrypt(plain)), plain, `${kind} ${size} to typage`)
        const te = new typage.Encrypter()
        te.addRecipient(await age.identityToRecipient(ours))
        const od = new age.Decrypter()
        od.addIdentity(ours)
        const out = await od.decrypt(await te.encrypt(plain))
        t.ok(out instanceof Uint8Array, 'a Uint8Array out')
        t.eq(out, plain, `${kind} ${size} from typage`)
      }
    }
  }],

  ['passphrases both ways, text output', async ({ age, typage, t }) => {
    const e = new age.Encrypter()
    e.setPassphrase('correct horse')
    e.setScryptWorkFactor(10)
    const d = new typage.Decrypter()
    d.addPassphrase('correct horse')
    t.eq(await d.decrypt(await e.encrypt('héllo'), 'text'), 'héllo')
    const te = new typage.Encrypter()
    te.setPassphrase('battery staple')
    te.setScryptWorkFactor(10)
    const od = new age.Decrypter()
    od.addPassphrase('wrong')
    od.addPassphrase('battery staple')
    t.eq(await od.decrypt(await te.encrypt('héllo'), 'text'), 'héllo')
  }],

  ['JavaScript recipients and identities round trip with typage, beside built-in keys', async ({ age, typage, t }) => {
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
    const plain = t.data(70000)
    for (const [E, D] of [[age, typage], [typage, age], [age, age]]) {
      const e = new E.Encrypter()
      e.addRecipient(makeRecipient(E))
      e.addRecipient(await typage.identityToRecipient(other))
      const file = await e.encrypt(plain)
      const seen = []
      const d = new D.Decrypter()
      d.addIdentity(makeIdentity(seen))
      t.eq(await d.decrypt(file), plain)
      t.eq(seen[0].sort(), ['X25519', 'example.com/xor'])
      const byKey = new D.Decrypter()
      byKey.addIdentity(other)
      t.eq(await byKey.decrypt(file), plain)
    }
    // A JavaScript identity's wrong key fails the header MAC, never opens the payload.
    const e = new age.Encrypter()
    e.addRecipient(makeRecipient(age))
    const d = new age.Decrypter()
    d.addIdentity({ unwrapFileKey: () => new Uint8Array(16) })
    await t.rejects(d.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_AUTH' })
    const none = new age.Decrypter()
    none.addIdentity({ unwrapFileKey: () => null })
    await t.rejects(none.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_NO_IDENTITY', message: "no identity matched any of the file's recipients" })
  }],

  ['the file key a JavaScript identity returns stays its own: one that returns a kept key opens file after file', async ({ age, typage, t }) => {
    const id = await age.generateIdentity()
    const e = new age.Encrypter()
    e.addRecipient(await age.identityToRecipient(id))
    const file = await e.encrypt('again')
    const td = new typage.Decrypter()
    td.addIdentity(id)
    const key = await td.decryptHeader(t.headerOf(file))
    const kept = key.slice()
    const d = new age.Decrypter()
    d.addIdentity({ unwrapFileKey: () => key })
    for (let i = 0; i < 2; i++) {
      t.eq(await d.decrypt(file, 'text'), 'again')
      t.eq(new TextDecoder().decode(await t.read(await d.decrypt(t.chunked(file, 100)))), 'again')
      t.eq(await d.decryptHeader(t.headerOf(file)), kept)
    }
    t.eq(key, kept)
  }],

  ['a JavaScript recipient\'s stanza that could not be written is refused, the module unharmed', async ({ age, t }) => {
    for (const args of [['p q'], [''], ['é'], ['ok', ''], ['ok', 'a\nb'], []]) {
      const e = new age.Encrypter()
      e.addRecipient({ wrapFileKey: (k) => [new age.Stanza(args, k.slice())] })
      await t.rejects(e.encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT' }, JSON.stringify(args))
      await t.rejects(async () => t.read(await e.encrypt(t.chunked(t.enc('x'), 1))), { code: 'ERR_HYPERSEAL_ARGUMENT' }, JSON.stringify(args))
    }
    const id = await age.generateIdentity()
    const e = new age.Encrypter()
    e.addRecipient(await age.identityToRecipient(id))
    e.addRecipient({ wrapFileKey: (k) => [new age.Stanza(['ok', 'visible-ascii!~'], k.slice())] })
    const d = new age.Decrypter()
    d.addIdentity(id)
    t.eq(await d.decrypt(await e.encrypt('fine'), 'text'), 'fine')
  }],

  ['streams: a stream in gives a stream out, with typage\'s sizes', async ({ age, typage, t }) => {
    const id = await age.generateIdentity()
    const to = await age.identityToRecipient(id)
    for (const size of [0, 1000, 65536, 300001]) {
      const plain = t.data(size)
      const e = new age.Encrypter()
      e.addRecipient(to)
      const out = await e.encrypt(t.chunked(plain, 7777))
      const file = await t.read(out)
      t.eq(out.size(size), file.length, `size ${size}`)
      const te = new typage.Encrypter()
      te.addRecipient(to)
      t.eq((await te.encrypt(t.chunked(plain, 1000))).size(size), file.length, `typage's size ${size}`)
      const d = new age.Decrypter()
      d.addIdentity(id)
      const ps = await d.decrypt(t.chunked(file, 5000))
      t.eq(ps.size(file.length), size)
      t.eq(await t.read(ps), plain)
      const td = new typage.Decrypter()
      td.addIdentity(id)
      t.eq(await t.read(await td.decrypt(t.chunked(file, 4096))), plain)
      const custom = new age.Decrypter()
      custom.addIdentity({ unwrapFileKey: async () => { const d2 = new typage.Decrypter(); d2.addIdentity(id); return d2.decryptHeader(t.headerOf(file)) } })
      t.eq(await t.read(await custom.decrypt(t.chunked(file, 3000))), plain)
    }
    const d = new age.Decrypter()
    d.addIdentity(id)
    const e = new age.Encrypter()
    e.addRecipient(to)
    const damaged = await e.encrypt(t.data(100000))
    damaged[damaged.length - 5] ^= 1
    await t.rejects(async () => t.read(await d.decrypt(t.chunked(damaged, 9000))), { code: 'ERR_HYPERSEAL_AUTH' })
  }],

  ['decryptHeader returns the file key typage returns', async ({ age, typage, t }) => {
    const id = await age.generateHybridIdentity()
    const e = new typage.Encrypter()
    e.addRecipient(await age.identityToRecipient(id))
    const file = await e.encrypt('detached')
    const ours = new age.Decrypter()
    ours.addIdentity(id)
    const theirs = new typage.Decrypter()
    theirs.addIdentity(id)
    const key = await ours.decryptHeader(t.headerOf(file))
    t.eq(key.length, 16)
    t.eq(key, await theirs.decryptHeader(t.headerOf(file)))
    const byKey = new age.Decrypter()
    byKey.addIdentity({ unwrapFileKey: () => key })
    t.eq(await byKey.decrypt(file, 'text'), 'detached')
  }],

  ['armor matches typage byte for byte, and refuses what it refuses', async ({ age, typage, t }) => {
    for (const n of [0, 1, 47, 48, 49, 1000]) {
      const bytes = t.data(n)
      t.eq(age.armor.encode(bytes), typage.armor.encode(bytes))
      t.eq(age.armor.decode(typage.armor.encode(bytes)), bytes)
      t.eq(age.armor.decode(typage.armor.encode(bytes).replaceAll('\n', '\r\n')), bytes)
      t.eq(age.armor.decode(' \n' + typage.armor.encode(bytes) + '\n\n'), bytes)
    }
    for (const bad of ['', 'hello', '-----BEGIN AGE ENCRYPTED FILE-----\nAAAA\n']) {
      t.throws(() => typage.armor.decode(bad), undefined, JSON.stringify(bad))
      t.throws(() => age.armor.decode(bad), undefined, JSON.stringify(bad))
    }
  }],

  ['errors are thrown where typage throws them, synchronously', async ({ age, typage, t }) => {
    const to = await age.identityToRecipient(await age.generateIdentity())
    for (const api of [age, typage]) {
      const p = new api.Encrypter()
      p.setPassphrase('a')
      t.throws(() => p.setPassphrase('b'), /at most one passphrase/)
      t.throws(() => p.addRecipient(to), /both recipients and passphrases/)
      const r = new api.Encrypter()
      r.addRecipient(to)
      t.throws(() => r.setPassphrase('a'), /both recipients and passphrases/)
      t.throws(() => r.addRecipient('age1notakey'))
      t.throws(() => new api.Decrypter().addIdentity('AGE-SECRET-KEY-1NOTAKEY'))
    }
    const d = new age.Decrypter()
    d.addIdentity(await age.generateIdentity())
    const e = new age.Encrypter()
    e.addRecipient(to)
    await t.rejects(d.decrypt(await e.encrypt('x')), { code: 'ERR_HYPERSEAL_NO_IDENTITY' })
  }],

  ['encrypting to nobody is refused (typage writes a file with no stanzas); keys are read in either case', async ({ age, typage, t }) => {
    await t.rejects(new age.Encrypter().encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT', message: /no recipients/ })
    const empty = new age.Encrypter()
    empty.addRecipient({ wrapFileKey: () => [] })
    await t.rejects(empty.encrypt('x'), { code: 'ERR_HYPERSEAL_ARGUMENT', message: /no recipients/ })
    t.ok((await new typage.Encrypter().encrypt('x')).length > 0)
    for (const kind of ['X25519', 'Hybrid']) {
      const id = await age[`generate${kind}Identity`]()
      const to = await age.identityToRecipient(id)
      t.throws(() => new typage.Encrypter().addRecipient(to.toUpperCase()))
      const e = new age.Encrypter()
      e.addRecipient(to.toUpperCase())
      const d = new age.Decrypter()
      d.addIdentity(id.toLowerCase())
      t.eq(await age.identityToRecipient(id.toLowerCase()), to)
      t.eq(await d.decrypt(await e.encrypt('case'), 'text'), 'case')
    }
  }],

  ['an X25519 CryptoKey, extractable or not, is an identity and has a recipient', async ({ age, typage, t }) => {
    for (const extractable of [false, true]) {
      const { privateKey } = await crypto.subtle.generateKey({ name: 'X25519' }, extractable, ['deriveBits'])
      const to = await age.identityToRecipient(privateKey)
      t.eq(to, await typage.identityToRecipient(privateKey))
      const other = await typage.identityToRecipient(await typage.generateIdentity())
      const e = new typage.Encrypter()
      e.addRecipient(other)
      e.addRecipient(to)
      const d = new age.Decrypter()
      d.addIdentity(privateKey)
      t.eq(await d.decrypt(await e.encrypt('key'), 'text'), 'key')
      const wrong = new age.Decrypter()
      wrong.addIdentity((await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])).privateKey)
      await t.rejects(wrong.decrypt(await e.encrypt('key')), { code: 'ERR_HYPERSEAL_NO_IDENTITY' })
    }
  }],
]
