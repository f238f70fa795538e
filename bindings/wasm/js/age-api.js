// typage's public API (npm `age-encryption` 0.3: `Encrypter`, `Decrypter`, the key helpers,
// `armor`, `webauthn`) over hyperseal's bindings, for `hyperseal/age` in Node (the addon or its
// WebAssembly fallback: bindings/node/age.mjs) and in the page (js/age.js). This file maps
// names and shapes only: which binding call a typage call is, Uint8Array in and out, and the
// rules typage checks as a call is made (one passphrase, never with recipients). Every key is
// parsed, every header written and read, every file key drawn and checked and every byte
// sealed or opened by the library behind `backend` (bindings/node/src/age.rs,
// bindings/wasm/src/age.rs).
//
// A recipient or identity written in JavaScript (`wrapFileKey` / `unwrapFileKey`) is called at
// the header step only: it wraps a file key the library drew, or returns one that the library
// then checks against the header MAC before it opens any payload.

const utf8 = new TextEncoder()

function coded (code, message, Kind = Error) {
  return Object.assign(new Kind(message), { code })
}

const argError = (message) => coded('ERR_HYPERSEAL_ARGUMENT', message, TypeError)

/** A plain Uint8Array view of a binding's result (a Node Buffer is a subclass). */
function u8 (b) {
  return b.constructor === Uint8Array ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}

function bytesOf (file, what) {
  if (typeof file === 'string') return utf8.encode(file)
  if (file instanceof Uint8Array) return file
  throw argError(`${what} must be a Uint8Array, a string or a ReadableStream`)
}

/** A stream's chunk: typage's streams are `ReadableStream<Uint8Array>`, and a binding would
 * read a string or another view as other bytes (or none). */
function chunkOf (chunk) {
  if (chunk instanceof Uint8Array) return chunk
  throw argError('a stream chunk must be a Uint8Array')
}

/** A string the library reads (a binding would refuse anything else less clearly). */
function textOf (s, what) {
  if (typeof s === 'string') return s
  throw argError(`${what} must be a string`)
}

const isStream = (v) => typeof ReadableStream !== 'undefined' && v instanceof ReadableStream
const isCryptoKey = (v) => typeof CryptoKey !== 'undefined' && v instanceof CryptoKey
const BASE_POINT = Uint8Array.of(9, ...new Uint8Array(31))

