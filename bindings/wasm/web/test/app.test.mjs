// The web app, as a person uses it, in headless Chromium: controls found by role and name,
// files in through the file inputs, out through the save pickers (OPFS here). Every file the
// app writes is opened by the real age v1.3.1; age's own files are opened by the app; wrong
// keys, a wrong passphrase, a damaged file and a post-quantum/classic mix each give one alert
// and leave nothing; and the browser asks for nothing beyond the app's own files.

import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, encryptFiles, decryptFiles, saved, clearSaved, pickerCalls, age, ageKey, freshPage, asFiles } from './app.mjs'

let app, page
const x25519 = ageKey(false)
const pq = ageKey(true)

before(async () => {
  app = await startApp()
  page = app.page
})
after(async () => { await app?.close() })
beforeEach(() => freshPage(page))

const encrypt = (files, options) => encryptFiles(page, asFiles(files), options)
const decrypt = (files, options) => decryptFiles(page, asFiles(files), options)

/** age -d on `sealed` with an identity (written to a file) or a passphrase (age-plugin-batchpass). */
function ageOpens (sealed, { identity, passphrase }) {
  const file = join(app.work, 'in.age')
  writeFileSync(file, sealed)
  if (passphrase !== undefined) return age('age', ['-d', '-j', 'batchpass', file], { env: { AGE_PASSPHRASE: passphrase } })
  const key = join(app.work, 'key.txt')
  writeFileSync(key, identity + '\n')
  return age('age', ['-d', '-i', key, file])
}

const ARMOR = /^-----BEGIN AGE ENCRYPTED FILE-----\n/

// Sizes around the 64 KiB chunk: empty, one byte short of a chunk, and several chunks.
for (const armor of [false, true]) {
  test(`encrypt to X25519 and to age1pq1, armor ${armor}: the real age opens each file`, async () => {
    for (const [kind, key] of [['x25519', x25519], ['pq', pq]]) {
      await clearSaved(page)
      const data = randomBytes(65535 + (armor ? 0 : 200_000))
      const r = await encrypt([['report.pdf', data]], { recipients: `# ${kind}\n${key.recipient}\n`, armor })
      assert.match(r.status, /^Encrypted report\.pdf to report\.pdf\.age\. Done$/)
      assert.equal(r.alert, '')
      const out = await saved(page)
      assert.deepEqual(Object.keys(out), ['report.pdf.age'])
      assert.equal(ARMOR.test(out['report.pdf.age'].toString('latin1')), armor)
      assert.ok(ageOpens(out['report.pdf.age'], key).equals(data), `age opens the ${kind} file`)
    }
  })

  test(`encrypt with a passphrase, armor ${armor}: the real age opens it`, async () => {
    const data = randomBytes(1000)
    const r = await encrypt([['notes.txt', data]], { passphrase: 'correct horse battery staple', armor })
    assert.match(r.status, /Done$/)
    const out = (await saved(page))['notes.txt.age']
    assert.match(out.toString('latin1'), armor ? ARMOR : /^age-encryption\.org\/v1\n-> scrypt /)
    assert.ok(ageOpens(out, { passphrase: 'correct horse battery staple' }).equals(data))
  })
}

test('several files go into the chosen folder, one .age each, and age opens them', async () => {
  const files = [['a.txt', randomBytes(10)], ['b.bin', randomBytes(70_000)], ['empty', Buffer.alloc(0)]]
  const r = await encrypt(files, { recipients: x25519.recipient })
  assert.match(r.status, /^Encrypted 3 files \(.*\)\. Done$/)
  // The bar ends full (the speed beside it is shown for runs long enough to measure: large.test.mjs).
  assert.equal(await page.getByRole('progressbar', { name: 'Progress' }).evaluate((bar) => bar.value), 100)
  const out = await saved(page)
  assert.deepEqual(Object.keys(out).sort(), ['out/a.txt.age', 'out/b.bin.age', 'out/empty.age'])
  for (const [name, data] of files) assert.ok(ageOpens(out[`out/${name}.age`], x25519).equals(data), name)
})

test('two files of one name would be one output: an alert before any dialog, nothing written', async () => {
  await failsCleanly(await encrypt([['same.txt', randomBytes(5)], ['same.txt', randomBytes(6)]], { recipients: x25519.recipient }), /both be saved as same\.txt\.age/)
  assert.equal(await pickerCalls(page), 0)
})

