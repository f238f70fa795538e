// Armor in Web Streams, in Chromium: `encryptStream(readable, { armor: true })` writes through the
// library's ArmoredWriter and the files open with the native CLI; `decryptStream` reads armored
// files (the CLI's, and the page's own, fed in pieces of awkward sizes) through the library's
// push-based ArmorDecoder; damaged armor errors the stream with its code.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startBrowser, cli, b64, unb64 } from './harness.mjs'

let h
before(async () => { h = await startBrowser() })
after(async () => { await h?.close() })

// Sizes around the armor's 48-byte lines and 3 KiB batches, and the 64 KiB chunk.
const SIZES = [0, 1, 47, 3073, 65536, 200001]

test('armored streams made in the page open with the CLI (both formats, key and passphrase)', async () => {
  const made = await h.inPage(async (hs, sizes) => {
    const b64 = (u8) => { let s = ''; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s) }
    // Plaintext arriving in uneven pieces, as from a network or a file reader.
    const pieces = (pt) => new ReadableStream({
      start (c) { for (let off = 0, k = 1; off < pt.length; off += k, k = k * 3 + 1) c.enqueue(pt.slice(off, off + k)); c.close() },
    })
    const out = []
    for (const format of ['hyperseal', 'age']) {
      const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
      for (const size of sizes) {
        const pt = crypto.getRandomValues(new Uint8Array(Math.min(size, 65536)))
        const full = new Uint8Array(size); for (let off = 0; off < size; off += pt.length) full.set(pt.subarray(0, Math.min(pt.length, size - off)), off)
        const text = await new Response(hs.encryptStream(pieces(full), { publicKey, format, armor: true })).text()
        out.push({ format, size, key: privateKey, text, pt: b64(full) })
      }
      const pt = new TextEncoder().encode(`armored passphrase stream, ${format}`)
      const text = await new Response(hs.encryptStream(pieces(pt), { passphrase: 'correct horse', format, armor: true })).text()
      out.push({ format, passphrase: 'correct horse', text, pt: b64(pt) })
    }
    return out
  }, SIZES)
  assert.equal(made.length, 2 * (SIZES.length + 1))
  for (const [i, m] of made.entries()) {
    const label = m.format === 'age' ? 'AGE ENCRYPTED FILE' : 'HYPERSEAL ENCRYPTED FILE'
    assert.ok(m.text.startsWith(`-----BEGIN ${label}-----\n`), m.text.slice(0, 60))
    assert.ok(m.text.endsWith(`-----END ${label}-----\n`))
    assert.ok(m.text.split('\n').slice(1, -2).every((l, j, all) => l.length === 64 || j === all.length - 1), 'full 64-column lines')
    const file = join(h.work, `armored-${i}`)
    writeFileSync(file, m.text)
    const args = ['decrypt', '-q', file]
    if (m.passphrase) {
      writeFileSync(join(h.work, 'pass'), m.passphrase + '\n')
      args.push('--passphrase-file', join(h.work, 'pass'))
    } else {
      writeFileSync(join(h.work, 'id'), m.key)
      args.push('-i', join(h.work, 'id'))
    }
    assert.deepEqual(cli(args), unb64(m.pt), `${m.format} ${m.size ?? 'passphrase'}`)
  }
})

test('armored files made by the CLI decrypt through decryptStream, in pieces of any size', async () => {
  const cases = []
  for (const format of ['hyperseal', 'age']) {
    const key = join(h.work, `cli-${format}.key`)
    cli(['keygen', '--kind', 'x25519', '-o', key])
    const pub = cli(['pubkey', '-i', key]).toString().trim()
    for (const size of SIZES) {
      const pt = randomBytes(size)
      writeFileSync(join(h.work, 'pt'), pt)
      const text = cli(['encrypt', '-q', '-r', pub, '--format', format, '--armor', join(h.work, 'pt')]).toString()
      cases.push({ format, size, key: readFileSync(key, 'utf8'), text, pt: b64(pt) })
    }
  }
  // CRLF line ends and surrounding whitespace are valid armor too (age's rules).
  cases.push({ ...cases[3], text: '\n  \n' + cases[3].text.replaceAll('\n', '\r\n') + ' \n' })
  const r = await h.inPage(async (hs, cases) => {
    const bytes = (s) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0))
    const out = []
    for (const c of cases) {
      const file = new TextEncoder().encode(c.text)
      for (const piece of [1, 63, 65, 4096, file.length || 1]) {
        const input = new ReadableStream({ start (ctl) { for (let off = 0; off < file.length; off += piece) ctl.enqueue(file.slice(off, off + piece)); ctl.close() } })
        try {
          const back = new Uint8Array(await new Response(hs.decryptStream(input, { privateKey: c.key })).arrayBuffer())
          const pt = bytes(c.pt)
          out.push(back.length === pt.length && back.every((b, i) => b === pt[i]))
        } catch (e) { out.push(`${e.code}: ${e.message}`) }
      }
    }
    return out
  }, cases)
  assert.equal(r.length, cases.length * 5)
  r.forEach((ok, i) => assert.equal(ok, true, `${cases[Math.floor(i / 5)].format} ${cases[Math.floor(i / 5)].size} piece #${i % 5}`))
})

