// The demo page's logic: file pickers and drop zones, key generation, and encryption and
// decryption in a WorkerPool (so the page stays responsive) with a progress bar and a download
// link. Everything goes through the package's public API.

import * as hs from '../js/index.js'

const $ = (id) => document.getElementById(id)
const pool = new hs.WorkerPool({ size: 2 })
const picked = { enc: null, dec: null }
let lastUrl = {}

function pick (side, file) {
  picked[side] = file
  $(`${side}-name`).textContent = file ? `${file.name} (${file.size.toLocaleString()} bytes)` : ''
}

for (const side of ['enc', 'dec']) {
  const drop = $(`${side}-drop`)
  $(`${side}-file`).addEventListener('change', (e) => pick(side, e.target.files[0] ?? null))
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over') })
  drop.addEventListener('dragleave', () => drop.classList.remove('over'))
  drop.addEventListener('drop', (e) => { e.preventDefault(); drop.classList.remove('over'); pick(side, e.dataTransfer.files[0] ?? null) })
}

// A key file dropped on the key box fills it.
$('dec-key').addEventListener('drop', async (e) => {
  const f = e.dataTransfer.files[0]
  if (!f) return
  e.preventDefault()
  $('dec-key').value = await f.text()
})

for (const r of document.querySelectorAll('input[name=enc-mode]')) {
  r.addEventListener('change', () => {
    const passphrase = $('enc-mode-passphrase').checked
    $('enc-recipient-box').hidden = passphrase
    $('enc-passphrase-box').hidden = !passphrase
  })
}

function link (side, blob, name) {
  if (lastUrl[side]) URL.revokeObjectURL(lastUrl[side])
  lastUrl[side] = URL.createObjectURL(blob)
  const a = Object.assign(document.createElement('a'), { href: lastUrl[side], download: name, id: `${side}-download` })
  a.textContent = `Download ${name} (${blob.size.toLocaleString()} bytes)`
  $(`${side}-out`).replaceChildren(a)
}

function fail (side, e) {
  const p = Object.assign(document.createElement('span'), { className: 'error', id: `${side}-error` })
  p.textContent = `${e.message}${e.code ? ` (${e.code})` : ''}`
  $(`${side}-out`).replaceChildren(p)
}

function progress (side, total) {
  const bar = $(`${side}-progress`)
  bar.max = Math.max(1, total)
  bar.value = 0
  return (n) => { bar.value = n }
}

$('keygen').addEventListener('click', () => {
  const { publicKey, privateKey } = hs.generateKeyPair()
  $('enc-recipient').value = publicKey
  const blob = new Blob([privateKey + '\n'], { type: 'text/plain' })
  const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: 'key.txt', id: 'keygen-download' })
  a.textContent = 'Save the private key (key.txt): it is the only way to decrypt'
  $('keygen-out').replaceChildren(a)
})

$('enc-go').addEventListener('click', async () => {
  const file = picked.enc
  if (!file) return fail('enc', new Error('choose a file first'))
  const format = $('enc-format').value
  const options = { format, onProgress: progress('enc', file.size) }
  if ($('enc-mode-passphrase').checked) options.passphrase = $('enc-passphrase').value
  else options.publicKey = $('enc-recipient').value.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  $('enc-out').textContent = 'Encrypting…'
  try {
    const sealed = await pool.encryptFile(file, options)
    link('enc', sealed, `${file.name}.${format === 'age' ? 'age' : 'hs'}`)
  } catch (e) { fail('enc', e) }
})

$('dec-go').addEventListener('click', async () => {
  const file = picked.dec
  if (!file) return fail('dec', new Error('choose a file first'))
  const passphrase = $('dec-passphrase').value
  const options = passphrase ? { passphrase } : { privateKey: $('dec-key').value }
  options.onProgress = progress('dec', file.size)
  $('dec-out').textContent = 'Decrypting…'
  try {
    const plain = await pool.decryptFile(file, options)
    link('dec', plain, file.name.replace(/\.(hs|age)$/, '') || 'decrypted')
  } catch (e) { fail('dec', e) }
})

// For the tests and the console.
window.hyperseal = Promise.resolve(hs)
