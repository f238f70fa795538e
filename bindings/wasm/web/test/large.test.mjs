// A large file read from the disk, encrypted and then decrypted by the app: the same SHA-256
// comes back, and the memory of the tab's renderer processes (its page and service worker,
// with their workers, which are threads of the same processes) stays within 256 MiB of the
// idle page. 64 MiB in `make test`; WEB_LARGE=1 makes it 4 GiB (needs about 13 GiB of disk).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomFillSync } from 'node:crypto'
import { openSync, writeSync, closeSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, tab, settled, ageKey } from './app.mjs'

const SIZE = process.env.WEB_LARGE === '1' ? 4 * 2 ** 30 : 64 * 2 ** 20
const BOUND = 256 * 2 ** 20

let app, page

before(async () => {
  app = await startApp()
  page = app.page
})
after(async () => { await app?.close() })

/** Writes `SIZE` random bytes to `path` and returns their SHA-256. */
function bigFile (path) {
  const fd = openSync(path, 'w')
  const sum = createHash('sha256')
  const block = Buffer.alloc(1 << 20)
  for (let at = 0; at < SIZE; at += block.length) {
    randomFillSync(block)
    const part = block.subarray(0, Math.min(block.length, SIZE - at))
    sum.update(part)
    writeSync(fd, part)
  }
  closeSync(fd)
  return sum.digest('hex')
}

/** The resident memory of the Chromium renderers under this test's profile, in bytes. */
function rendererMemory () {
  let total = 0
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (!cmd.includes('--type=renderer') || !ownedByProfile(pid)) continue
      const rss = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
      if (rss) total += Number(rss[1]) * 1024
    } catch {
      // The process ended while it was read.
    }
  }
  return total
}

/** Whether `pid` descends from the browser started on this test's profile. */
function ownedByProfile (pid) {
  for (let p = pid, hops = 0; p > 1 && hops < 8; hops++) {
    const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
    if (cmd.includes(app.work)) return true
    p = Number(readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1])
  }
  return false
}

/** Runs `op` while sampling the renderers' memory; returns its peak above `idle`. */
async function peakAbove (idle, op) {
  let peak = 0
  const timer = setInterval(() => { peak = Math.max(peak, rendererMemory()) }, 100)
  try { await op() } finally { clearInterval(timer) }
  return Math.max(0, Math.max(peak, rendererMemory()) - idle)
}

/** The SHA-256 of OPFS file `name`, read back from the page in 8 MiB slices. */
async function savedSha256 (name) {
  const sum = createHash('sha256')
  const size = await page.evaluate(async (name) => (await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()).size, name)
  for (let at = 0; at < size; at += 8 << 20) {
    const b64 = await page.evaluate(async ([name, at]) => {
      const file = await (await (await navigator.storage.getDirectory()).getFileHandle(name)).getFile()
      const u8 = new Uint8Array(await file.slice(at, at + (8 << 20)).arrayBuffer())
      let s = ''
      for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000))
      return btoa(s)
    }, [name, at])
    sum.update(Buffer.from(b64, 'base64'))
  }
  return sum.digest('hex')
}

test(`a ${SIZE / 2 ** 20} MiB file from disk: encrypt, decrypt, the same SHA-256, memory within 256 MiB of idle`, { timeout: 3_600_000 }, async () => {
  const path = join(app.work, 'big.bin')
  const want = bigFile(path)
  const { identity: key, recipient } = ageKey()
  const idle = rendererMemory()

  const enc = await tab(page, 'Encrypt')
  await enc.getByLabel('Files').setInputFiles(path)
  await enc.getByRole('textbox', { name: 'Recipients' }).fill(recipient)
  let r
  const encPeak = await peakAbove(idle, async () => {
    await enc.getByRole('button', { name: 'Encrypt files' }).click()
    r = await settled(page)
  })
  assert.equal(r.alert, '')
  const speed = await page.locator('#speed').textContent()
  console.log(`encrypt: ${speed}, renderers +${(encPeak / 2 ** 20).toFixed(0)} MiB over idle ${(idle / 2 ** 20).toFixed(0)} MiB`)

  // The encrypted file, a File from the OPFS on disk, goes to the Decrypt tab's input.
  const dec = await tab(page, 'Decrypt')
  await page.evaluate(async () => {
    const file = await (await (await navigator.storage.getDirectory()).getFileHandle('big.bin.age')).getFile()
    const dt = new DataTransfer()
    dt.items.add(file)
    document.getElementById('dec-files').files = dt.files
  })
  await dec.getByRole('textbox', { name: 'Identities' }).fill(key)
  const decPeak = await peakAbove(idle, async () => {
    await dec.getByRole('button', { name: 'Decrypt files' }).click()
    r = await settled(page)
  })
  assert.equal(r.alert, '')
  assert.equal(r.status, 'Decrypted big.bin.age to big.bin. Done')
  console.log(`decrypt: ${await page.locator('#speed').textContent()}, renderers +${(decPeak / 2 ** 20).toFixed(0)} MiB`)
  assert.equal(await savedSha256('big.bin'), want)
  assert.ok(encPeak < BOUND && decPeak < BOUND, `memory above idle: ${encPeak} and ${decPeak} bytes`)
})
