'use strict'
// npm run bench:ldesign [-- --quick] [-- --json FILE]
// @ldesign/crypto's table, in one Node process on this machine: 50-byte messages through AES-256-CBC,
// AES-256-GCM, SHA-256, HMAC-SHA-256 and RSA-2048 (sign, verify, OAEP encrypt/decrypt, keygen)
// in hyperseal (native addon) vs crypto-js, node-forge and Node's own crypto; ops/s and the ratio
// of hyperseal to the fastest JS option. Then 10 MB / 100 MB file encryption, each in a fresh
// child process so its peak RSS is its own: hyperseal encryptFile vs a Node crypto AES-256-GCM
// stream pipeline (and crypto-js / node-forge in memory at 10 MB, as @ldesign/crypto's report does).
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawnSync } = require('node:child_process')

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const jsonAt = args.indexOf('--json')
const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : null

/** Median ops/s over 5 samples of a ~budget ms loop. */
function opsPerSec (fn) {
  const budget = quick ? 40 : 150
  fn()
  const samples = []
  for (let s = 0; s < 5; s++) {
    let n = 0
    const t0 = performance.now()
    do { fn(); n++ } while (performance.now() - t0 < budget)
    samples.push(n / ((performance.now() - t0) / 1000))
  }
  return samples.sort((a, b) => a - b)[2]
}

