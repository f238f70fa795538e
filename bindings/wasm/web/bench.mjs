// The web app's bench: one file read from the disk, encrypted and then decrypted, once by the
// app (its buttons, as a person uses it) and once by a page that uses typage's own streams
// (npm age-encryption: `Encrypter.encrypt(ReadableStream)`, written to the same kind of file
// handle). Each run gives MB/s (wall time from the click to "Done") and the peak memory of the
// tab's renderers above the idle page. 1 GiB by default, 64 MiB with --quick, N MiB with
// --size-mib N.
//
//   node web/bench.mjs [--quick | --size-mib N] [--json FILE]      (from bindings/wasm, after `make web`)

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cpus } from 'node:os'
import { buildPeers } from '../bench/chromium.mjs'
import { startApp, tab, settled, chooseSaved, clearSaved, ageKey } from './test/app.mjs'
import { bigFile, rendererMemory, measured } from './test/measure.mjs'

const args = process.argv.slice(2)
const mib = args.includes('--size-mib') ? Number(args[args.indexOf('--size-mib') + 1]) : args.includes('--quick') ? 64 : 1024
const SIZE = mib * 2 ** 20
const jsonAt = args.includes('--json') ? args[args.indexOf('--json') + 1] : null
const key = ageKey()
const rows = []
let chromium = ''

/** One row: `what` done by `impl`, over SIZE bytes, its time and peak memory. */
function row (impl, op, { seconds, peak }) {
  rows.push({ impl, op, size: SIZE, seconds, mbps: SIZE / seconds / 1e6, peakBytes: peak })
  console.log(`${impl.padEnd(28)} ${op.padEnd(8)} ${(SIZE / seconds / 1e6).toFixed(1).padStart(7)} MB/s  +${(peak / 2 ** 20).toFixed(0)} MiB`)
}

// The app, through its own buttons.
{
  const app = await startApp()
  try {
    chromium = app.context.browser()?.version() ?? ''
    const path = join(app.work, 'big.bin')
    bigFile(path, SIZE)
    const { page } = app
    // The form is filled first: the time runs from the click to "Done", as typage's from its call.
    const enc = await tab(page, 'Encrypt')
    await enc.getByLabel('Files').setInputFiles(path)
    await enc.getByRole('textbox', { name: 'Recipients' }).fill(key.recipient)
    const idle = rendererMemory(app.work)
    const click = (panel, name) => async () => {
      await panel.getByRole('button', { name }).click()
      const { alert } = await settled(page)
      if (alert) throw new Error(alert)
    }
    row('hyperseal web', 'encrypt', await measured(app.work, idle, click(enc, 'Encrypt files')))
    await chooseSaved(page, 'big.bin.age')
    const dec = await tab(page, 'Decrypt')
    await dec.getByRole('textbox', { name: 'Identities' }).fill(key.identity)
    row('hyperseal web', 'decrypt', await measured(app.work, idle, click(dec, 'Decrypt files')))
  } finally {
    await app.close()
  }
}

// typage's streams in the same kind of page: its bundle injected (the app's policy refuses
// other scripts, so this browser bypasses it), the file from the same input.
{
  await buildPeers()
  const app = await startApp({ bypassCSP: true })
  try {
    const { page } = app
    await page.addScriptTag({ path: join(import.meta.dirname, '../bench/dist/peers.js') })
    const path = join(app.work, 'big.bin')
    bigFile(path, SIZE)
    await page.locator('#enc-files').setInputFiles(path)
    await clearSaved(page)
    const idle = rendererMemory(app.work)
    /** In the page: `input` (a File) through typage's encrypt or decrypt stream into OPFS `out`. */
    const typage = (op, input, out, k) => page.evaluate(async ([op, input, out, k]) => {
      const age = window.peers.age
      const root = await navigator.storage.getDirectory()
      const file = input === '#enc-files' ? document.querySelector(input).files[0] : await (await root.getFileHandle(input)).getFile()
      let stream
      if (op === 'encrypt') {
        const e = new age.Encrypter()
        e.addRecipient(k)
        stream = await e.encrypt(file.stream())
      } else {
        const d = new age.Decrypter()
        d.addIdentity(k)
        stream = await d.decrypt(file.stream())
      }
      await stream.pipeTo(await (await root.getFileHandle(out, { create: true })).createWritable())
    }, [op, input, out, k])
    row('typage 0.3 streams', 'encrypt', await measured(app.work, idle, () => typage('encrypt', '#enc-files', 'big.bin.age', key.recipient)))
    row('typage 0.3 streams', 'decrypt', await measured(app.work, idle, () => typage('decrypt', 'big.bin.age', 'big.bin', key.identity)))
  } finally {
    await app.close()
  }
}

if (jsonAt) {
  writeFileSync(jsonAt, JSON.stringify({ chromium, cpu: cpus()[0]?.model ?? '', cores: cpus().length, rows }, null, 2) + '\n')
}
