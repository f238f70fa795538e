// Passkeys in Chromium against typage (age-encryption), on Chromium's own WebAuthn stack: the
// DevTools protocol's virtual CTAP2 authenticator (resident keys, user verification, PRF), in
// one page at http://localhost (an IP address cannot be a relying-party ID) and one browser
// run (PRF secrets cannot be exported, so a file opens only where it was made). Both
// directions at 1 KB and 16 MB, one-shots, streams and the WorkerPool; a second credential, a
// file to a passkey and an X25519 key, decryptRange, a malformed stanza, re-keying a File (a passkey added to
// an X25519 and a post-quantum file, and removed) and an authenticator without PRF.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildPeers } from '../bench/chromium.mjs'
import { startBrowser, PKG_ROOT } from './harness.mjs'

let h, page, cdp, authenticator

const AUTHENTICATOR = {
  protocol: 'ctap2', ctap2Version: 'ctap2_1', transport: 'internal', hasResidentKey: true,
  hasUserVerification: true, isUserVerified: true, hasPrf: true, automaticPresenceSimulation: true,
}

before(async () => {
  await buildPeers() // bench/dist/peers.js: typage for the page
  h = await startBrowser()
  page = await h.context.newPage()
  await page.goto(`${h.server.url.replace('127.0.0.1', 'localhost')}/test/page.html`)
  await page.waitForFunction(() => window.hyperseal !== undefined)
  await page.evaluate(() => window.hyperseal)
  await page.addScriptTag({ url: '/bench/dist/peers.js' })
  cdp = await h.context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  authenticator = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: AUTHENTICATOR })).authenticatorId
})
after(async () => { await h?.close() })

/** Runs `fn(hs, typage, arg)` in the localhost page. */
const run = (fn, arg) => page.evaluate(async ([src, arg]) => {
  const hs = await window.hyperseal
  // eslint-disable-next-line no-new-func
  return await (new Function('return ' + src)())(hs, window.peers.age, arg)
}, [fn.toString(), arg])

let identity

test('createCredential makes a passkey with PRF; typage reads its identity string', async () => {
  const r = await run(async (hs, age) => {
    const identity = await hs.createCredential({ keyName: 'hyperseal test', type: 'passkey' })
    new age.webauthn.WebAuthnIdentity({ identity }) // typage parses it
    return { identity }
  })
  assert.match(r.identity, /^AGE-PLUGIN-FIDO2PRF-1[0-9A-Z]+$/)
  identity = r.identity
  const creds = await cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator })
  assert.equal(creds.credentials.length, 1)
  assert.ok(creds.credentials[0].isResidentCredential && creds.credentials[0].rpId === 'localhost')
})

test('a discoverable passkey opens without its identity string (the user picks it)', async () => {
  const r = await run(async (hs, age, { identity }) => {
    // typage's namespace works as typage's does.
    const sealed = await hs.encryptByPublicKeyAsync('picked', new hs.webauthn.WebAuthnRecipient({ rpId: 'localhost' }), { format: 'age' })
    const d = new age.Decrypter()
    d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity }))
    return {
      hs: new TextDecoder().decode(await hs.decryptByPrivateKeyAsync(sealed, new hs.WebAuthnIdentity())),
      typage: await d.decrypt(sealed, 'text'),
    }
  }, { identity })
  assert.deepEqual(r, { hs: 'picked', typage: 'picked' })
})
/** In the page: `size` random bytes both ways between typage and hyperseal on one credential. */
const bothWays = async (hs, age, { identity, size }) => {
  const data = new Uint8Array(size)
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(data.subarray(i, Math.min(size, i + 65536)))
  const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
  const e = new age.Encrypter()
  e.addRecipient(new age.webauthn.WebAuthnRecipient({ identity }))
  const byTypage = await e.encrypt(data)
  const d = new age.Decrypter()
  d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity }))
  const byHs = await hs.encryptByPublicKeyAsync(data, new hs.WebAuthnRecipient({ identity }), { format: 'age' })
  const pool = new hs.WorkerPool({ size: 2 })
  try {
    const byPool = await pool.encrypt(data, { publicKey: new hs.WebAuthnRecipient({ identity }), format: 'age', parallel: size > 4096 })
    const file = await pool.encryptFile(new Blob([data]), { publicKey: new hs.WebAuthnRecipient({ identity }), format: 'age' })
    const fileBytes = new Uint8Array(await file.arrayBuffer())
    const opened = await pool.decryptFile(new Blob([byTypage]), { privateKey: new hs.WebAuthnIdentity({ identity }) })
    return {
      hsOpensTypage: same(await hs.decryptByPrivateKeyAsync(byTypage, new hs.WebAuthnIdentity({ identity })), data),
      typageOpensHs: same(await d.decrypt(byHs), data),
      typageOpensPool: same(await d.decrypt(byPool), data),
      typageOpensPoolFile: same(await d.decrypt(fileBytes), data),
      poolOpensTypage: same(await pool.decrypt(byTypage, { privateKey: new hs.WebAuthnIdentity({ identity }), parallel: size > 4096 }), data),
      poolFileOpensTypage: same(new Uint8Array(await opened.arrayBuffer()), data),
      stanza: new TextDecoder().decode(byHs.subarray(0, 200)).split('\n')[1],
    }
  } finally {
    pool.terminate()
  }
}

