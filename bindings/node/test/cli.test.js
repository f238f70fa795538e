'use strict'
// Interop with the CLI both ways: keys, buffers, files and streams. Skips when no CLI binary.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { pipeline } = require('node:stream/promises')
const { hs, KINDS, keyOrNull, tmpdir, cliBin } = require('./helpers')

const bin = cliBin()
const skip = bin ? false : 'CLI binary not found: set HYPERSEAL_BIN or build with `cargo build --release -p hyperseal-cli`'

function cli (args, input) {
  return execFileSync(bin, args, { input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] })
}

for (const kind of KINDS) {
  test(`CLI ↔ Node with ${kind} keys`, { skip }, async (t) => {
    const key = keyOrNull(kind)
    if (!key) return t.skip(`${kind}: not available in this build (backend ${hs.backend})`)
    const dir = tmpdir()
    const idFile = path.join(dir, 'node.key')
    fs.writeFileSync(idFile, key.privateKey + '\n')
    // The CLI derives the same public key from Node's private key.
    assert.equal(cli(['pubkey', '-i', idFile]).toString().trim(), key.publicKey.trim())
    const data = crypto.randomBytes(300000)
    // Node → CLI
    const fromNode = await hs.encryptByPublicKeyAsync(data, key.publicKey)
    assert.deepEqual(cli(['decrypt', '-i', idFile], fromNode), data)
    // CLI → Node (binary and armored)
    const fromCli = cli(['encrypt', '-r', key.publicKey], data)
    assert.deepEqual(hs.decryptByPrivateKey(fromCli, key.privateKey), data)
    const armored = cli(['encrypt', '-a', '-r', key.publicKey], data)
    assert.match(armored.toString('latin1', 0, 40), /^-----BEGIN/)
    assert.deepEqual(await hs.decryptByPrivateKeyAsync(armored, key.privateKey), data)
    fs.rmSync(dir, { recursive: true })
  })
}

test('CLI keygen output is a valid Node private key; files and streams interoperate', { skip }, async () => {
  const dir = tmpdir()
  const idFile = path.join(dir, 'cli.key')
  cli(['keygen', '-o', idFile])
  const identity = fs.readFileSync(idFile, 'utf8')
  const publicKey = cli(['pubkey', '-i', idFile]).toString().trim()
  assert.equal(hs.publicKeyOf(identity), publicKey)

  const src = path.join(dir, 'src.bin')
  const data = crypto.randomBytes((3 << 20) + 5)
  fs.writeFileSync(src, data)
  // encryptFile → CLI decrypt
  await hs.encryptFile(src, src + '.hs', { publicKey })
  cli(['decrypt', '-i', idFile, '-o', path.join(dir, 'a.out'), src + '.hs'])
  assert.deepEqual(fs.readFileSync(path.join(dir, 'a.out')), data)
  // CLI encrypt → decryptFile and createDecryptStream
  cli(['encrypt', '-r', publicKey, '-o', path.join(dir, 'b.hs'), src])
  await hs.decryptFile(path.join(dir, 'b.hs'), path.join(dir, 'b.out'), { privateKey: identity })
  assert.deepEqual(fs.readFileSync(path.join(dir, 'b.out')), data)
  await pipeline(fs.createReadStream(path.join(dir, 'b.hs')), hs.createDecryptStream({ privateKey: identity }), fs.createWriteStream(path.join(dir, 'c.out')))
  assert.deepEqual(fs.readFileSync(path.join(dir, 'c.out')), data)
  // createEncryptStream → CLI
  await pipeline(fs.createReadStream(src), hs.createEncryptStream({ publicKey }), fs.createWriteStream(path.join(dir, 'd.hs')))
  cli(['decrypt', '-i', idFile, '-o', path.join(dir, 'd.out'), path.join(dir, 'd.hs')])
  assert.deepEqual(fs.readFileSync(path.join(dir, 'd.out')), data)
  // age-format files made by the CLI decrypt in Node too.
  const ageFile = cli(['encrypt', '--format', 'age', '-r', publicKey], data.subarray(0, 100000))
  assert.deepEqual(hs.decryptByPrivateKey(ageFile, identity), data.subarray(0, 100000))
  fs.rmSync(dir, { recursive: true })
})
