// Two builds of the WebAssembly package side by side in one headless Chromium page: each call
// timed alternately (A, B, then the peer), so a before/after survives what moves single runs on
// a shared machine (±15 % here). For a change to the package's speed:
//
//   cp -r pkg /tmp/pkg-before            # before the change
//   make -C ../.. wasm                   # after it
//   node bench/ab.mjs /tmp/pkg-before pkg [--ops seal,into,age] [--rounds 9]
//
// seal: aead.seal (ChaCha20-Poly1305) against @noble/ciphers; into: aead.sealInto against
// noble's encrypt(data, output); age: encryptByPublicKey (age, X25519) against typage. Sizes
// 1 KB, 64 KB, 1 MB, 16 MB. Prints medians per call and each build's ratio to the peer.

import { cpSync, rmSync } from 'node:fs'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildPeers, withPage } from './chromium.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const value = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined }
const [a, b = join(HERE, '../pkg')] = args.filter((x, i) => !x.startsWith('--') && !args[i - 1]?.startsWith('--'))
if (!a) throw new Error('usage: node bench/ab.mjs BEFORE_PKG [AFTER_PKG] [--ops seal,into,age] [--rounds N]')
const ops = (value('--ops') ?? 'seal,into,age').split(',')
const rounds = Number(value('--rounds') ?? 9)

await buildPeers()
for (const [src, dst] of [[a, 'ab-a'], [b, 'ab-b']]) {
  rmSync(join(HERE, 'dist', dst), { recursive: true, force: true })
  cpSync(resolve(src), join(HERE, 'dist', dst), { recursive: true })
}

const lines = await withPage('/bench/ab.html', {}, async (page) => {
  await page.waitForFunction(() => window.ready !== undefined && window.peers !== undefined)
  return page.evaluate(async ({ ops, rounds }) => {
    const { A, B } = await window.ready
    const out = []
    const key = crypto.getRandomValues(new Uint8Array(32))
    let count = 0
    const nonce = () => { const n = new Uint8Array(12); new DataView(n.buffer).setUint32(0, ++count); return n }
    const random = (n) => { const x = new Uint8Array(n); for (let o = 0; o < n; o += 65536) crypto.getRandomValues(x.subarray(o, Math.min(n, o + 65536))); return x }
    // Milliseconds per call over doubling runs of at least `budget` ms.
    const time = async (fn, budget = 60) => { let calls = 0; let elapsed = 0; const t0 = performance.now(); for (let run = 1; elapsed < budget; run *= 2) { for (let i = 0; i < run; i++) await fn(); calls += run; elapsed = performance.now() - t0 } return elapsed / calls }
    const id = await peers.age.generateX25519Identity()
    const recipient = await peers.age.identityToRecipient(id)
    for (const op of ops) {
      for (const n of [1000, 64000, 1e6, 16e6]) {
        const data = random(n)
        const [outA, outB, outPeer] = [new Uint8Array(n + 28), new Uint8Array(n + 28), new Uint8Array(n + 16)]
        const enc = new peers.age.Encrypter(); enc.addRecipient(recipient)
        const fns = {
          seal: { A: () => A.aeadSeal('chacha20-poly1305', key, data), B: () => B.aeadSeal('chacha20-poly1305', key, data), peer: () => peers.chacha20poly1305(key, nonce()).encrypt(data) },
          into: { A: () => A.aeadSealInto('chacha20-poly1305', key, data, outA), B: () => B.aeadSealInto('chacha20-poly1305', key, data, outB), peer: () => peers.chacha20poly1305(key, nonce()).encrypt(data, outPeer) },
          age: { A: () => A.encryptByPublicKey(data, recipient, { format: 'age' }), B: () => B.encryptByPublicKey(data, recipient, { format: 'age' }), peer: () => enc.encrypt(data) },
        }[op]
        const t = { A: [], B: [], peer: [] }
        for (const k in fns) await fns[k]()
        for (let r = 0; r < rounds; r++) for (const k in fns) { globalThis.gc?.(); t[k].push(await time(fns[k])) }
        const median = (x) => x.sort((p, q) => p - q)[x.length >> 1]
        const [ma, mb, mp] = [median(t.A), median(t.B), median(t.peer)]
        const us = (ms) => `${(ms * 1000).toFixed(1)} µs`
        out.push(`| ${op} | ${n} | ${us(ma)} (${(mp / ma).toFixed(2)}×) | ${us(mb)} (${(mp / mb).toFixed(2)}×) | ${(ma / mb).toFixed(2)}× | ${us(mp)} |`)
      }
    }
    return out
  }, { ops, rounds })
})
console.log(`A = ${a}, B = ${b}; medians of ${rounds} alternated rounds; (×) = peer ÷ build\n`)
console.log('| op | size | A | B | A ÷ B | peer |')
console.log('|---|---|---|---|---|---|')
for (const l of lines) console.log(l)