for (const size of [1000, 16 << 20]) {
  test(`typage ⇄ hyperseal on one passkey, ${size} bytes (one-shots, WorkerPool bytes and files)`, async () => {
    const r = await run(bothWays, { identity, size })
    assert.match(r.stanza, /^-> age-encryption\.org\/fido2prf [A-Za-z0-9+/]{22}$/)
    assert.deepEqual(r, {
      hsOpensTypage: true, typageOpensHs: true, typageOpensPool: true, typageOpensPoolFile: true,
      poolOpensTypage: true, poolFileOpensTypage: true, stanza: r.stanza,
    })
  })
}

test('streams: hyperseal\'s encrypt stream opens in typage, typage\'s file through the decrypt stream', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const data = new Uint8Array(3 << 20)
    for (let i = 0; i < data.length; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536))
    const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
    // `n`-byte chunks after a first KiB in 50-byte ones, so the decrypt stream must hold back
    // until the header has arrived.
    const chunks = (bytes, n) => new ReadableStream({
      start (c) {
        for (let i = 0; i < bytes.length;) {
          const step = i < 1024 ? 50 : n
          c.enqueue(bytes.slice(i, i + step))
          i += step
        }
        c.close()
      },
    })
    const collect = async (s) => new Uint8Array(await new Response(s).arrayBuffer())
    const sealed = await collect(hs.encryptStream(chunks(data, 100_000), { publicKey: new hs.WebAuthnRecipient({ identity }), format: 'age' }))
    const d = new age.Decrypter()
    d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity }))
    const e = new age.Encrypter()
    e.addRecipient(new age.webauthn.WebAuthnRecipient({ identity }))
    const byTypage = await e.encrypt(data)
    const opened = await collect(hs.decryptStream(chunks(byTypage, 65536), { privateKey: new hs.WebAuthnIdentity({ identity }) }))
    return { typageOpens: same(await d.decrypt(sealed), data), hsOpens: same(opened, data) }
  }, { identity })
  assert.deepEqual(r, { typageOpens: true, hsOpens: true })
})

test('a second credential cannot open the file, and says so; typage reads hyperseal\'s identity strings and the reverse', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const second = await age.webauthn.createCredential({ keyName: 'typage test' })
    new hs.WebAuthnIdentity({ identity: second }) // hyperseal parses typage's string
    const sealed = await hs.encryptByPublicKeyAsync('only the first', new hs.WebAuthnRecipient({ identity }), { format: 'age' })
    const fail = async (p) => { try { await p; return 'opened' } catch (e) { return { code: e.code, message: e.message } } }
    const d = new age.Decrypter()
    d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity: second }))
    return {
      second: second.startsWith('AGE-PLUGIN-FIDO2PRF-1'),
      oneShot: await fail(hs.decryptByPrivateKeyAsync(sealed, new hs.WebAuthnIdentity({ identity: second }))),
      // Read directly: a Response over an errored stream would replace the error with its own.
      stream: await fail((async () => {
        const reader = hs.decryptStream(new Blob([sealed]).stream(), { privateKey: new hs.WebAuthnIdentity({ identity: second }) }).getReader()
        while (!(await reader.read()).done);
      })()),
      typage: await fail(d.decrypt(sealed)),
    }
  }, { identity })
  assert.equal(r.second, true)
  for (const f of [r.oneShot, r.stream]) {
    assert.equal(f.code, 'ERR_HYPERSEAL_NO_IDENTITY')
    assert.match(f.message, /does not open the file/)
  }
  assert.notEqual(r.typage, 'opened', 'typage agrees')
})

