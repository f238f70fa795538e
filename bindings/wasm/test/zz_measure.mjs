import { startBrowser } from './harness.mjs'
const h = await startBrowser()
const r = await h.inPage(async (hs) => {
  const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
  const rows = []
  for (const n of [1 << 20, 4 << 20, 16 << 20, 64 << 20]) {
    const data = new Uint8Array(n)
    for (let off = 0; off < n; off += 65536) crypto.getRandomValues(data.subarray(off, Math.min(n, off + 65536)))
    const blob = new Blob([data])
    const pool = new hs.WorkerPool({ size: 2 })
    await pool.run('errorCodes'); await pool.run('errorCodes')
    const time = async (fn) => { const ts = []; for (let i = 0; i < 5; i++) { const t = performance.now(); await fn(); ts.push(performance.now() - t) } return Math.min(...ts) }
    let sealed
    const one = await time(async () => { sealed = await pool.encryptFile(blob, { publicKey, parallel: false }) })
    const two = await time(async () => { sealed = await pool.encryptFile(blob, { publicKey, parallel: true }) })
    const done = await time(async () => { await pool.decryptFile(sealed, { privateKey, parallel: false }) })
    const dtwo = await time(async () => { await pool.decryptFile(sealed, { privateKey, parallel: true }) })
    rows.push({ n, enc1: (n / one / 1e3).toFixed(0), enc2: (n / two / 1e3).toFixed(0), dec1: (n / done / 1e3).toFixed(0), dec2: (n / dtwo / 1e3).toFixed(0) })
    pool.terminate()
  }
  return rows
})
console.table(r)
await h.close()
