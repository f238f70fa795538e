// What the large-file test and the web app's bench measure with: a big random file on the
// disk, and the resident memory of the Chromium renderers started on one profile (a page,
// its service worker and their workers, which are threads of those processes), read from /proc.

import { createHash, randomFillSync } from 'node:crypto'
import { openSync, writeSync, closeSync, readFileSync, readdirSync } from 'node:fs'

/** Writes `size` random bytes to `path` and returns their SHA-256 (hex). */
export function bigFile (path, size) {
  const fd = openSync(path, 'w')
  const sum = createHash('sha256')
  const block = Buffer.alloc(1 << 20)
  for (let at = 0; at < size; at += block.length) {
    randomFillSync(block)
    const part = block.subarray(0, Math.min(block.length, size - at))
    sum.update(part)
    writeSync(fd, part)
  }
  closeSync(fd)
  return sum.digest('hex')
}

/** The resident memory, in bytes, of the renderers of the browser whose command line names `profile`. */
export function rendererMemory (profile) {
  let total = 0
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (!cmd.includes('--type=renderer') || !descends(pid, profile)) continue
      const rss = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
      if (rss) total += Number(rss[1]) * 1024
    } catch {
      // The process ended while it was read.
    }
  }
  return total
}

/** Whether `pid` descends from the browser started on `profile`. */
function descends (pid, profile) {
  for (let p = pid, hops = 0; p > 1 && hops < 8; hops++) {
    if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(profile)) return true
    p = Number(readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1])
  }
  return false
}

/**
 * Runs `op` while sampling the renderers' memory every 100 ms; returns `{ seconds, peak }`,
 * its wall time and its peak memory above `idle` (bytes).
 */
export async function measured (profile, idle, op) {
  let peak = 0
  const timer = setInterval(() => { peak = Math.max(peak, rendererMemory(profile)) }, 100)
  const start = performance.now()
  try {
    await op()
  } finally {
    clearInterval(timer)
  }
  const seconds = (performance.now() - start) / 1000
  return { seconds, peak: Math.max(0, Math.max(peak, rendererMemory(profile)) - idle) }
}