test('a file to a passkey and an X25519 key opens with either, in hyperseal and in typage', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const x = hs.generateKeyPair({ kind: 'x25519' })
    const sealed = await hs.encryptByPublicKeyAsync('either', [new hs.WebAuthnRecipient({ identity }), x.publicKey], { format: 'age' })
    const text = (u8) => new TextDecoder().decode(u8)
    const typage = async (id) => { const d = new age.Decrypter(); d.addIdentity(id); return d.decrypt(sealed, 'text') }
    // typage's file to both opens in hyperseal with either.
    const e = new age.Encrypter()
    e.addRecipient(new age.webauthn.WebAuthnRecipient({ identity }))
    e.addRecipient(x.publicKey)
    const byTypage = await e.encrypt('both')
    return {
      stanzas: text(sealed.subarray(0, 400)).split('\n').filter((l) => l.startsWith('-> ')).map((l) => l.split(' ')[1]),
      withX: text(hs.decryptByPrivateKey(sealed, x.privateKey)),
      withPasskey: text(await hs.decryptByPrivateKeyAsync(sealed, new hs.WebAuthnIdentity({ identity }))),
      // Both given: the passkey is still asked (it cannot know the key string opens), and either opens.
      withBoth: text(await hs.decryptByPrivateKeyAsync(sealed, [x.privateKey, new hs.WebAuthnIdentity({ identity })])),
      typageX: await typage(x.privateKey),
      typagePasskey: await typage(new age.webauthn.WebAuthnIdentity({ identity })),
      hsOpensTypageX: text(hs.decryptByPrivateKey(byTypage, x.privateKey)),
      hsOpensTypagePasskey: text(await hs.decryptByPrivateKeyAsync(byTypage, new hs.WebAuthnIdentity({ identity }))),
    }
  }, { identity })
  assert.deepEqual(r, {
    stanzas: ['age-encryption.org/fido2prf', 'X25519'],
    withX: 'either', withPasskey: 'either', withBoth: 'either', typageX: 'either', typagePasskey: 'either',
    hsOpensTypageX: 'both', hsOpensTypagePasskey: 'both',
  })
})

test('decryptRange opens a range of a File with a passkey, reading the header and the blocks it needs', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const data = new Uint8Array(3 << 20)
    for (let i = 0; i < data.length; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536))
    const e = new age.Encrypter()
    e.addRecipient(new age.webauthn.WebAuthnRecipient({ identity }))
    const byTypage = await e.encrypt(data)
    const got = await hs.decryptRange(new Blob([byTypage]), new hs.WebAuthnIdentity({ identity }), 2_000_000, 100_000)
    return got.length === 100_000 && got.every((v, i) => v === data[2_000_000 + i])
  }, { identity })
  assert.equal(r, true)
})

test('a malformed passkey stanza is ERR_HYPERSEAL_FORMAT; a sync call given a passkey says where it goes', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const sealed = await hs.encryptByPublicKeyAsync('x', new hs.WebAuthnRecipient({ identity }), { format: 'age' })
    const text = new TextDecoder().decode(sealed.subarray(0, 200))
    const nonce = text.split('\n')[1].split(' ')[2]
    const at = sealed.indexOf(nonce.charCodeAt(0), text.indexOf(nonce))
    // A 15-byte nonce (20 base64 characters) where 16 bytes belong.
    const bad = new Uint8Array([...sealed.subarray(0, at), ...new TextEncoder().encode('AAAAAAAAAAAAAAAAAAAA'), ...sealed.subarray(at + nonce.length)])
    const fail = async (f) => { try { await f(); return 'opened' } catch (e) { return { code: e.code, message: e.message } } }
    return {
      malformed: await fail(() => hs.decryptByPrivateKeyAsync(bad, new hs.WebAuthnIdentity({ identity }))),
      sync: await fail(() => hs.encryptByPublicKey('x', new hs.WebAuthnRecipient({ identity }))),
      badIdentity: await fail(() => new hs.WebAuthnIdentity({ identity: identity.slice(0, -1) + (identity.endsWith('Q') ? 'P' : 'Q') })),
    }
  }, { identity })
  assert.equal(r.malformed.code, 'ERR_HYPERSEAL_FORMAT')
  assert.match(r.malformed.message, /nonce must be 16 bytes/)
  assert.equal(r.sync.code, 'ERR_HYPERSEAL_ARGUMENT')
  assert.match(r.sync.message, /asked asynchronously/)
  assert.equal(r.badIdentity.code, 'ERR_HYPERSEAL_KEY')
})