test('damaged armor errors the stream with a code, after no unauthenticated plaintext', async () => {
  const r = await h.inPage(async (hs) => {
    const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
    const pt = new Uint8Array(100000).fill(3)
    const good = await new Response(hs.encryptStream(new Blob([pt]).stream(), { publicKey, armor: true })).text()
    const lines = good.split('\n')
    const mid = lines.length >> 1
    const damaged = {
      noEnd: good.replace('-----END HYPERSEAL ENCRYPTED FILE-----\n', ''),
      trailingGarbage: good + 'garbage',
      blankLine: lines.slice(0, mid).join('\n') + '\n\n' + lines.slice(mid).join('\n'),
      shortLine: lines.slice(0, mid).join('\n') + '\n' + lines[mid].slice(0, 40) + '\n' + lines.slice(mid + 1).join('\n'),
      badChar: lines.slice(0, mid).join('\n') + '\n' + '*' + lines[mid].slice(1) + '\n' + lines.slice(mid + 1).join('\n'),
      flippedPayload: lines.slice(0, mid).join('\n') + '\n' + (lines[mid][0] === 'A' ? 'B' : 'A') + lines[mid].slice(1) + '\n' + lines.slice(mid + 1).join('\n'),
      cut: good.slice(0, good.length >> 1),
      wrongLabel: good.replace('BEGIN HYPERSEAL', 'BEGIN PGP'),
    }
    const out = {}
    for (const [name, text] of Object.entries(damaged)) {
      const reader = hs.decryptStream(new Blob([text]).stream(), { privateKey }).getReader()
      let got = 0
      try {
        for (;;) { const { done, value } = await reader.read(); if (done) break; got += value.length }
        out[name] = 'no error'
      } catch (e) { out[name] = { code: e.code, allGood: got <= pt.length } }
    }
    return out
  })
  for (const [name, v] of Object.entries(r)) {
    assert.notEqual(v, 'no error', name)
    assert.match(v.code, /^ERR_HYPERSEAL_(ARMOR|AUTH|FORMAT|TRUNCATED)$/, name)
    assert.ok(v.allGood, name)
  }
  assert.equal(r.flippedPayload.code, 'ERR_HYPERSEAL_AUTH')
})

test('WorkerPool: armored files (large ones too) go through one worker, both ways; the CLI opens them', async () => {
  const key = join(h.work, 'pool.key')
  cli(['keygen', '--kind', 'x25519', '-o', key])
  const pub = cli(['pubkey', '-i', key]).toString().trim()
  const pt = randomBytes(5 << 20) // above PARALLEL_MIN: binary files this large go out in parts
  writeFileSync(join(h.work, 'pool-pt'), pt)
  const fromCli = cli(['encrypt', '-q', '-r', pub, '--armor', join(h.work, 'pool-pt')]).toString()
  const r = await h.inPage(async (hs, { pub, priv, fromCli, pt }) => {
    const bytes = Uint8Array.from(atob(pt), (c) => c.charCodeAt(0))
    const pool = new hs.WorkerPool({ size: 2 })
    try {
      const text = await (await pool.encryptFile(new Blob([bytes]), { publicKey: pub, armor: true })).text()
      const back = new Uint8Array(await (await pool.decryptFile(new Blob([fromCli]), { privateKey: priv })).arrayBuffer())
      return { text, same: back.length === bytes.length && back.every((b, i) => b === bytes[i]) }
    } finally { pool.terminate() }
  }, { pub, priv: readFileSync(key, 'utf8'), fromCli, pt: b64(pt) })
  assert.equal(r.same, true, 'the CLI\'s armored file opens in the pool')
  assert.ok(r.text.startsWith('-----BEGIN HYPERSEAL ENCRYPTED FILE-----\n'))
  writeFileSync(join(h.work, 'pool.hs'), r.text)
  assert.deepEqual(cli(['decrypt', '-q', '-i', key, join(h.work, 'pool.hs')]), pt)
})
