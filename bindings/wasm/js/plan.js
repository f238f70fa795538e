// How a file is cut into parts across workers, and what a part key hands them once it is made:
// shared by the page's WorkerPool (js/workers.js) and each worker (js/worker.js), so a worker
// imports nothing that starts workers.

/**
 * Bytes inputs: the most plaintext one part holds (see `bytesPartSize`). It bounds the memory
 * in flight and kept for reuse (two or three buffers of a part per worker) and the time one
 * part takes.
 */
export const BYTES_PART_MAX = 8 << 20

/**
 * Plaintext per part for `n` bytes in `chunk`-byte chunks across `workers`: two parts per
 * worker (one in flight, one queued: few round trips, and no worker waits for the page's
 * copies), at most `BYTES_PART_MAX`, whole chunks (the library checks the plan).
 */
export function bytesPartSize (n, chunk, workers) {
  const chunks = Math.max(1, Math.ceil(n / chunk))
  return Math.max(1, Math.min(Math.ceil(chunks / (2 * workers)), Math.floor(BYTES_PART_MAX / chunk))) * chunk
}

/** A new file's part key (freed here) as the workers take it: its head, bytes and plan for `total` bytes. */
export function sealBegun (key, total, workers) {
  try {
    const partSize = bytesPartSize(total, key.chunkSize, workers)
    return { head: key.head(), key: key.toBytes(), plan: key.plan(partSize), partSize }
  } finally {
    key.free()
  }
}

/** An opened file's part key (freed here) as the workers take it: its bytes, plan and plaintext size. */
export function openBegun (key, workers) {
  try {
    const n = key.plaintextLength
    return { key: key.toBytes(), plan: key.plan(bytesPartSize(n, key.chunkSize, workers)), plaintextLength: n }
  } finally {
    key.free()
  }
}