test('the app opens the real age\'s files: X25519, post-quantum, passphrase, armored', async () => {
  const data = randomBytes(150_000)
  const plain = join(app.work, 'plain')
  writeFileSync(plain, data)
  const cases = [
    ['x25519.age', age('age', ['-r', x25519.recipient, plain]), { identities: x25519.identity }],
    ['pq.age', age('age', ['-a', '-r', pq.recipient, plain]), { identities: `# two keys, the second opens it\n${x25519.identity}\n${pq.identity}` }],
    ['pass.age', age('age', ['-e', '-j', 'batchpass', plain], { env: { AGE_PASSPHRASE: 'hunter2 hunter2' } }), { passphrase: 'hunter2 hunter2' }],
  ]
  for (const [name, sealed, keys] of cases) {
    await clearSaved(page)
    const r = await decrypt([[name, sealed]], keys)
    assert.equal(r.alert, '', name)
    assert.equal(r.status, `Decrypted ${name} to ${name.slice(0, -4)}. Done`)
    assert.ok((await saved(page))[name.slice(0, -4)].equals(data), name)
  }
})

/** The failure cases: one sentence in the alert, no "Done", and the OPFS left empty. */
async function failsCleanly (r, message) {
  assert.match(r.alert, message)
  assert.match(r.alert, /^[A-Z][^\n]*\.$/, 'one plain sentence')
  assert.doesNotMatch(r.status, /Done$/)
  assert.deepEqual(Object.keys(await saved(page)), [], 'nothing is left behind')
}

test('a wrong identity, a wrong passphrase and a damaged file: an alert each, nothing left', async () => {
  const data = randomBytes(200_000)
  const plain = join(app.work, 'plain')
  writeFileSync(plain, data)
  const sealed = age('age', ['-r', x25519.recipient, plain])
  await failsCleanly(await decrypt([['doc.age', sealed]], { identities: ageKey().identity }), /^No identity matched/)
  await page.reload()
  const pw = age('age', ['-e', '-j', 'batchpass', plain], { env: { AGE_PASSPHRASE: 'right' } })
  await failsCleanly(await decrypt([['doc.age', pw]], { passphrase: 'wrong' }), /^Incorrect passphrase\.$/)
  // The last chunk damaged: every chunk before it was written, and is gone again.
  await page.reload()
  const damaged = Buffer.from(sealed)
  damaged[damaged.length - 5] ^= 1
  await failsCleanly(await decrypt([['doc.age', damaged]], { identities: x25519.identity }), /failed to authenticate/)
  // The second of two files damaged: the first, already complete, is removed too.
  await page.reload()
  await failsCleanly(await decrypt([['good.age', sealed], ['bad.age', damaged]], { identities: x25519.identity }), /failed to authenticate/)
})

test('post-quantum and classic recipients together: an alert before any save dialog', async () => {
  const r = await encrypt([['x', randomBytes(10)]], { recipients: `${x25519.recipient}\n${pq.recipient}` })
  await failsCleanly(r, /post-quantum and classic recipients cannot be mixed/)
  assert.equal(await pickerCalls(page), 0)
  // The alert is cleared by the next operation, which then ends in "Done".
  const ok = await encrypt([['x', randomBytes(10)]], { recipients: pq.recipient })
  assert.equal(ok.alert, '')
  assert.match(ok.status, /Done$/)
})

test('recipients and a passphrase together, or neither: an alert, no dialog', async () => {
  await failsCleanly(await encrypt([['x', randomBytes(1)]], { recipients: x25519.recipient, passphrase: 'p' }), /not both/)
  await failsCleanly(await encrypt([['x', randomBytes(1)]], {}), /at least one recipient/)
  assert.equal(await pickerCalls(page), 0)
})

test('keyboard alone: the arrow keys move between the tabs, Tab reaches the controls', async () => {
  await page.getByRole('tab', { name: 'Encrypt' }).focus()
  await page.keyboard.press('ArrowRight')
  assert.equal(await page.getByRole('tab', { name: 'Decrypt' }).getAttribute('aria-selected'), 'true')
  assert.ok(await page.getByRole('tab', { name: 'Decrypt' }).evaluate((e) => e === document.activeElement))
  await page.keyboard.press('Tab')
  assert.equal(await page.evaluate(() => document.activeElement.id), 'dec-files')
  const bar = page.getByRole('progressbar')
  assert.equal(await bar.count(), 1)
})

test('the system\'s dark theme gives a dark page with light text, the light one the reverse', async () => {
  const colors = () => page.evaluate(() => {
    const css = getComputedStyle(document.documentElement)
    // The sum of the red, green and blue values: low is dark.
    const sum = (c) => c.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0)
    return { bg: sum(css.backgroundColor), fg: sum(css.color) }
  })
  await page.emulateMedia({ colorScheme: 'dark' })
  const dark = await colors()
  await page.emulateMedia({ colorScheme: 'light' })
  const light = await colors()
  assert.ok(dark.bg < 150 && dark.fg > 500, JSON.stringify(dark))
  assert.ok(light.bg > 600 && light.fg < 200, JSON.stringify(light))
})

test('no request leaves the app\'s own files (the DevTools network log)', async () => {
  assert.ok(app.requests.length > 5)
  for (const url of app.requests) assert.ok(url.startsWith(`${app.origin}/`), url)
})
