// One operation over the chosen files: each read as a stream from the disk, passed through the
// library's encrypt or decrypt stream and written as it comes (save.js), with the progress
// and speed shown as the bytes go. A large binary file goes through the package's WorkerPool
// instead: the page reads it once, every worker seals (opens) its parts, and the parts are
// written in order as they come. Memory stays flat whatever the size: a few chunks or parts
// at a time.

import { Outputs } from './save.js'
import * as ui from './ui.js'

/**
 * Runs `transform(file)` (a TransformStream of the library) over every file in `chosen` (`[{
 * file, path }]`: the path is the name, or the place under a dropped folder), writing each to
 * `nameOf(path)`, or `parts(file)` where it gives a function: `(writable,
 * onProgress)`, which writes the whole file to `writable` in order and resolves once the last
 * part is checked (WorkerPool's `encryptFileTo`/`decryptFileTo`). `verb` says what is done
 * ("Encrypting"). All or nothing: a failure aborts the write at work and removes every file
 * written so far.
 */
export async function run (chosen, { verb, past, nameOf, transform, parts }) {
  const files = chosen.map((c) => c.file)
  const names = chosen.map((c) => nameOf(c.path))
  const outputs = await Outputs.choose(names)
  const total = files.reduce((n, f) => n + f.size, 0)
  const start = performance.now()
  let before = 0
  try {
    for (const [i, file] of files.entries()) {
      ui.working(`${verb} ${chosen[i].path} (${i + 1} of ${files.length})…`)
      const writable = await outputs.open(i, names[i])
      const report = throttled((n) => ui.progress(before + n, total, (performance.now() - start) / 1000))
      const inParts = parts?.(file)
      if (inParts) {
        // The file appears only when the writable closes, after the last part was checked.
        try {
          await inParts(writable, report)
        } catch (e) {
          await writable.abort().catch(() => {})
          throw e
        }
        await writable.close()
      } else {
        // pipeTo closes the writable (the file appears) only after the transform's flush, which
        // is where the library checks the last chunk; any error aborts it instead, and so does
        // a transform that cannot be made, before pipeTo has it to abort.
        let through
        try {
          through = transform(file)
        } catch (e) {
          await writable.abort().catch(() => {})
          throw e
        }
        await file.stream()
          .pipeThrough(meter(report))
          .pipeThrough(through)
          .pipeTo(writable)
      }
      before += file.size
    }
  } catch (e) {
    await outputs.discard()
    throw e
  }
  const seconds = (performance.now() - start) / 1000
  ui.progress(total, total, seconds)
  const list = files.length === 1 ? `${chosen[0].path} to ${names[0]}` : `${files.length} files (${ui.size(total)})`
  return `${past} ${list}.`
}

/** Counts the bytes going through, telling `report` (a `throttled` one) each count. */
function meter (report) {
  let n = 0
  return new TransformStream({
    transform (chunk, controller) {
      n += chunk.byteLength
      report(n)
      controller.enqueue(chunk)
    },
    flush () { report(n, true) },
  })
}

/** `report(n)` at most every 100 ms, and always when `last`. */
function throttled (report) {
  let at = 0
  return (n, last = false) => {
    const now = performance.now()
    if (last || now - at > 100) { at = now; report(n) }
  }
}
