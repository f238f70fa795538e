// The web app's large files: from PARALLEL_MIN (4 MiB) on, a binary file is sealed or opened in
// parts by the package's WorkerPool and written in order to the save dialog's file (OPFS
// here), instead of streamed through one encrypt stream on the page. The real age opens what
// it writes and makes what it opens; a damaged file, a wrong passphrase and a file that fails
// after one that succeeded leave nothing; armored files stay one stream.

import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startApp, encryptFiles, decryptFiles, saved, clearSaved, age, ageKey, freshPage, asFiles } from './app.mjs'

const MIB = 2 ** 20
let app, page
const key = ageKey()

before(async () => {
  app = await startApp()
  page = app.page
  // Counts the workers the page starts (WorkerPool's), so a test can say the parts ran there.
  await app.context.addInitScript(() => {
    const Native = window.Worker
    window.workersStarted = 0
    window.Worker = class extends Native {
      constructor (...args) {
        super(...args)
        window.workersStarted++
      }
    }
  })
})
after(async () => { await app?.close() })
beforeEach(() => freshPage(page))

const workersStarted = () => page.evaluate(() => window.workersStarted)

function ageOpens (sealed, { identity, passphrase }) {
  const file = join(app.work, 'in.age')
  writeFileSync(file, sealed)
  if (passphrase !== undefined) return age('age', ['-d', '-j', 'batchpass', file], { env: { AGE_PASSPHRASE: passphrase } })
  const id = join(app.work, 'key.txt')
  writeFileSync(id, identity + '\n')
  return age('age', ['-d', '-i', id, file])
}

function ageSeals (data, args, env) {
  const plain = join(app.work, 'plain')
  writeFileSync(plain, data)
  return age('age', [...args, plain], { env })
}

test('a large file and a small one: the large one in parts on the workers, both open with age', async () => {
  // Three parts of the pool's 8 MiB, the last one short.
  const big = randomBytes(17 * MIB + 3)
  const small = randomBytes(70_000)
  const r = await encryptFiles(page, asFiles([['big.bin', big], ['small.txt', small]]), { recipients: key.recipient })
  assert.equal(r.alert, '')
  assert.match(r.status, /^Encrypted 2 files \(.*\)\. Done$/)
  assert.ok(await workersStarted() >= 1, 'the large file went to the worker pool')
  assert.equal(await page.getByRole('progressbar', { name: 'Progress' }).evaluate((bar) => bar.value), 100)
  const out = await saved(page)
  assert.ok(ageOpens(out['out/big.bin.age'], key).equals(big), 'age opens the large file')
  assert.ok(ageOpens(out['out/small.txt.age'], key).equals(small), 'age opens the small file')
})

test('a passphrase and armor: parts with a passphrase, armor as one stream on the page; age opens both', async () => {
  const data = randomBytes(4 * MIB + 65536)
  let r = await encryptFiles(page, asFiles([['pass.bin', data]]), { passphrase: 'large horse' })
  assert.match(r.status, /Done$/)
  assert.ok(await workersStarted() >= 1)
  assert.ok(ageOpens((await saved(page))['pass.bin.age'], { passphrase: 'large horse' }).equals(data))
  await clearSaved(page)
  await page.reload()
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
  r = await encryptFiles(page, asFiles([['text.bin', data]]), { recipients: key.recipient, armor: true })
  assert.match(r.status, /Done$/)
  assert.equal(await workersStarted(), 0, 'armor is one stream on the page')
  const armored = (await saved(page))['text.bin.age']
  assert.match(armored.toString('latin1'), /^-----BEGIN AGE ENCRYPTED FILE-----\n/)
  assert.ok(ageOpens(armored, key).equals(data))
})

test('age\'s large files open in parts: a key and a passphrase', async () => {
  const data = randomBytes(6 * MIB + 1)
  let r = await decryptFiles(page, asFiles([['k.bin.age', ageSeals(data, ['-r', key.recipient])]]), { identities: key.identity })
  assert.equal(r.alert, '')
  assert.equal(r.status, 'Decrypted k.bin.age to k.bin. Done')
  assert.ok(await workersStarted() >= 1)
  assert.ok((await saved(page))['k.bin'].equals(data))
  await clearSaved(page)
  r = await decryptFiles(page, asFiles([['p.bin.age', ageSeals(data, ['-e', '-j', 'batchpass'], { AGE_PASSPHRASE: 'pw pw' })]]), { passphrase: 'pw pw' })
  assert.equal(r.alert, '')
  assert.ok((await saved(page))['p.bin'].equals(data))
})

test('a damaged large file, a wrong passphrase, and a damaged one after a good one: an alert each, nothing left', async () => {
  // Three parts: the damaged one in the middle, after one that opened.
  const data = randomBytes(20 * MIB)
  const sealed = ageSeals(data, ['-r', key.recipient])
  const damaged = Buffer.from(sealed)
  damaged[Math.floor(damaged.length / 2)] ^= 1
  const fails = async (files, keys, message) => {
    await page.reload()
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true')
    const r = await decryptFiles(page, asFiles(files), keys)
    assert.match(r.alert, message)
    assert.doesNotMatch(r.status, /Done$/)
    assert.deepEqual(Object.keys(await saved(page)), [], 'nothing is left behind')
    assert.ok(await workersStarted() >= 1)
  }
  await fails([['d.bin.age', damaged]], { identities: key.identity }, /failed to authenticate/)
  const pw = ageSeals(data, ['-e', '-j', 'batchpass'], { AGE_PASSPHRASE: 'right' })
  await fails([['p.bin.age', pw]], { passphrase: 'wrong' }, /^Incorrect passphrase\.$/)
  await fails([['good.bin.age', sealed], ['bad.bin.age', damaged]], { identities: key.identity }, /failed to authenticate/)
})