test('re-keying a File: a passkey added to an X25519 and a post-quantum file and removed; only the head is read; the lock-out guard holds', async () => {
  const r = await run(async (hs, age, { identity }) => {
    const fail = async (f) => { try { await f(); return 'ok' } catch (e) { return { code: e.code, message: e.message } } }
    const data = new Uint8Array(1 << 20)
    for (let i = 0; i < data.length; i += 65536) crypto.getRandomValues(data.subarray(i, i + 65536))
    const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i])
    const out = {}
    for (const kind of ['x25519', 'hybrid']) {
      const k = hs.generateKeyPair({ kind })
      const sealed = hs.encryptByPublicKey(data, k.publicKey, { format: 'age' })
      const reads = []
      class Counting extends File { slice (a, b) { reads.push([a, b]); return super.slice(a, b) } }
      const file = new Counting([sealed], 'f.age')
      const added = await hs.rekeyFile(file, k.privateKey, { add: new hs.WebAuthnRecipient({ identity }) })
      const withPasskey = new Uint8Array(await added.blob.arrayBuffer())
      const d = new age.Decrypter()
      d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity }))
      const headerLen = (f) => { const t = new TextDecoder('latin1').decode(f.subarray(0, 16384)); const m = t.indexOf('\n--- '); return t.indexOf('\n', m + 1) + 1 }
      const reads2 = []
      class Counting2 extends File { slice (a, b) { reads2.push([a, b]); return super.slice(a, b) } }
      const removed = await hs.rekeyFile(new Counting2([withPasskey], 'f.age'), k.privateKey, { remove: new hs.WebAuthnIdentity({ identity }) })
      const without = new Uint8Array(await removed.blob.arrayBuffer())
      out[kind] = {
        report: [added.before, added.after, removed.after],
        opensWithPasskey: same(await hs.decryptByPrivateKeyAsync(withPasskey, new hs.WebAuthnIdentity({ identity })), data),
        typageOpens: same(await d.decrypt(withPasskey), data),
        keyStillOpens: same(hs.decryptByPrivateKey(withPasskey, k.privateKey), data),
        payloadKept: same(withPasskey.subarray(headerLen(withPasskey)), sealed.subarray(headerLen(sealed))),
        // Only the head, then the payload's slice from the old header length.
        readsHeadOnly: reads.slice(0, -1).every(([a, b]) => a === 0 && b <= 65536) && reads.at(-1)[0] === headerLen(sealed),
        removedPasskey: await fail(() => hs.decryptByPrivateKeyAsync(without, new hs.WebAuthnIdentity({ identity }))),
        removedKeyOpens: same(hs.decryptByPrivateKey(without, k.privateKey), data),
        reads2HeadOnly: reads2.slice(0, -1).every(([a, b]) => a === 0 && b <= 65536),
      }
      if (kind === 'x25519') {
        // Opened with the passkey, the passkey removed: nothing it was opened with opens it.
        out.lockout = await fail(() => hs.rekeyFile(new Blob([withPasskey]), new hs.WebAuthnIdentity({ identity }), { remove: new hs.WebAuthnIdentity({ identity }) }))
        out.removeOwn = await fail(() => hs.rekeyFile(new Blob([withPasskey]), new hs.WebAuthnIdentity({ identity }), { remove: new hs.WebAuthnIdentity({ identity }), removeOwn: true }))
      }
    }
    return out
  }, { identity })
  for (const kind of ['x25519', 'hybrid']) {
    const t = kind === 'x25519' ? 'X25519' : 'mlkem768x25519'
    assert.deepEqual(r[kind], {
      report: [[t], [t, 'age-encryption.org/fido2prf'], [t]],
      opensWithPasskey: true, typageOpens: true, keyStillOpens: true, payloadKept: true, readsHeadOnly: true,
      removedPasskey: { code: 'ERR_HYPERSEAL_NO_IDENTITY', message: r[kind].removedPasskey.message },
      removedKeyOpens: true, reads2HeadOnly: true,
    }, kind)
  }
  assert.equal(r.lockout.code, 'ERR_HYPERSEAL_ARGUMENT')
  assert.match(r.lockout.message, /could not open it again/)
  assert.equal(r.removeOwn, 'ok')
})