function concat (a, b) {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/**
 * `ageApi(backend)`: the module's exports. `backend.load()` resolves to the bindings and
 * `backend.loaded()` returns them if they are already there (synchronous checks use it);
 * `backend.passkeys` asks WebAuthn (the page) or says it cannot (Node).
 */
export function ageApi (backend) {
  const { passkeys } = backend

  /** A header's stanza, as typage shapes it: `args[0]` is its type. */
  class Stanza {
    constructor (args, body) {
      this.args = args
      this.body = body
    }
  }

  /** X25519 of a `CryptoKey` with the public value `pub`, by Web Crypto (where the key stays). */
  async function agree (key, pub) {
    const peer = await crypto.subtle.importKey('raw', pub, { name: 'X25519' }, false, [])
    return new Uint8Array(await crypto.subtle.deriveBits({ name: 'X25519', public: peer }, key, 256))
  }

  /** A `CryptoKey`'s public key: its agreement with the base point. */
  const publicOf = (key) => agree(key, BASE_POINT)

  /** The file key a `CryptoKey` opens in `header`, or null: Web Crypto agrees on each X25519
   * stanza's share, the library does the rest. */
  async function cryptoKeyUnwrap (b, key, header) {
    const shares = []
    const secrets = []
    for (const share of b.ageX25519Shares(header)) {
      try {
        secrets.push(await agree(key, u8(share)))
        shares.push(share)
      } catch {
        // A low-order share: Web Crypto refuses it, and no key of ours opens that stanza.
      }
    }
    try {
      return b.ageX25519Unwrap(header, await publicOf(key), shares, secrets)
    } finally {
      for (const s of secrets) s.fill(0)
    }
  }

  class Encrypter {
    #passphrase = null
    #workFactor = 18
    #recipients = []

    setPassphrase (s) {
      if (this.#passphrase !== null) throw coded('ERR_HYPERSEAL_ARGUMENT', 'can encrypt to at most one passphrase')
      if (this.#recipients.length !== 0) throw coded('ERR_HYPERSEAL_ARGUMENT', "can't encrypt to both recipients and passphrases")
      if (typeof s !== 'string') throw argError('the passphrase must be a string')
      this.#passphrase = s
    }

    setScryptWorkFactor (logN) {
      this.#workFactor = logN
    }

    addRecipient (s) {
      if (this.#passphrase !== null) throw coded('ERR_HYPERSEAL_ARGUMENT', "can't encrypt to both recipients and passphrases")
      if (typeof s === 'string') {
        // Where the module is not loaded yet (a page's first call), the key is parsed when
        // `encrypt` loads it.
        backend.loaded()?.ageCheckRecipient(s)
      } else if (!passkeys.isRecipient(s) && typeof s?.wrapFileKey !== 'function') {
        throw argError('a recipient is an age1… string, a WebAuthnRecipient or an object with wrapFileKey')
      }
      this.#recipients.push(s)
    }

    /** The binding's plan: recipient strings and answered passkeys, or a passphrase; with
     * JavaScript recipients, the file key they wrapped and their stanzas. */
    async #plan (b) {
      if (this.#passphrase !== null) {
        // The bindings take a u32 (the library then checks scrypt's range): not a rounded or
        // wrapped one.
        const n = this.#workFactor
        if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw argError('the scrypt work factor must be a whole number from 0 to 2^32 - 1')
        return { recipients: [], passphrase: this.#passphrase, workFactor: n }
      }
      const recipients = []
      const custom = []
      for (const r of this.#recipients) {
        if (typeof r === 'string') recipients.push(r)
        else if (passkeys.isRecipient(r)) recipients.push(await passkeys.answerRecipient(r))
        else custom.push(r)
      }
      if (custom.length === 0) return { recipients }
      const fileKey = u8(b.ageFileKey())
      const stanzas = []
      try {
        for (const r of custom) {
          for (const s of await r.wrapFileKey(fileKey)) stanzas.push({ args: [...s.args], body: s.body })
        }
      } catch (e) {
        fileKey.fill(0)
        throw e
      }
      return { recipients, fileKey, stanzas }
    }

    async encrypt (file) {
      const b = await backend.load()
      const plan = await this.#plan(b)
      try {
        if (isStream(file)) {
          const session = b.EncryptSession.age(plan)
          const out = file.pipeThrough(new TransformStream({
            transform (chunk, c) { enqueue(c, session.push(chunkOf(chunk))) },
            flush (c) { enqueue(c, session.final()) },
          }))
          return Object.assign(out, { size: (n) => session.size(n) })
        }
        const pending = b.ageEncrypt(bytesOf(file, 'file'), plan)
        plan.fileKey?.fill(0)
        return u8(await pending)
      } finally {
        plan.fileKey?.fill(0)
      }
    }
  }

  function enqueue (c, piece) {
    if (piece.length > 0) c.enqueue(u8(piece))
  }

  /** `f()`, or null where the passphrase it tried is not the file's (the next one may be). */
  function wrongPassphrase (f) {
    try {
      return f()
    } catch (e) {
      if (e.code === 'ERR_HYPERSEAL_AUTH') return null
      throw e
    }
  }

  /** Checks that the copy `key` of a JavaScript identity's file key opens `header`; a copy
   * that does not is wiped before the error goes on (one that does is the caller's to wipe). */
  function checkKey (b, header, key) {
    try {
      b.ageDecryptHeader(header, { identities: [], passphrases: [], fileKey: key })
    } catch (e) {
      if (key instanceof Uint8Array) key.fill(0)
      throw e
    }
  }

  const noIdentity = () => coded('ERR_HYPERSEAL_NO_IDENTITY', "no identity matched any of the file's recipients")

  class Decrypter {
    #identities = []

    addPassphrase (s) {
      if (typeof s !== 'string') throw argError('the passphrase must be a string')
      this.#identities.push({ passphrase: s })
    }

    addIdentity (s) {
      if (isCryptoKey(s)) {
        this.#identities.push({ cryptoKey: s })
      } else if (typeof s === 'string') {
        backend.loaded()?.publicKeyOf(s)
        this.#identities.push({ text: s })
      } else if (passkeys.isIdentity(s)) {
        this.#identities.push({ passkey: s })
      } else if (typeof s?.unwrapFileKey === 'function') {
        this.#identities.push({ custom: s })
      } else {
        throw argError('an identity is an AGE-SECRET-KEY-… string, an X25519 CryptoKey, a WebAuthnIdentity or an object with unwrapFileKey')
      }
    }

    /** Whether each identity must see the header in turn: a JavaScript identity, a passkey
     * or a `CryptoKey` is asked there, and the library takes a wrong passphrase as the end (scrypt
     * stands alone in a file), so of several passphrases each is tried there by itself. */
    get #asks () {
      return this.#identities.some((i) => i.custom || i.passkey || i.cryptoKey) ||
        this.#identities.filter((i) => i.passphrase !== undefined).length > 1
    }

    /** All identities as the binding takes them (none that `#asks` for). */
    async #keys (b) {
      const keys = { identities: [], passphrases: [] }
      for (const i of this.#identities) {
        if (i.passphrase !== undefined) keys.passphrases.push(i.passphrase)
        else keys.identities.push(i.text)
      }
      return keys
    }

    /** The file key of `header`, trying each identity in the order they were added. */
    async #unwrap (b, header) {
      const { stanzas } = b.ageHeader(header, true)
      for (const i of this.#identities) {
        let key = null
        if (i.custom) {
          key = await i.custom.unwrapFileKey(stanzas.map((s) => new Stanza(s.args, u8(s.body))))
          // The identity's array stays its own (it may keep it for the next file): a copy is
          // checked, used and wiped.
          if (key instanceof Uint8Array) key = new Uint8Array(key)
          if (key !== null) checkKey(b, header, key)
        } else if (i.passkey) {
          const answered = await passkeys.answerIdentity(i.passkey, header)
          if (answered !== null) key = b.ageDecryptHeader(header, { identities: [answered], passphrases: [] })
        } else if (i.passphrase !== undefined) {
          key = wrongPassphrase(() => b.ageDecryptHeader(header, { identities: [], passphrases: [i.passphrase] }))
        } else if (i.cryptoKey) {
          key = await cryptoKeyUnwrap(b, i.cryptoKey, header)
        } else {
          key = b.ageDecryptHeader(header, { identities: [i.text], passphrases: [] })
        }
        if (key !== null && key !== undefined) return u8(key)
      }
      throw noIdentity()
    }

    /** The binding's keys for a file whose header starts `prefix` (the whole file, or all of its header). */
    async #keysFor (b, prefix) {
      if (!this.#asks) return this.#keys(b)
      return { identities: [], passphrases: [], fileKey: await this.#unwrap(b, prefix) }
    }

    async decrypt (file, outputFormat) {
      const b = await backend.load()
      if (isStream(file)) return this.#decryptStream(b, file)
      if (!(file instanceof Uint8Array)) throw argError('file must be a Uint8Array or a ReadableStream')
      const keys = await this.#keysFor(b, file)
      let out
      try {
        out = u8(await b.ageDecrypt(file, keys))
      } finally {
        keys.fileKey?.fill(0)
      }
      return outputFormat === 'text' ? new TextDecoder().decode(out) : out
    }

    async decryptHeader (header) {
      const b = await backend.load()
      if (!(header instanceof Uint8Array)) throw argError('header must be a Uint8Array')
      if (this.#asks) return this.#unwrap(b, header)
      const key = b.ageDecryptHeader(header, await this.#keys(b))
      if (key === null || key === undefined) throw noIdentity()
      return u8(key)
    }

    /** A stream of the plaintext, resolved once the header is read and opened. */
    async #decryptStream (b, file) {
      const reader = file.getReader()
      const ready = []
      let session
      if (this.#asks) {
        let prefix = new Uint8Array(0)
        let ended = false
        while (!b.ageHeader(prefix, ended)) {
          const { value, done } = await reader.read()
          if (done) ended = true
          else prefix = concat(prefix, chunkOf(value))
        }
        const keys = await this.#keysFor(b, prefix)
        try {
          session = b.DecryptSession.age(keys)
        } finally {
          keys.fileKey.fill(0)
        }
        ready.push(session.push(prefix))
      } else {
        session = b.DecryptSession.age(await this.#keys(b))
        while (!session.headerRead) {
          const { value, done } = await reader.read()
          if (done) session.final() // throws: the file ends inside its header
          else ready.push(session.push(chunkOf(value)))
        }
      }
      const out = new ReadableStream({
        start (c) { for (const p of ready) enqueue(c, p) },
        // A pull that enqueues nothing is not called again: read until a chunk is out.
        async pull (c) {
          for (;;) {
            const { value, done } = await reader.read()
            if (done) {
              enqueue(c, session.final())
              return c.close()
            }
            const piece = session.push(chunkOf(value))
            if (piece.length > 0) return enqueue(c, piece)
          }
        },
        cancel (reason) { return reader.cancel(reason) },
      })
      return Object.assign(out, { size: (n) => session.size(n) })
    }
  }

  const kind = async (k) => (await backend.load()).generateKeyPair({ kind: k }).privateKey

  async function identityToRecipient (identity) {
    const b = await backend.load()
    return isCryptoKey(identity)
      ? b.ageX25519Recipient(await publicOf(identity))
      : b.publicKeyOf(textOf(identity, 'an identity (other than an X25519 CryptoKey)'))
  }

  /** Synchronous calls need the bindings already loaded (always so in Node). */
  function loadedNow (what) {
    const b = backend.loaded()
    if (!b) throw coded('ERR_HYPERSEAL_ARGUMENT', `${what} is synchronous and the WebAssembly module is not loaded yet: await any other hyperseal/age call first`)
    return b
  }

  const armor = Object.freeze({
    encode: (file) => loadedNow('armor.encode').ageArmor(bytesOf(file, 'file')),
    decode: (file) => u8(loadedNow('armor.decode').ageDearmor(textOf(file, 'the armored file'))),
  })

  return {
    Encrypter,
    Decrypter,
    Stanza,
    armor,
    webauthn: passkeys.webauthn,
    generateIdentity: () => kind('x25519'),
    generateX25519Identity: () => kind('x25519'),
    generateHybridIdentity: () => kind('hybrid'),
    identityToRecipient,
  }
}
