// The measurements, in the page: every implementation gets the same inputs, one at a time on
// the main thread, so the ratios compare like with like. Each figure is the median time per
// call over samples of at least `sampleMs` (small inputs are batched into one sample). Before
// timing, every pair is checked to agree (an age file made by typage opens with hyperseal and
// the reverse; AEAD outputs open with the other library; digests are equal).

const te = new TextEncoder()

function random (n) {
  const a = new Uint8Array(n)
  for (let off = 0; off < n; off += 65536) crypto.getRandomValues(a.subarray(off, Math.min(n, off + 65536)))
  return a
}

const hex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('')
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Median seconds per call of `fn` (sync or async), less the milliseconds `excluded()` counts
 * meanwhile (time spent waiting on an authenticator, where a person is in the loop). Each sample runs the call in doubling runs
 * (1, 2, 4, … calls) until at least `sampleMs` have passed, so the clock is read only a few times
 * per sample and every sample spans far more than its resolution (100 µs in a page that is not
 * cross-origin isolated).
 */
async function time (fn, { sampleMs, samples }, excluded = () => 0) {
  // Each figure starts from a collected heap (Chromium started with --expose-gc): otherwise a row
  // pays for the garbage the rows before it left (16 MB results of every implementation), which
  // V8 then collects concurrently, on the same two CPUs as the code being timed.
  globalThis.gc?.()
  await fn() // warm-up (and JIT / WebAssembly tier-up)
  const per = []
  for (let s = 0; s < samples; s++) {
    let calls = 0
    let elapsed = 0
    const t0 = performance.now()
    const x0 = excluded()
    for (let run = 1; elapsed < sampleMs; run *= 2) {
      for (let i = 0; i < run; i++) await fn()
      calls += run
      elapsed = performance.now() - t0 - (excluded() - x0)
    }
    per.push(elapsed / 1000 / calls)
  }
  per.sort((a, b) => a - b)
  return per[per.length >> 1]
}

/** A nonce that never repeats within a run (noble refuses a reused key + nonce instance). */
function nonces (len) {
  const n = new Uint8Array(len)
  const view = new DataView(n.buffer)
  let i = 0
  return () => { view.setUint32(0, ++i); return n.slice() }
}