function operations () {
  const hs = require('..')
  const CryptoJS = require('crypto-js')
  const forge = require('node-forge')
  const msg = Buffer.from('The quick brown fox jumps over the lazy dog 123456') // 50 bytes
  const key = crypto.randomBytes(32)
  const iv = crypto.randomBytes(16)
  const nonce = crypto.randomBytes(12)
  const keyWA = CryptoJS.lib.WordArray.create(key)
  const ivWA = CryptoJS.lib.WordArray.create(iv)
  const msgWA = CryptoJS.lib.WordArray.create(msg)
  const fKey = forge.util.createBuffer(key.toString('binary')).getBytes()
  const fIv = iv.toString('binary')
  const fMsg = msg.toString('binary')

  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  const privPem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' })
  const pubPem = rsa.publicKey.export({ type: 'spki', format: 'pem' })
  const fPriv = forge.pki.privateKeyFromPem(privPem)
  const fPub = forge.pki.publicKeyFromPem(pubPem)
  const hsSig = hs.sign.sign(privPem, msg)
  const nodeSig = crypto.sign('sha256', msg, { key: rsa.privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
  const fPss = () => forge.pss.create({ md: forge.md.sha256.create(), mgf: forge.mgf.mgf1.create(forge.md.sha256.create()), saltLength: 32 })
  const fSig = fPriv.sign(forge.md.sha256.create().update(fMsg), fPss())
  const hsCt = hs.rsa.encrypt(pubPem, msg)
  const nodeCt = crypto.publicEncrypt({ key: rsa.publicKey, oaepHash: 'sha256' }, msg)
  const fCt = fPub.encrypt(fMsg, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha256.create() } })

  const rows = [
    ['AES-256-CBC encrypt', {
      hyperseal: () => hs.hazmat.encrypt('aes-256-cbc', key, iv, msg),
      'crypto-js': () => CryptoJS.AES.encrypt(msgWA, keyWA, { iv: ivWA, mode: CryptoJS.mode.CBC, padding: CryptoJS.pad.Pkcs7 }),
      'node-forge': () => { const c = forge.cipher.createCipher('AES-CBC', fKey); c.start({ iv: fIv }); c.update(forge.util.createBuffer(fMsg)); c.finish(); return c.output },
      'node crypto': () => { const c = crypto.createCipheriv('aes-256-cbc', key, iv); return Buffer.concat([c.update(msg), c.final()]) },
    }],
    ['AES-256-GCM seal', {
      hyperseal: () => hs.aead.seal('aes-256-gcm', key, msg),
      'node-forge': () => { const c = forge.cipher.createCipher('AES-GCM', fKey); c.start({ iv: nonce.toString('binary') }); c.update(forge.util.createBuffer(fMsg)); c.finish(); return c.mode.tag },
      'node crypto': () => { const c = crypto.createCipheriv('aes-256-gcm', key, crypto.randomBytes(12)); return [c.update(msg), c.final(), c.getAuthTag()] },
    }],
    ['SHA-256', {
      hyperseal: () => hs.hash('sha256', msg),
      'crypto-js': () => CryptoJS.SHA256(msgWA),
      'node-forge': () => forge.md.sha256.create().update(fMsg).digest(),
      'node crypto': () => crypto.createHash('sha256').update(msg).digest(),
    }],
    ['HMAC-SHA-256', {
      hyperseal: () => hs.hmac('hmac-sha256', key, msg),
      'crypto-js': () => CryptoJS.HmacSHA256(msgWA, keyWA),
      'node-forge': () => { const h = forge.hmac.create(); h.start('sha256', fKey); h.update(fMsg); return h.digest() },
      'node crypto': () => crypto.createHmac('sha256', key).update(msg).digest(),
    }],
    ['RSA-2048 PSS sign', {
      hyperseal: () => hs.sign.sign(privPem, msg),
      'node-forge': () => fPriv.sign(forge.md.sha256.create().update(fMsg), fPss()),
      'node crypto': () => crypto.sign('sha256', msg, { key: rsa.privateKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }),
    }],
    ['RSA-2048 PSS verify', {
      hyperseal: () => hs.sign.verify(pubPem, msg, hsSig),
      'node-forge': () => fPub.verify(forge.md.sha256.create().update(fMsg).digest().getBytes(), fSig, fPss()),
      'node crypto': () => crypto.verify('sha256', msg, { key: rsa.publicKey, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, nodeSig),
    }],
    ['RSA-2048 OAEP encrypt', {
      hyperseal: () => hs.rsa.encrypt(pubPem, msg),
      'node-forge': () => fPub.encrypt(fMsg, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha256.create() } }),
      'node crypto': () => crypto.publicEncrypt({ key: rsa.publicKey, oaepHash: 'sha256' }, msg),
    }],
    ['RSA-2048 OAEP decrypt', {
      hyperseal: () => hs.rsa.decrypt(privPem, hsCt),
      'node-forge': () => fPriv.decrypt(fCt, 'RSA-OAEP', { md: forge.md.sha256.create(), mgf1: { md: forge.md.sha256.create() } }),
      'node crypto': () => crypto.privateDecrypt({ key: rsa.privateKey, oaepHash: 'sha256' }, nodeCt),
    }],
  ]
  const out = []
  for (const [op, impls] of rows) {
    const r = { op }
    for (const [name, fn] of Object.entries(impls)) r[name] = opsPerSec(fn)
    const peers = Object.entries(r).filter(([k]) => k !== 'op' && k !== 'hyperseal')
    const [bestName, best] = peers.sort((a, b) => b[1] - a[1])[0]
    r.fastestPeer = bestName
    r.ratio = r.hyperseal / best
    out.push(r)
    process.stderr.write(`${op.padEnd(24)} hyperseal ${r.hyperseal.toFixed(0).padStart(9)} ops/s, fastest JS: ${bestName} ${best.toFixed(0)}\n`)
  }
  // Key generation: a few runs each (forge's pure-JS keygen takes seconds).
  const keygen = (fn, n) => { const t0 = performance.now(); for (let i = 0; i < n; i++) fn(); return n / ((performance.now() - t0) / 1000) }
  const kg = { op: 'RSA-2048 keygen' }
  kg.hyperseal = keygen(() => hs.sign.generateKeyPair('rsa2048'), quick ? 2 : 5)
  kg['node crypto'] = keygen(() => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }), quick ? 2 : 5)
  kg['node-forge'] = keygen(() => forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 }), 1)
  const [kgBest, kgBestV] = [['node crypto', kg['node crypto']], ['node-forge', kg['node-forge']]].sort((a, b) => b[1] - a[1])[0]
  kg.fastestPeer = kgBest
  kg.ratio = kg.hyperseal / kgBestV
  out.push(kg)
  return out
}

