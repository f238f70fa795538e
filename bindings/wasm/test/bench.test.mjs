// Keeps `npm run bench:browser` from rotting: runs it at a tiny size scale (the figures then
// mean nothing; only the shape is checked) and checks that every peer was measured beside
// hyperseal, after the script's own cross-checks (typage's age file opens with hyperseal and the
// reverse, AEAD outputs open across libraries, digests equal) passed.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PKG_ROOT } from './harness.mjs'

test('bench:browser runs every group with every peer (tiny sizes) and writes its JSON', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hyperseal-bench-browser-'))
  try {
    const json = join(dir, 'browser.json')
    const out = execFileSync(process.execPath, ['bench/browser.mjs', '--quick', '--size-scale', '0.0001', '--json', json], { cwd: PKG_ROOT }).toString()
    const r = JSON.parse(readFileSync(json, 'utf8'))
    assert.match(r.chromium, /^\d+\./)
    assert.ok(r.wasmGzipBytes > 0 && r.wasmGzipBytes < r.wasmBytes)
    const impls = (group) => [...new Set(r.rows.filter((x) => x.group === group).map((x) => x.impl))].sort()
    assert.deepEqual(impls('age file'), ['age-encryption (typage)', 'hyperseal', 'hyperseal/age (typage API)'])
    assert.deepEqual(impls('age file to a passkey (authenticator excluded)'), ['age-encryption (typage)', 'hyperseal'])
    assert.deepEqual(impls('chacha20-poly1305'), ['@noble/ciphers', 'hyperseal aead'])
    assert.deepEqual(impls('aes-256-gcm'), ['@noble/ciphers', 'WebCrypto (crypto.subtle)', 'hyperseal aead'])
    assert.deepEqual(impls('sha-256'), ['WebCrypto (crypto.subtle)', 'hash-wasm', 'hyperseal hash'])
    assert.deepEqual(impls('blake3'), ['hash-wasm', 'hyperseal hash'])
    assert.equal(impls('50-byte messages').length, 7)
    assert.deepEqual(impls('token'), ['hyperseal token'])
    assert.deepEqual([...new Set(r.rows.filter((x) => x.group === 'blake3').map((x) => x.size))], [1, 6, 100, 1600])
    for (const row of r.rows) assert.ok(row.seconds > 0 && Number.isFinite(row.seconds), JSON.stringify(row))
    assert.match(out, /\| age file \| 1600 \| age-encryption \(typage\) \| encrypt \|/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
