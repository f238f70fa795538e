// The page's wiring: the two tabs, the buttons and what each one starts. Every operation
// begins by clearing the last alert and ends in the status region ("… Done") or in one alert.

import { createEncryptStream, createDecryptStream, WorkerPool, PARALLEL_MIN } from '../js/index.js'
import * as keys from './keys.js'
import { acceptDrops, chosenWithPaths } from './drop.js'
import { run } from './run.js'
import { saveText } from './save.js'
import * as ui from './ui.js'

const $ = (id) => document.getElementById(id)

// ── tabs (the ARIA tabs pattern: arrows, Home and End move between them) ────────────────────
const tabs = [$('tab-encrypt'), $('tab-decrypt')]
function select (tab, focus) {
  for (const t of tabs) {
    const on = t === tab
    t.setAttribute('aria-selected', String(on))
    t.tabIndex = on ? 0 : -1
    $(t.getAttribute('aria-controls')).hidden = !on
  }
  if (focus) tab.focus()
}
for (const [i, t] of tabs.entries()) {
  t.addEventListener('click', () => select(t, false))
  t.addEventListener('keydown', (e) => {
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1 + tabs.length, Home: 0, End: tabs.length - 1 }[e.key]
    if (to === undefined) return
    e.preventDefault()
    select(tabs[to % tabs.length], true)
  })
}

/**
 * The workers, started at the first large file and kept for the next: from `PARALLEL_MIN`
 * bytes on, a binary file is sealed (opened) in parts by every core instead of as one stream
 * on this thread (run.js). Armor is one text encoding of the whole file, so it stays a stream.
 */
let workers = null
const inParts = (file, armored, call) => {
  if (armored || file.size < PARALLEL_MIN) return null
  workers ??= new WorkerPool()
  return (writable, onProgress) => call(workers, writable, onProgress)
}

/** Runs `op`, turning its outcome into the status or an alert. */
async function operation (what, op) {
  ui.begin(what)
  try {
    ui.done(await op())
  } catch (e) {
    ui.failed(e)
  }
}

/** The chosen files as `[{ file, path }]` (paths under a folder dropped on the Encrypt tab). */
const chosen = (input) => {
  const files = chosenWithPaths($(input))
  if (files.length === 0) throw new Error('Choose one or more files first.')
  return files
}

// The Files input's help says what was dropped, and again how to drop once files are chosen.
const dropHelp = $('enc-files-help').textContent
$('enc-files').addEventListener('change', () => { $('enc-files-help').textContent = dropHelp })
acceptDrops($('enc-files'), (list, error) => {
  const help = $('enc-files-help')
  if (error) help.textContent = `The dropped folder could not be read: ${ui.sentence(error)}`
  else help.textContent = `Dropped: ${list.length === 1 ? '1 file' : `${list.length} files`} (${ui.size(list.reduce((n, c) => n + c.file.size, 0))}). Each keeps its folder under the folder you save to.`
})

// ── encrypt ──────────────────────────────────────────────────────────────────────────────
$('enc-go').addEventListener('click', () => operation('Encrypting…', async () => {
  const files = chosen('enc-files')
  const armor = $('enc-armor').checked
  const passphrase = $('enc-passphrase').value
  const recipients = keys.recipients($('enc-recipients').value)
  let options
  if (recipients.length > 0) {
    if (passphrase !== '') throw new Error('Give recipients or a passphrase, not both: a passphrase must be the only way to open a file.')
    options = { publicKey: recipients, format: 'age', armor }
  } else if (passphrase !== '') {
    options = { passphrase, format: 'age', armor }
  } else {
    throw new Error('Give at least one recipient, a passkey or a passphrase.')
  }
  return run(files, {
    verb: 'Encrypting',
    past: 'Encrypted',
    nameOf: (name) => `${name}.age`,
    transform: () => createEncryptStream(options),
    parts: (file) => inParts(file, armor, (pool, sink, onProgress) => pool.encryptFileTo(file, sink, { ...options, onProgress })),
  })
}))

$('enc-passkey').addEventListener('click', () => operation('Adding a passkey…', async () => {
  const box = $('enc-recipients')
  const added = await keys.addPasskey(box.value)
  if (added === null) return 'No passkey was added.'
  box.value = [...keys.lines(box.value), ...added.add].join('\n') + '\n'
  if (!added.recovery) return 'Passkey added as a recipient.'
  $('recovery-key').value = added.recovery.privateKey
  $('recovery').hidden = false
  return 'Passkey added, with a new recovery key: save it before you close this page.'
}))

$('recovery-save').addEventListener('click', () => operation('Saving the recovery key…', async () => {
  const key = $('recovery-key').value
  const text = `# hyperseal recovery key: opens the files encrypted with its passkey, with age -d -i THIS_FILE\n${key}\n`
  await saveText('hyperseal-recovery-key.txt', text)
  return 'Recovery key saved.'
}))

// ── decrypt ──────────────────────────────────────────────────────────────────────────────
function decrypt (passkey) {
  return operation('Decrypting…', async () => {
    const files = chosen('dec-files')
    const ids = keys.identities($('dec-identities').value, passkey)
    const passphrase = $('dec-passphrase').value
    let options
    if (ids.length > 0) options = { privateKey: ids }
    else if (passphrase !== '') options = { passphrase }
    else throw new Error('Give an identity or a passphrase, or use a passkey.')
    return run(files, {
      verb: 'Decrypting',
      past: 'Decrypted',
      nameOf: (name) => (name.endsWith('.age') && name.length > 4 ? name.slice(0, -4) : `${name}.decrypted`),
      transform: () => createDecryptStream(options),
      // An armored file is streamed on this thread by the pool too (its first byte says so).
      parts: (file) => inParts(file, false, (pool, sink, onProgress) => pool.decryptFileTo(file, sink, { ...options, onProgress })),
    })
  })
}
$('dec-go').addEventListener('click', () => decrypt(false))
$('dec-passkey').addEventListener('click', () => decrypt(true))

// ── offline: the service worker keeps every file of the page (sw.js) ─────────────────────────
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('sw.js').catch(() => {
    // Without it the page still works; it only will not open offline.
  })
}
document.documentElement.dataset.ready = 'true'