/** Runs in a child: encrypt one file with one implementation; prints { ms, maxRssMiB }. */
function child (impl, size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hs-ldesign-'))
  const src = path.join(dir, 'in')
  const dst = path.join(dir, 'out')
  const chunk = crypto.randomBytes(1 << 20)
  const fd = fs.openSync(src, 'w')
  for (let i = 0; i < size; i += chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, size - i))
  fs.closeSync(fd)
  const key = crypto.randomBytes(32)
  const iv = crypto.randomBytes(16)
  const base = process.resourceUsage().maxRSS
  const t0 = performance.now()
  const done = () => {
    const ms = performance.now() - t0
    fs.rmSync(dir, { recursive: true })
    process.stdout.write(JSON.stringify({ ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, baseRssMiB: base / 1024 }))
  }
  if (impl === 'hyperseal') {
    const hs = require('..')
    const { publicKey } = hs.generateKeyPair({ kind: 'x25519' })
    hs.encryptFile(src, dst, { publicKey }).then(done)
  } else if (impl === 'node crypto') {
    const { pipeline } = require('node:stream/promises')
    const c = crypto.createCipheriv('aes-256-gcm', key, iv.subarray(0, 12))
    pipeline(fs.createReadStream(src), c, fs.createWriteStream(dst)).then(done)
  } else if (impl === 'crypto-js') {
    const CryptoJS = require('crypto-js')
    const data = fs.readFileSync(src)
    const ct = CryptoJS.AES.encrypt(CryptoJS.lib.WordArray.create(data), CryptoJS.lib.WordArray.create(key), { iv: CryptoJS.lib.WordArray.create(iv) })
    fs.writeFileSync(dst, ct.toString())
    done()
  } else if (impl === 'node-forge') {
    const forge = require('node-forge')
    const c = forge.cipher.createCipher('AES-GCM', key.toString('binary'))
    c.start({ iv: iv.subarray(0, 12).toString('binary') })
    c.update(forge.util.createBuffer(fs.readFileSync(src).toString('binary')))
    c.finish()
    fs.writeFileSync(dst, Buffer.from(c.output.getBytes(), 'binary'))
    done()
  }
}

function files () {
  const MB = 1 << 20
  const out = []
  for (const size of [10 * MB, 100 * MB]) {
    for (const impl of ['hyperseal', 'node crypto', 'crypto-js', 'node-forge']) {
      if ((impl === 'crypto-js' || impl === 'node-forge') && size > 10 * MB) continue
      const r = spawnSync(process.execPath, [__filename, '--child', impl, String(size)], { encoding: 'utf8', maxBuffer: 1 << 20 })
      if (r.status !== 0) { out.push({ size, impl, error: (r.stderr || '').split('\n')[0] }); continue }
      out.push({ size, impl, ...JSON.parse(r.stdout) })
      process.stderr.write(`file ${size / MB} MB ${impl.padEnd(12)} ${out.at(-1).ms.toFixed(0)} ms, peak RSS ${out.at(-1).maxRssMiB.toFixed(0)} MiB\n`)
    }
  }
  return out
}

function main () {
  if (args[0] === '--child') return child(args[1], Number(args[2]))
  const ops = operations()
  const fileRows = files()
  const fmt = (v) => (v === undefined ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1))
  console.log(`### @ldesign/crypto operations, 50-byte message, ops/s (Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model})\n`)
  console.log('| operation | hyperseal | crypto-js | node-forge | node crypto | hyperseal ÷ fastest JS |')
  console.log('|---|---|---|---|---|---|')
  for (const r of ops) console.log(`| ${r.op} | ${fmt(r.hyperseal)} | ${fmt(r['crypto-js'])} | ${fmt(r['node-forge'])} | ${fmt(r['node crypto'])} | ${r.ratio.toFixed(2)}× (${r.fastestPeer}) |`)
  console.log('\n### File encryption (fresh process each; peak RSS of that process)\n')
  console.log('| size | implementation | time | peak RSS |')
  console.log('|---|---|---|---|')
  for (const f of fileRows) console.log(`| ${f.size >> 20} MB | ${f.impl} | ${f.error ? f.error : `${f.ms.toFixed(0)} ms`} | ${f.error ? '—' : `${f.maxRssMiB.toFixed(0)} MiB`} |`)
  if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify({ bench: 'ldesign', node: process.version, ops, files: fileRows }, null, 2) + '\n')
}

main()
