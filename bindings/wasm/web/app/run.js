// One operation over the chosen files: each read as a stream from the disk, passed through the
// library's encrypt or decrypt stream and written as it comes (save.js), with the progress
// and speed shown as the bytes go. Memory stays flat whatever the size: a chunk at a time.

import { Outputs } from './save.js'
import * as ui from './ui.js'

/**
 * Runs `transform(file)` (a TransformStream of the library) over every file in `files`, writing
 * each to `nameOf(file.name)`. `verb` says what is done ("Encrypting"). All or nothing: a
 * failure aborts the write at work and removes every file written so far.
 */
export async function run (files, { verb, past, nameOf, transform }) {
  const names = files.map((f) => nameOf(f.name))
  const outputs = await Outputs.choose(names)
  const total = files.reduce((n, f) => n + f.size, 0)
  const start = performance.now()
  let before = 0
  try {
    for (const [i, file] of files.entries()) {
      ui.working(`${verb} ${file.name} (${i + 1} of ${files.length})…`)
      const writable = await outputs.open(i, names[i])
      // pipeTo closes the writable (the file appears) only after the transform's flush, which
      // is where the library checks the last chunk; any error aborts it instead.
      await file.stream()
        .pipeThrough(meter((n) => ui.progress(before + n, total, (performance.now() - start) / 1000)))
        .pipeThrough(transform(file))
        .pipeTo(writable)
      before += file.size
    }
  } catch (e) {
    await outputs.discard()
    throw e
  }
  const seconds = (performance.now() - start) / 1000
  ui.progress(total, total, seconds)
  const list = files.length === 1 ? `${files[0].name} to ${names[0]}` : `${files.length} files (${ui.size(total)})`
  return `${past} ${list}.`
}

/** Counts the bytes going through, telling `report` at most every 100 ms. */
function meter (report) {
  let n = 0
  let last = 0
  return new TransformStream({
    transform (chunk, controller) {
      n += chunk.byteLength
      const now = performance.now()
      if (now - last > 100) { last = now; report(n) }
      controller.enqueue(chunk)
    },
    flush () { report(n) },
  })
}