export async function run (hs, peers, { sizes, poolSizes = sizes, groups, smallSize = 50, tokenChars = 1000, sampleMs = 100, samples = 5, authenticator = false }) {
  const on = (g) => !groups || groups.includes(g)
  const rows = []
  const t = { sampleMs, samples }
  const add = (group, size, impl, op, seconds) => rows.push({ group, size, impl, op, seconds })
  const checks = {}

  // ── age files: hyperseal vs typage, X25519, the same file both ways ──
  const ageId = await peers.age.generateX25519Identity()
  const ageRecipient = await peers.age.identityToRecipient(ageId)
  // One key pair for both: typage's identity is an ordinary age X25519 key, which hyperseal reads.
  const hsPair = { publicKey: ageRecipient, privateKey: ageId }
  for (const size of on('age') ? sizes : []) {
    const data = random(size)
    const enc = new peers.age.Encrypter(); enc.addRecipient(ageRecipient)
    const dec = new peers.age.Decrypter(); dec.addIdentity(ageId)
    const byTypage = await enc.encrypt(data)
    const byHs = hs.encryptByPublicKey(data, hsPair.publicKey, { format: 'age' })
    checks[`age ${size}`] = equal(hs.decryptByPrivateKey(byTypage, hsPair.privateKey), data) && equal(await dec.decrypt(byHs), data)
    add('age file', size, 'hyperseal', 'encrypt', await time(() => hs.encryptByPublicKey(data, hsPair.publicKey, { format: 'age' }), t))
    add('age file', size, 'hyperseal', 'decrypt', await time(() => hs.decryptByPrivateKey(byHs, hsPair.privateKey), t))
    // The same through typage's API (`hyperseal/age`): a new Encrypter / Decrypter per call, as typage is timed.
    const ageApi = peers.hsAge
    if (ageApi) {
      const encApi = () => { const e = new ageApi.Encrypter(); e.addRecipient(ageRecipient); return e.encrypt(data) }
      const decApi = () => { const d = new ageApi.Decrypter(); d.addIdentity(ageId); return d.decrypt(byTypage) }
      checks[`age ${size} (hyperseal/age)`] = equal(await dec.decrypt(await encApi()), data) && equal(await decApi(), data)
      add('age file', size, 'hyperseal/age (typage API)', 'encrypt', await time(encApi, t))
      add('age file', size, 'hyperseal/age (typage API)', 'decrypt', await time(decApi, t))
    }
    add('age file', size, 'age-encryption (typage)', 'encrypt', await time(() => enc.encrypt(data), t))
    add('age file', size, 'age-encryption (typage)', 'decrypt', await time(() => dec.decrypt(byTypage), t))
  }

  // ── age files to a passkey: hyperseal vs typage on one credential of the page's (virtual)
  // authenticator, the same file both ways; the time spent in navigator.credentials.get is not
  // counted (a person is in that loop), so both rows time the file's own work ──
  if (on('passkey') && authenticator) {
    const identity = await hs.createCredential({ keyName: 'bench' })
    let asked = 0
    const get = navigator.credentials.get.bind(navigator.credentials)
    navigator.credentials.get = async (o) => { const t0 = performance.now(); try { return await get(o) } finally { asked += performance.now() - t0 } }
    const excluded = () => asked
    const g = 'age file to a passkey (authenticator excluded)'
    for (const size of sizes.slice(-1)) {
      const data = random(size)
      const enc = new peers.age.Encrypter(); enc.addRecipient(new peers.age.webauthn.WebAuthnRecipient({ identity }))
      const dec = new peers.age.Decrypter(); dec.addIdentity(new peers.age.webauthn.WebAuthnIdentity({ identity }))
      const to = () => new hs.WebAuthnRecipient({ identity })
      const me = () => new hs.WebAuthnIdentity({ identity })
      const byTypage = await enc.encrypt(data)
      const byHs = await hs.encryptByPublicKeyAsync(data, to(), { format: 'age' })
      checks[`passkey ${size}`] = equal(await hs.decryptByPrivateKeyAsync(byTypage, me()), data) && equal(await dec.decrypt(byHs), data)
      add(g, size, 'hyperseal', 'encrypt', await time(() => hs.encryptByPublicKeyAsync(data, to(), { format: 'age' }), t, excluded))
      add(g, size, 'hyperseal', 'decrypt', await time(() => hs.decryptByPrivateKeyAsync(byHs, me()), t, excluded))
      add(g, size, 'age-encryption (typage)', 'encrypt', await time(() => enc.encrypt(data), t, excluded))
      add(g, size, 'age-encryption (typage)', 'decrypt', await time(() => dec.decrypt(byTypage), t, excluded))
    }
    navigator.credentials.get = get
  }

  // ── bytes on every core: WorkerPool.encrypt/decrypt (parts across a warm pool above its
  // crossover, one stream on the main thread below it) against one stream on the main thread,
  // the same age file; "parts always" forces parts at every size, which shows the crossover ──
  if (on('pool')) {
    const pool = new hs.WorkerPool()
    await pool.ready() // warm: workers started and their WebAssembly loaded, as a page reuses them
    const g = 'bytes, WorkerPool vs one stream'
    const opts = { publicKey: hsPair.publicKey, format: 'age' }
    const dec = new peers.age.Decrypter(); dec.addIdentity(ageId)
    for (const size of poolSizes) {
      const data = random(size)
      const sealed = await pool.encrypt(data, { ...opts, parallel: true })
      checks[`pool bytes ${size}`] = equal(hs.decryptByPrivateKey(sealed, hsPair.privateKey), data) &&
        equal(await dec.decrypt(sealed), data) &&
        equal(await pool.decrypt(hs.encryptByPublicKey(data, hsPair.publicKey, { format: 'age' }), { ...hsPair, parallel: true }), data)
      const name = `hyperseal WorkerPool.encrypt/decrypt (${pool.size} workers)`
      add(g, size, name, 'encrypt', await time(() => pool.encrypt(data, opts), t))
      add(g, size, name, 'decrypt', await time(() => pool.decrypt(sealed, hsPair), t))
      add(g, size, 'WorkerPool, parts always (parallel: true)', 'encrypt', await time(() => pool.encrypt(data, { ...opts, parallel: true }), t))
      add(g, size, 'WorkerPool, parts always (parallel: true)', 'decrypt', await time(() => pool.decrypt(sealed, { ...hsPair, parallel: true }), t))
      add(g, size, 'one stream, main thread (encryptByPublicKey)', 'encrypt', await time(() => hs.encryptByPublicKey(data, hsPair.publicKey, { format: 'age' }), t))
      add(g, size, 'one stream, main thread (decryptByPrivateKey)', 'decrypt', await time(() => hs.decryptByPrivateKey(sealed, hsPair.privateKey), t))
    }
    pool.terminate()
  }

  // ── files on every core: WorkerPool (parts across workers; hyperseal files' AES-256-GCM on
  // WebCrypto) against typage on the same age file, at the two largest sizes ──
  if (on('pool')) {
    const pool = new hs.WorkerPool()
    await Promise.all(Array.from({ length: pool.size }, () => pool.run('errorCodes'))) // workers loaded
    for (const size of sizes.slice(-2)) {
      const data = random(size)
      const blob = new Blob([data])
      const dec = new peers.age.Decrypter(); dec.addIdentity(ageId)
      const enc = new peers.age.Encrypter(); enc.addRecipient(ageRecipient)
      const byPool = await pool.encryptFile(blob, { publicKey: hsPair.publicKey, format: 'age' })
      const hsFile = await pool.encryptFile(blob, { publicKey: hsPair.publicKey })
      checks[`pool age ${size}`] = equal(await dec.decrypt(new Uint8Array(await byPool.arrayBuffer())), data)
      checks[`pool hyperseal ${size}`] = equal(new Uint8Array(await (await pool.decryptFile(hsFile, hsPair)).arrayBuffer()), data)
      const g = 'file, all cores'
      add(g, size, `hyperseal WorkerPool, age (${pool.size} workers)`, 'encrypt', await time(() => pool.encryptFile(blob, { publicKey: hsPair.publicKey, format: 'age' }), t))
      add(g, size, `hyperseal WorkerPool, age (${pool.size} workers)`, 'decrypt', await time(() => pool.decryptFile(byPool, hsPair), t))
      add(g, size, 'hyperseal WorkerPool, hyperseal (WebCrypto AES-256-GCM)', 'encrypt', await time(() => pool.encryptFile(blob, { publicKey: hsPair.publicKey }), t))
      add(g, size, 'hyperseal WorkerPool, hyperseal (WebCrypto AES-256-GCM)', 'decrypt', await time(() => pool.decryptFile(hsFile, hsPair), t))
      add(g, size, 'hyperseal WorkerPool, one worker streaming (parallel: false)', 'encrypt', await time(() => pool.encryptFile(blob, { publicKey: hsPair.publicKey, format: 'age', parallel: false }), t))
      add(g, size, 'age-encryption (typage), main thread', 'encrypt', await time(() => enc.encrypt(data), t))
      const byTypage = await enc.encrypt(data)
      add(g, size, 'age-encryption (typage), main thread', 'decrypt', await time(() => dec.decrypt(byTypage), t))
    }
    pool.terminate()
  }

  // ── bulk AEAD: ChaCha20-Poly1305 and AES-256-GCM ──
  const key = random(32)
  if (groups && !groups.includes('aead')) return { rows, checks }
  const wcKey = await crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt'])
  const next = nonces(12)
  for (const size of sizes) {
    const data = random(size)
    const n = next()
    const nobleBox = peers.chacha20poly1305(key, n).encrypt(data)
    checks[`chacha ${size}`] = equal(hs.aeadOpen('chacha20-poly1305', key, concat(n, nobleBox)), data)
    add('chacha20-poly1305', size, 'hyperseal aead', 'seal', await time(() => hs.aeadSeal('chacha20-poly1305', key, data), t))
    add('chacha20-poly1305', size, '@noble/ciphers', 'seal', await time(() => peers.chacha20poly1305(key, next()).encrypt(data), t))
    // Both again with the result written into an array the caller reuses: no fresh result
    // memory per call (its page faults are a third of a 16 MB seal here).
    const hsOut = new Uint8Array(12 + size + 16)
    const nobleOut = new Uint8Array(size + 16)
    checks[`chacha into ${size}`] = equal(hs.aeadOpen('chacha20-poly1305', key, hsOut.subarray(0, hs.aead.sealInto('chacha20-poly1305', key, data, hsOut))), data)
    add('chacha20-poly1305, into a reused array', size, 'hyperseal aead.sealInto', 'seal', await time(() => hs.aead.sealInto('chacha20-poly1305', key, data, hsOut), t))
    add('chacha20-poly1305, into a reused array', size, '@noble/ciphers encrypt(data, output)', 'seal', await time(() => peers.chacha20poly1305(key, next()).encrypt(data, nobleOut), t))
    const gcmBox = peers.gcm(key, n).encrypt(data)
    checks[`gcm ${size}`] = equal(hs.aeadOpen('aes-256-gcm', key, concat(n, gcmBox)), data)
    add('aes-256-gcm', size, 'hyperseal aead', 'seal', await time(() => hs.aeadSeal('aes-256-gcm', key, data), t))
    add('aes-256-gcm', size, '@noble/ciphers', 'seal', await time(() => peers.gcm(key, next()).encrypt(data), t))
    add('aes-256-gcm', size, 'WebCrypto (crypto.subtle)', 'seal', await time(() => crypto.subtle.encrypt({ name: 'AES-GCM', iv: next() }, wcKey, data), t))
  }

  // ── hashes: SHA-256 and BLAKE3 ──
  for (const size of sizes) {
    const data = random(size)
    checks[`sha256 ${size}`] = hex(hs.hash('sha256', data)) === await peers.hwSha256(data)
    checks[`blake3 ${size}`] = hex(hs.hash('blake3', data)) === await peers.hwBlake3(data)
    add('sha-256', size, 'hyperseal hash', 'digest', await time(() => hs.hash('sha256', data), t))
    add('sha-256', size, 'hash-wasm', 'digest', await time(() => peers.hwSha256(data), t))
    add('sha-256', size, 'WebCrypto (crypto.subtle)', 'digest', await time(() => crypto.subtle.digest('SHA-256', data), t))
    add('blake3', size, 'hyperseal hash', 'digest', await time(() => hs.hash('blake3', data), t))
    add('blake3', size, 'hash-wasm', 'digest', await time(() => peers.hwBlake3(data), t))
  }

  // ── @ldesign/crypto's small messages: AES-256 and SHA-256 of 50 bytes ──
  {
    const msg = random(smallSize)
    const text = hex(msg).slice(0, smallSize)
    const { CryptoJS, forge } = peers
    const cjKey = CryptoJS.lib.WordArray.create(key)
    const cjIv = CryptoJS.lib.WordArray.create(random(16))
    const fKey = forge.util.createBuffer(String.fromCharCode(...key)).getBytes()
    const forgeGcm = () => {
      const c = forge.cipher.createCipher('AES-GCM', fKey)
      c.start({ iv: String.fromCharCode(...next()) })
      c.update(forge.util.createBuffer(text))
      c.finish()
      return c.output.getBytes() + c.mode.tag.getBytes()
    }
    checks.small = hex(hs.hash('sha256', te.encode(text))) === CryptoJS.SHA256(text).toString()
    add('50-byte messages', smallSize, 'hyperseal aead (aes-256-gcm)', 'seal', await time(() => hs.aeadSeal('aes-256-gcm', key, text), t))
    add('50-byte messages', smallSize, 'crypto-js AES-256-CBC', 'seal', await time(() => CryptoJS.AES.encrypt(text, cjKey, { iv: cjIv }).toString(), t))
    add('50-byte messages', smallSize, 'node-forge AES-256-GCM', 'seal', await time(forgeGcm, t))
    add('50-byte messages', smallSize, 'WebCrypto (crypto.subtle)', 'seal', await time(() => crypto.subtle.encrypt({ name: 'AES-GCM', iv: next() }, wcKey, msg), t))
    add('50-byte messages', smallSize, 'hyperseal hash (sha256)', 'digest', await time(() => hs.hash('sha256', text), t))
    add('50-byte messages', smallSize, 'crypto-js SHA256', 'digest', await time(() => CryptoJS.SHA256(text).toString(), t))
    add('50-byte messages', smallSize, 'node-forge sha256', 'digest', await time(() => { const md = forge.md.sha256.create(); md.update(text); return md.digest().toHex() }, t))
  }

  // ── tokens: seal + open of a 1000-character message ──
  {
    const tokenKey = hs.token.generateKey()
    const text = 'x'.repeat(tokenChars)
    checks.token = new TextDecoder().decode(hs.token.open(tokenKey, hs.token.seal(tokenKey, text))) === text
    add('token', tokenChars, 'hyperseal token', 'seal+open', await time(() => hs.token.open(tokenKey, hs.token.seal(tokenKey, text)), t))
  }
  return { rows, checks }
}

function concat (a, b) {
  const out = new Uint8Array(a.length + b.length)
  out.set(a); out.set(b, a.length)
  return out
}
