'use strict'
// npm run bench [-- --full] [-- --json FILE] [-- --quick]
// Side by side in one process: the Node hybrid library's design (tweetnacl box sync, WebCrypto AES-GCM hybrid
// async) vs hyperseal sync and async, 1 KB … 100 MB (500 MB with --full): time per call, MB/s,
// expansion; plus Node's own single-call AES-256-GCM at 100 MB. Markdown to stdout, JSON to
// --json FILE (read by `hyperseal-bench`, `make bench`, for its `node` table). Also a toolkit row:
// token seal+open of 1 KB from JS beside FISE's published 0.32 ms (`--tokens` runs only that).
// `--age` runs bench/age.mjs only: hyperseal/age against typage and the own API, 1 and 16 MB.
const fs = require('node:fs')
const os = require('node:os')
const crypto = require('node:crypto')
const hs = require('..')
const lib = require('./node-hybrid-lib')

const args = process.argv.slice(2)
const full = args.includes('--full')
const quick = args.includes('--quick')
const jsonAt = args.indexOf('--json')
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : null
const kind = args.includes('--x25519') ? 'x25519' : 'hybrid'

const KB = 1024
const MB = 1024 * KB
const SIZES = [KB, 10 * KB, 100 * KB, MB, 10 * MB, 100 * MB, ...(full ? [500 * MB] : [])]
const LABEL = (n) => (n >= MB ? `${n / MB} MB` : `${n / KB} KB`)

/** Best-of-runs per-call time in ms: small sizes loop until ~budget ms, big ones run a few times. */
async function time (fn, size) {
  const budget = quick ? 60 : 250
  const runs = size >= 100 * MB ? (quick ? 1 : 3) : size >= 10 * MB ? (quick ? 2 : 5) : 3
  let best = Infinity
  await fn() // warm-up (JIT, key caches, page faults of the first output)
  for (let r = 0; r < runs; r++) {
    let n = 0
    const t0 = performance.now()
    do { await fn(); n++ } while (performance.now() - t0 < budget / runs && size < MB)
    best = Math.min(best, (performance.now() - t0) / n)
  }
  return best
}

/** Toolkit tokens: 1000-byte seal+open from JS (best of 5 runs of 20000), in µs. */
function tokenBench () {
  const key = hs.token.generateKey()
  const pt = crypto.randomBytes(1000)
  const rows = []
  for (const [label, so, oo] of [['no options', undefined, undefined], ["aad + ttlSeconds", { aad: 'user:42', ttlSeconds: 3600 }, { aad: 'user:42' }]]) {
    for (let i = 0; i < 20000; i++) hs.token.open(key, hs.token.seal(key, pt, so), oo)
    let best = Infinity
    for (let r = 0; r < 5; r++) {
      const n = quick ? 5000 : 20000
      const t0 = performance.now()
      for (let i = 0; i < n; i++) hs.token.open(key, hs.token.seal(key, pt, so), oo)
      best = Math.min(best, ((performance.now() - t0) * 1000) / n)
    }
    rows.push({ label, us: best, tokenChars: hs.token.seal(key, pt, so).length })
  }
  return rows
}

function printTokens (rows) {
  console.log('### Toolkit tokens: 1 KB (1000 bytes) seal + open, from JS\n')
  console.log('| | seal+open | vs FISE |')
  console.log('|---|---|---|')
  for (const r of rows) console.log(`| hyperseal token.seal + token.open (${r.label}, ${r.tokenChars}-char token) | ${r.us.toFixed(2)} µs | ${(320 / r.us).toFixed(0)}× faster |`)
  console.log('| FISE (published, another machine, unauthenticated) | 320 µs (0.32 ms) | – |')
  console.log('')
}

