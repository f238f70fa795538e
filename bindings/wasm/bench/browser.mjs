// `npm run bench:browser` (and the `browser` table of `make bench`): hyperseal's WebAssembly
// build against the libraries browser code uses today, in one headless Chromium page with the
// same inputs — @noble/ciphers, WebCrypto, hash-wasm, crypto-js, node-forge and age-encryption
// (typage). Prints a table and, with --json FILE, writes every figure with the machine's details.
//
//   node bench/browser.mjs [--quick | --full] [--size-scale F] [--groups age,passkey,pool,aead] [--json FILE]
//
// --quick: 1 KB, 64 KB, 1 MB, 16 MB; --full: 1 KB … 100 MB. --size-scale multiplies the sizes
// (tests use a tiny one: the figures then mean nothing). Before timing, every pair of
// implementations is checked to agree; a disagreement fails the run.

import { cpus } from 'node:os'
import { readFileSync, writeFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildPeers, withPage } from './chromium.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const flag = (name) => args.includes(name)
const value = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined }

const full = flag('--full')
const scale = Number(value('--size-scale') ?? 1)
const nominal = full ? [1e3, 64e3, 1e6, 10e6, 100e6] : [1e3, 64e3, 1e6, 16e6]
const sizes = nominal.map((n) => Math.max(1, Math.round(n * scale)))
const tiny = scale < 0.01
// WorkerPool against one stream: more sizes around the crossover (js/workers.js).
const poolNominal = full ? [64e3, 256e3, 1e6, 2e6, 4e6, 16e6, 100e6] : [64e3, 256e3, 1e6, 2e6, 4e6, 16e6]
const poolSizes = poolNominal.map((n) => Math.max(1, Math.round(n * scale)))
// --groups age,passkey,pool,aead (aead = everything after the pool groups): only those, for quick A/B.
const groups = value('--groups')?.split(',')
const options = { sizes, poolSizes, groups, sampleMs: tiny ? 5 : full ? 300 : 100, samples: tiny ? 3 : full ? 9 : 5 }

await buildPeers()

/**
 * One page load: the bench with `opts`, its checks and rows. `isolated` sends COOP/COEP (the
 * page is cross-origin isolated, WorkerPool shares memory with its workers) or not (the pool
 * moves transferable ArrayBuffers).
 */
function runPage (opts, isolated) {
  return withPage('/bench/page.html', { isolated, host: 'localhost' }, async (page, context) => {
    await page.waitForFunction(() => typeof window.bench === 'function' && window.peers !== undefined)
    // The passkey group's authenticator: Chromium's virtual CTAP2 one (DevTools WebAuthn domain).
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2', ctap2Version: 'ctap2_1', transport: 'internal', hasResidentKey: true,
        hasUserVerification: true, isUserVerified: true, hasPrf: true, automaticPresenceSimulation: true,
      },
    })
    const r = await page.evaluate((o) => window.bench({ ...o, authenticator: true }), opts)
    r.chromium = context.browser()?.version() ?? await page.evaluate(() => navigator.userAgent)
    r.isolated = await page.evaluate(() => globalThis.crossOriginIsolated === true)
    return r
  })
}

// The WorkerPool groups run on both of its memory paths: the page as served (isolated), then
// again without COOP/COEP; their group names say which.
const POOL_GROUP = /WorkerPool|all cores/
const path = (isolated) => isolated ? 'SharedArrayBuffer, COOP/COEP' : 'transferables, no COOP/COEP'
const result = await runPage(options, true)
for (const r of result.rows) if (POOL_GROUP.test(r.group)) r.group += ` [${path(result.isolated)}]`
if (!groups || groups.includes('pool')) {
  const moved = await runPage({ ...options, groups: ['pool'] }, false)
  for (const r of moved.rows) if (POOL_GROUP.test(r.group)) result.rows.push({ ...r, group: `${r.group} [${path(moved.isolated)}]` })
  for (const [k, ok] of Object.entries(moved.checks)) result.checks[`${k} (${path(moved.isolated)})`] = ok
}

const failed = Object.entries(result.checks).filter(([, ok]) => !ok).map(([k]) => k)
if (failed.length > 0) {
  console.error(`bench:browser: implementations disagree: ${failed.join(', ')}`)
  process.exit(1)
}

const wasm = readFileSync(join(ROOT, 'pkg/hyperseal_bg.wasm'))
const report = {
  profile: full ? 'full' : 'quick',
  sizeScale: scale,
  chromium: result.chromium,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  wasmBytes: wasm.length,
  wasmGzipBytes: gzipSync(wasm, { level: 9 }).length,
  rows: result.rows,
}
if (value('--json')) writeFileSync(value('--json'), JSON.stringify(report, null, 2) + '\n')

// The table: per group, size and operation, each implementation's time, MB/s and speed relative
// to hyperseal's row (above 1: hyperseal is faster).
const fmtTime = (s) => s >= 1 ? `${s.toFixed(2)} s` : s >= 1e-3 ? `${(s * 1e3).toFixed(2)} ms` : `${(s * 1e6).toFixed(1)} µs`
console.log(`# hyperseal in Chromium ${report.chromium} on ${report.cpu} (${report.cores} cores); .wasm ${report.wasmGzipBytes} bytes gzipped`)
console.log('| group | size | implementation | op | time | MB/s | hyperseal ÷ this |')
console.log('|---|---|---|---|---|---|---|')
for (const r of report.rows) {
  const ours = report.rows.find((o) => o.group === r.group && o.size === r.size && o.op === r.op && o.impl.startsWith('hyperseal'))
  const ratio = ours ? (r.seconds / ours.seconds).toFixed(2) : '–'
  console.log(`| ${r.group} | ${r.size} | ${r.impl} | ${r.op} | ${fmtTime(r.seconds)} | ${(r.size / r.seconds / 1e6).toFixed(1)} | ${ratio} |`)
}
