// docs/web.png, the picture in the README and docs/WEB.md: the app after encrypting two files
// to a post-quantum key, taken with the same tooling as the tests (`make web-screenshot`).

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, tab, settled, ageKey, REPO } from './app.mjs'

const app = await startApp()
try {
  const { page } = app
  await page.setViewportSize({ width: 760, height: 900 })
  const panel = await tab(page, 'Encrypt')
  await panel.getByLabel('Files').setInputFiles([
    { name: 'tax-return-2025.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(3 << 20, 7) },
    { name: 'passport-scan.jpg', mimeType: 'image/jpeg', buffer: Buffer.alloc(1 << 20, 9) },
  ])
  await panel.getByRole('textbox', { name: 'Recipients' }).fill(ageKey(true).recipient)
  await panel.getByRole('button', { name: 'Encrypt files' }).click()
  await settled(page)
  await page.getByRole('button', { name: 'Encrypt files' }).focus()
  const out = join(REPO, 'docs/web.png')
  writeFileSync(out, await page.screenshot({ fullPage: true }))
  console.log(`wrote ${out}`)
} finally {
  await app.close()
}