async function main () {
  if (args.includes('--tokens')) return printTokens(tokenBench())
  // hyperseal/age (typage's API) against typage and the own API: bench/age.mjs.
  if (args.includes('--age')) { const age = await import('./age.mjs'); return age.print(await age.run()) }
  const libKey = lib.generateKeyPair()
  const hsKey = hs.generateKeyPair({ kind })
  const impls = [
    { name: 'Node hybrid lib sync (tweetnacl box)', enc: (d) => lib.encryptByPublicKey(d, libKey.publicKey), dec: (c) => lib.decryptByPrivateKey(c, libKey.privateKey), maxSize: full ? 500 * MB : 100 * MB },
    { name: 'Node hybrid lib async (box + WebCrypto AES-GCM)', enc: (d) => lib.encryptByPublicKeyAsync(d, libKey.publicKey), dec: (c) => lib.decryptByPrivateKeyAsync(c, libKey.privateKey) },
    { name: `hyperseal sync (${kind})`, enc: (d) => hs.encryptByPublicKey(d, hsKey.publicKey), dec: (c) => hs.decryptByPrivateKey(c, hsKey.privateKey) },
    { name: `hyperseal async (${kind})`, enc: (d) => hs.encryptByPublicKeyAsync(d, hsKey.publicKey), dec: (c) => hs.decryptByPrivateKeyAsync(c, hsKey.privateKey) },
  ]
  const rows = []
  for (const size of SIZES) {
    const data = crypto.randomBytes(size)
    for (const impl of impls) {
      if (impl.maxSize && size > impl.maxSize) continue
      const sealed = await impl.enc(data)
      const back = await impl.dec(sealed)
      if (!Buffer.from(back).equals(data)) throw new Error(`${impl.name}: round trip failed at ${size}`)
      const encMs = await time(() => impl.enc(data), size)
      const decMs = await time(() => impl.dec(sealed), size)
      const row = { size, impl: impl.name, encMs, decMs, encMBs: size / MB / (encMs / 1000), decMBs: size / MB / (decMs / 1000), expansion: (sealed.length / size) * 100 }
      rows.push(row)
      process.stderr.write(`${LABEL(size).padEnd(7)} ${impl.name.padEnd(42)} enc ${encMs.toFixed(3).padStart(9)} ms  dec ${decMs.toFixed(3).padStart(9)} ms\n`)
    }
  }
  // Node's own AES-256-GCM, one call over 100 MB (no key exchange, no chunking): the ceiling of
  // what a single-threaded, single-shot design can do in Node.
  const big = crypto.randomBytes(100 * MB)
  const key = crypto.randomBytes(32)
  const iv = crypto.randomBytes(12)
  const nodeGcm = await time(() => { const c = crypto.createCipheriv('aes-256-gcm', key, iv); c.update(big); c.final(); c.getAuthTag() }, big.length)
  const nodeGcmOut = await time(() => { const c = crypto.createCipheriv('aes-256-gcm', key, iv); Buffer.concat([c.update(big), c.final()]); c.getAuthTag() }, big.length)

  const tokens = tokenBench()
  const env = { node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, date: new Date().toISOString(), kind }
  print(rows, env, nodeGcm, nodeGcmOut)
  printTokens(tokens)
  if (jsonFile) {
    fs.writeFileSync(jsonFile, JSON.stringify({ bench: 'node', env, rows, nodeAes256Gcm100MB: { ms: nodeGcm, msWithConcat: nodeGcmOut }, tokens1KB: tokens.map((t) => ({ ...t, fiseUs: 320 })) }, null, 2) + '\n')
    process.stderr.write(`wrote ${jsonFile}\n`)
  }
}

function print (rows, env, nodeGcm, nodeGcmOut) {
  const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
  const get = (size, prefix) => rows.find((r) => r.size === size && r.impl.startsWith(prefix))
  console.log(`## hyperseal Node bindings vs the Node hybrid library (${env.node}, ${env.cpus}× ${env.cpu}, ${env.kind} keys)\n`)
  for (const op of ['enc', 'dec']) {
    console.log(`### ${op === 'enc' ? 'Encrypt' : 'Decrypt'}\n`)
    console.log('| size | lib sync | lib async | hyperseal sync | hyperseal async | lib sync MB/s | lib async MB/s | hs sync MB/s | hs async MB/s | hs async vs lib sync | hs async vs lib async |')
    console.log('|---|---|---|---|---|---|---|---|---|---|---|')
    for (const size of new Set(rows.map((r) => r.size))) {
      const [a, b, c, d] = ['Node hybrid lib sync', 'Node hybrid lib async', 'hyperseal sync', 'hyperseal async'].map((p) => get(size, p))
      const ms = (r) => (r ? `${f(r[op + 'Ms'])} ms` : '–')
      const mbs = (r) => (r ? f(r[op + 'MBs']) : '–')
      const ratio = (x, y) => (x && y ? `${(y[op + 'Ms'] / x[op + 'Ms']).toFixed(1)}×` : '–')
      console.log(`| ${LABEL(size)} | ${ms(a)} | ${ms(b)} | ${ms(c)} | ${ms(d)} | ${mbs(a)} | ${mbs(b)} | ${mbs(c)} | ${mbs(d)} | ${ratio(d, a)} | ${ratio(d, b)} |`)
    }
    console.log('')
  }
  console.log('### Expansion (ciphertext / plaintext)\n')
  console.log('| size | lib sync | lib async | hyperseal |')
  console.log('|---|---|---|---|')
  for (const size of new Set(rows.map((r) => r.size))) {
    const [a, b, c] = ['Node hybrid lib sync', 'Node hybrid lib async', 'hyperseal async'].map((p) => get(size, p))
    const e = (r) => (r ? `${r.expansion.toFixed(2)}%` : '–')
    console.log(`| ${LABEL(size)} | ${e(a)} | ${e(b)} | ${e(c)} |`)
  }
  const hs100 = get(100 * MB, 'hyperseal async')
  console.log(`\n### 100 MB against Node's own single-call AES-256-GCM\n`)
  console.log('| | ms | MB/s | hyperseal async encrypt is |')
  console.log('|---|---|---|---|')
  console.log(`| node crypto aes-256-gcm (update, no output copy) | ${f(nodeGcm)} | ${f(100 / (nodeGcm / 1000))} | ${(nodeGcm / hs100.encMs).toFixed(2)}× faster |`)
  console.log(`| node crypto aes-256-gcm (+ Buffer.concat output) | ${f(nodeGcmOut)} | ${f(100 / (nodeGcmOut / 1000))} | ${(nodeGcmOut / hs100.encMs).toFixed(2)}× faster |`)
  console.log(`| hyperseal encryptByPublicKeyAsync (${env.kind}, key exchange included) | ${f(hs100.encMs)} | ${f(hs100.encMBs)} | – |`)
}

main().catch((e) => { console.error(e); process.exit(1) })
