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

// Each comparison starts from a collected heap, so that none pays for the garbage of the one
// before (typage's 16 MB results, collected concurrently on the same two cores otherwise). Not
// before every call: a large result's memory goes back to the addon's pool when its finalizer
// runs, a turn after a collection, so a collection before each call would hand every call fresh
// memory, which no program in a loop sees.
// The collector is Node's `--expose-gc` (package.json's bench script and `make bench` pass it on
// the command line); without it, no collection is forced. Never `v8.setFlagsFromString` at run
// time: V8 documents changing flags after start-up as undefined behaviour, and a 16 MB decrypt
// loop once died of SIGBUS in a bench that did.
const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {}

/** Best time of `runs` calls of each of `fns`, in ms, taken in turns after a warm-up call each. */
async function best (fns, runs) {
  const t = fns.map(() => Infinity)
  gc()
  for (const fn of fns) await fn()
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of fns.entries()) {
      const t0 = performance.now()
      await fn()
      t[k] = Math.min(t[k], performance.now() - t0)
    }
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
    const [typageEnc] = await best([enc(typage)], Math.min(runs, 3))
    const [typageDec] = await best([dec(typage)], Math.min(runs, 3))
    const [ageEnc, ownEnc] = await best([enc(age), () => hs.encryptByPublicKeyAsync(plain, own.publicKey)], runs)
    const [ageDec, ownDec] = await best([dec(age), () => hs.decryptByPrivateKeyAsync(ownFile, own.privateKey)], runs)
    const r = { size, typageEnc, ageEnc, ownEnc, typageDec, ageDec, ownDec }
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
