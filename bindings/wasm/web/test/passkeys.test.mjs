// Passkeys in the app, on Chromium's virtual CTAP2 authenticator (resident keys, user
// verification, PRF), at http://localhost (an IP address cannot be a relying party). "Add
// passkey" adds the credential and, with no other recipient, a post-quantum recovery key shown
// once; the file it encrypts opens with "Use passkey", in the real age with the recovery key,
// and in typage (npm age-encryption, injected into the same tab, which holds the authenticator)
// with the same credential; a file typage encrypts to the passkey opens with "Use passkey".

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildPeers } from '../../bench/chromium.mjs'
import { startApp, tab, settled, saved, clearSaved, age } from './app.mjs'

const AUTHENTICATOR = {
  protocol: 'ctap2', ctap2Version: 'ctap2_1', transport: 'internal', hasResidentKey: true,
  hasUserVerification: true, isUserVerified: true, hasPrf: true, automaticPresenceSimulation: true,
}

let app, page, identity, recovery

before(async () => {
  await buildPeers() // bench/dist/peers.js: typage, for the page
  // The CSP would refuse the injected typage bundle: it is the test's peer, not the app's.
  app = await startApp({ host: 'localhost', bypassCSP: true })
  page = app.page
  await page.addScriptTag({ path: join(import.meta.dirname, '../../bench/dist/peers.js') })
  const cdp = await app.context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', { options: AUTHENTICATOR })
  page.on('dialog', (d) => d.accept('test passkey'))
})
after(async () => { await app?.close() })

const data = randomBytes(300_000)

test('"Add passkey" adds the credential and a post-quantum recovery key, shown once', async () => {
  const panel = await tab(page, 'Encrypt')
  await panel.getByRole('button', { name: 'Add passkey' }).click()
  const r = await settled(page)
  assert.equal(r.alert, '')
  assert.match(r.status, /recovery key.*Done$/)
  const lines = (await panel.getByRole('textbox', { name: 'Recipients' }).inputValue()).trim().split('\n')
  assert.equal(lines.length, 2)
  assert.match(lines[0], /^AGE-PLUGIN-FIDO2PRF-1[0-9A-Z]+$/)
  assert.match(lines[1], /^age1pq1[0-9a-z]+$/)
  identity = lines[0]
  recovery = await panel.getByRole('textbox', { name: 'Recovery key' }).inputValue()
  assert.match(recovery, /^AGE-SECRET-KEY-PQ-1[0-9A-Z]+$/)
  // Its recipient is the one added (the real age derives it from the secret).
  assert.equal(age('age-keygen', ['-y'], { input: recovery + '\n' }).toString().trim(), lines[1])
})

test('a passkey alone is refused: its files would die with the site', async () => {
  const panel = await tab(page, 'Encrypt')
  const box = panel.getByRole('textbox', { name: 'Recipients' })
  const both = await box.inputValue()
  await panel.getByLabel('Files').setInputFiles({ name: 'x', mimeType: 'text/plain', buffer: Buffer.from('x') })
  await box.fill(identity)
  await panel.getByRole('button', { name: 'Encrypt files' }).click()
  const r = await settled(page)
  assert.match(r.alert, /^A passkey cannot be the only recipient/)
  assert.deepEqual(Object.keys(await saved(page)), [])
  await box.fill(both)
})

let sealed

/** The Decrypt tab's "Use passkey" on one file: the status, and what was saved. */
async function usePasskey (name, buffer) {
  await clearSaved(page)
  const dec = await tab(page, 'Decrypt')
  await dec.getByLabel('Files').setInputFiles({ name, mimeType: 'application/octet-stream', buffer })
  await dec.getByRole('button', { name: 'Use passkey' }).click()
  const { status, alert } = await settled(page)
  assert.equal(alert, '')
  return { status, out: await saved(page) }
}

test('the file opens with "Use passkey", in the real age with the recovery key, and in typage', async () => {
  const panel = await tab(page, 'Encrypt')
  await panel.getByLabel('Files').setInputFiles({ name: 'secret.bin', mimeType: 'application/octet-stream', buffer: data })
  await panel.getByRole('button', { name: 'Encrypt files' }).click()
  const r = await settled(page)
  assert.equal(r.alert, '')
  sealed = (await saved(page))['secret.bin.age']
  assert.match(sealed.toString('latin1'), /\n-> age-encryption\.org\/fido2prf /)

  const file = join(app.work, 'secret.bin.age')
  const key = join(app.work, 'recovery.txt')
  writeFileSync(file, sealed)
  writeFileSync(key, recovery + '\n')
  assert.ok(age('age', ['-d', '-i', key, file]).equals(data), 'age opens it with the recovery key')

  const byTypage = await page.evaluate(async ([b64, identity]) => {
    const age = window.peers.age
    const d = new age.Decrypter()
    d.addIdentity(new age.webauthn.WebAuthnIdentity({ identity }))
    const out = await d.decrypt(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))
    let s = ''
    for (let i = 0; i < out.length; i += 0x8000) s += String.fromCharCode(...out.subarray(i, i + 0x8000))
    return btoa(s)
  }, [sealed.toString('base64'), identity])
  assert.ok(Buffer.from(byTypage, 'base64').equals(data), 'typage opens it with the same credential')

  const d = await usePasskey('secret.bin.age', sealed)
  assert.equal(d.status, 'Decrypted secret.bin.age to secret.bin. Done')
  assert.ok(d.out['secret.bin'].equals(data))
})

test('typage\'s file for the same passkey opens with "Use passkey"', async () => {
  const fromTypage = Buffer.from(await page.evaluate(async (identity) => {
    const age = window.peers.age
    const e = new age.Encrypter()
    e.addRecipient(new age.webauthn.WebAuthnRecipient({ identity }))
    const out = await e.encrypt('made by typage\n')
    let s = ''
    for (const b of out) s += String.fromCharCode(b)
    return btoa(s)
  }, identity), 'base64')
  const d = await usePasskey('typage.txt.age', fromTypage)
  assert.equal(d.out['typage.txt'].toString(), 'made by typage\n')
})

test('"Save recovery key" writes it through the save dialog', async () => {
  await clearSaved(page)
  await (await tab(page, 'Encrypt')).getByRole('button', { name: 'Save recovery key' }).click()
  const r = await settled(page)
  assert.match(r.status, /Done$/)
  const text = (await saved(page))['hyperseal-recovery-key.txt'].toString()
  assert.ok(text.split('\n').includes(recovery))
})