test('the README\'s passkey page works as written: a passkey made, a file sealed to it and opened', async () => {
  const md = readFileSync(join(PKG_ROOT, 'README.md'), 'utf8')
  const html = md.match(/## Passkeys[\s\S]*?```html\n([\s\S]*?)```/)[1].replace("from 'hyperseal'", "from '/js/index.js'")
  const base = h.server.url.replace('127.0.0.1', 'localhost')
  const p = await h.context.newPage()
  try {
    await p.route(`${base}/readme-passkeys.html`, (r) => r.fulfill({ body: html, contentType: 'text/html' }))
    await p.goto(`${base}/readme-passkeys.html`)
    const c = await h.context.newCDPSession(p)
    await c.send('WebAuthn.enable')
    await c.send('WebAuthn.addVirtualAuthenticator', { options: AUTHENTICATOR })
    await p.evaluate(() => localStorage.removeItem('passkey'))
    await p.click('#make')
    await p.waitForFunction(() => localStorage.getItem('passkey')?.startsWith('AGE-PLUGIN-FIDO2PRF-1'))
    const saved = async () => {
      await p.waitForSelector('#out:not([hidden])')
      const [href, name] = [await p.getAttribute('#out', 'href'), await p.getAttribute('#out', 'download')]
      await p.evaluate(() => { document.getElementById('out').hidden = true })
      return { name, bytes: Buffer.from(await p.evaluate(async (u) => Array.from(new Uint8Array(await (await fetch(u)).arrayBuffer())), href)) }
    }
    await p.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('a page secret') })
    await p.click('#seal')
    const sealed = await saved()
    assert.equal(sealed.name, 'notes.txt.age')
    assert.match(sealed.bytes.subarray(0, 100).toString(), /^age-encryption\.org\/v1\n-> age-encryption\.org\/fido2prf /)
    await p.setInputFiles('#file', { name: 'notes.txt.age', mimeType: 'application/octet-stream', buffer: sealed.bytes })
    await p.click('#open')
    const opened = await saved()
    assert.deepEqual({ name: opened.name, text: opened.bytes.toString() }, { name: 'notes.txt', text: 'a page secret' })
  } finally {
    await p.close()
  }
})

test('a refused prompt (user verification fails) is ERR_HYPERSEAL_KEY, with the DOMException as its cause', async () => {
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: false })
  try {
    const r = await run(async (hs, age, { identity }) => {
      const attempt = hs.encryptByPublicKeyAsync('x', new hs.WebAuthnRecipient({ identity }), { format: 'age' })
        .then(() => 'sealed', (e) => ({ code: e.code, message: e.message, cause: e.cause?.name }))
      return Promise.race([attempt, new Promise((resolve) => setTimeout(() => resolve('no answer in 30 s'), 30_000))])
    }, { identity })
    assert.equal(r.code, 'ERR_HYPERSEAL_KEY', JSON.stringify(r))
    assert.match(r.message, /cancelled, timed out, or found no matching credential/)
    assert.equal(r.cause, 'NotAllowedError')
  } finally {
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator, isUserVerified: true })
  }
})

test('an authenticator without PRF gives the clear error (ERR_HYPERSEAL_KEY)', async () => {
  await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: authenticator })
  authenticator = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...AUTHENTICATOR, hasPrf: false } })).authenticatorId
  const r = await run(async (hs) => {
    const fail = async (f) => { try { await f(); return 'ok' } catch (e) { return { code: e.code, message: e.message } } }
    return { create: await fail(() => hs.createCredential({ keyName: 'no prf' })) }
  })
  assert.equal(r.create.code, 'ERR_HYPERSEAL_KEY')
  assert.match(r.create.message, /does not support the WebAuthn PRF extension/)
})
