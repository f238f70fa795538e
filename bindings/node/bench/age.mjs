// npm run bench -- --age [--quick]   (or: node bench/age.mjs)
// hyperseal/age (typage's API) against typage itself (npm `age-encryption`) and against this
// package's own API, side by side in one process: age files to an X25519 recipient (typage's
// generateIdentity), 1 MB and 16 MB, encrypt and decrypt, best of several calls.
//
// The own API's decrypt opens the same age file; its encrypt writes a hyperseal file (the addon
// has no age writer of its own: `hyperseal/age` is that), whose payload is AES-256-GCM where
// the CPU has AES instructions, against age's ChaCha20-Poly1305.

import * as age from 'hyperseal/age'
import * as typage from 'age-encryption'
import { createRequire } from 'node:module'
import os from 'node:os'

const hs = createRequire(import.meta.url)('..')
const quick = process.argv.includes('--quick')
const MB = 1024 * 1024
const SIZES = [MB, 16 * MB]

/** Best time of `runs` calls, in ms, after one warm-up call. */
async function best (fn, runs) {
  await fn()
  let t = Infinity
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await fn()
    t = Math.min(t, performance.now() - t0)
  }
  return t
}

export async function run () {
  const id = await typage.generateIdentity()
  const to = await typage.identityToRecipient(id)
  const own = hs.generateKeyPair({ kind: 'x25519' })
  const rows = []
  for (const size of SIZES) {
    const plain = new Uint8Array(size).map((_, i) => i & 255)
    const runs = quick ? 3 : size >= 16 * MB ? 5 : 10
    const file = await (() => { const e = new typage.Encrypter(); e.addRecipient(to); return e.encrypt(plain) })()
    const ownFile = await (() => { const e = new typage.Encrypter(); e.addRecipient(own.publicKey); return e.encrypt(plain) })()
    const enc = (api) => () => { const e = new api.Encrypter(); e.addRecipient(to); return e.encrypt(plain) }
    const dec = (api) => () => { const d = new api.Decrypter(); d.addIdentity(id); return d.decrypt(file) }
    const r = {
      size,
      typageEnc: await best(enc(typage), Math.min(runs, 3)),
      ageEnc: await best(enc(age), runs),
      ownEnc: await best(() => hs.encryptByPublicKeyAsync(plain, own.publicKey), runs),
      typageDec: await best(dec(typage), Math.min(runs, 3)),
      ageDec: await best(dec(age), runs),
      ownDec: await best(() => hs.decryptByPrivateKeyAsync(ownFile, own.privateKey), runs),
    }
    rows.push(r)
  }
  return rows
}

export function print (rows) {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  console.log(`### hyperseal/age vs typage (age-encryption) and the own API — Node ${process.version}, ${hs.backend}, ${os.cpus().length} × ${cpu}\n`)
  console.log('| size | op | typage | hyperseal/age | own API | age vs typage | age / own |')
  console.log('|---|---|---|---|---|---|---|')
  for (const r of rows) {
    const label = `${r.size / MB} MB`
    for (const [op, t, a, o] of [['encrypt', r.typageEnc, r.ageEnc, r.ownEnc], ['decrypt', r.typageDec, r.ageDec, r.ownDec]]) {
      console.log(`| ${label} | ${op} | ${t.toFixed(2)} ms | ${a.toFixed(2)} ms | ${o.toFixed(2)} ms | ${(t / a).toFixed(1)}× | ${(a / o).toFixed(2)} |`)
    }
  }
  console.log('')
}

if (import.meta.url === `file://${process.argv[1]}`) print(await run())
