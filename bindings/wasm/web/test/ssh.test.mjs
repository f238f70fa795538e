// SSH keys in the web app, as a person pastes them, against the real age v1.3.1 both ways:
// `ssh-ed25519 …` and `ssh-rsa …` lines in the Recipients box (files age opens with the private
// keys), an OpenSSH ed25519 private key pasted whole in the Identities box (age's files opened),
// and an RSA private key refused with the reason, nothing written. The keys are the throw-away
// ones of vectors/ssh (README there).

import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, encryptFiles, decryptFiles, saved, freshPage, asFiles, age, ageKey, pickerCalls, REPO } from './app.mjs'

const key = (name) => join(REPO, 'vectors/ssh', name)
const text = (name) => readFileSync(key(name), 'utf8')

let app, page
before(async () => {
  app = await startApp()
  page = app.page
})
after(async () => { await app?.close() })
beforeEach(() => freshPage(page))

test('ssh-ed25519 and ssh-rsa recipients: the real age opens the file with either private key', async () => {
  const data = randomBytes(200_000)
  const recipients = `# GitHub's NAME.keys, as pasted\n${text('ed25519.pub')}${text('rsa2048.pub')}`
  const r = await encryptFiles(page, asFiles([['notes.txt', data]]), { recipients })
  assert.equal(r.alert, '')
  assert.match(r.status, /^Encrypted notes\.txt to notes\.txt\.age\. Done$/)
  const file = join(app.work, 'notes.txt.age')
  writeFileSync(file, (await saved(page))['notes.txt.age'])
  for (const name of ['ed25519', 'rsa2048']) assert.ok(age('age', ['-d', '-i', key(name), file]).equals(data), name)
})

test('age encrypts to an ssh-ed25519 key; the app opens it with the private key pasted whole', async () => {
  const data = randomBytes(150_000)
  const plain = join(app.work, 'plain')
  writeFileSync(plain, data)
  const sealed = age('age', ['-R', key('ed25519.pub'), plain])
  // Beside an age key that does not match, in either order.
  const other = ageKey().identity
  for (const identities of [text('ed25519'), `${other}\n${text('ed25519')}`, `${text('ed25519')}\n# and\n${other}\n`]) {
    await freshPage(page)
    const r = await decryptFiles(page, asFiles([['doc.age', sealed]]), { identities })
    assert.equal(r.alert, '')
    assert.equal(r.status, 'Decrypted doc.age to doc. Done')
    assert.ok((await saved(page)).doc.equals(data))
  }
})

test('an ssh-rsa private key: one sentence saying why the page cannot use it, before any save dialog', async () => {
  const plain = join(app.work, 'plain')
  writeFileSync(plain, 'for rsa')
  const sealed = age('age', ['-R', key('rsa2048.pub'), plain])
  const r = await decryptFiles(page, asFiles([['doc.age', sealed]]), { identities: text('rsa2048') })
  assert.match(r.alert, /^Invalid key: ssh-rsa private keys are not available in this build, since RSA decryption in WebAssembly is not constant time/)
  assert.match(r.alert, /^[A-Z][^\n]*\.$/, 'one plain sentence')
  assert.doesNotMatch(r.status, /Done$/)
  assert.equal(await pickerCalls(page), 0)
  assert.deepEqual(Object.keys(await saved(page)), [])
})
