// What the page tells the person: the `status` region (rewritten by each operation, ending in
// "Done" when it succeeds), the `alert` (one plain sentence, cleared when the next operation
// starts), the progress bar and the speed. Messages come from the library's errors as they are;
// this file only makes each one a sentence. Nothing here ever shows a key or a passphrase: the
// library's messages name kinds of keys, never their values.

const $ = (id) => document.getElementById(id)

/** A new operation: clears the last alert and says what is being done. */
export function begin (what) {
  $('alert').textContent = ''
  $('status').textContent = what
  $('status').dataset.state = 'working'
  progress(0, 0, 0)
  for (const b of document.querySelectorAll('button.primary, #enc-passkey, #dec-passkey')) b.disabled = true
}

/** The operation ended well: `what` and then "Done". */
export function done (what) {
  $('status').textContent = what ? `${what} Done` : 'Done'
  $('status').dataset.state = 'done'
  end()
}

/** The operation failed: one sentence in the alert; the status says nothing was kept. */
export function failed (error, kept = 'Nothing was written.') {
  $('status').textContent = kept
  $('status').dataset.state = 'failed'
  $('alert').textContent = sentence(error)
  progress(0, 0, 0)
  end()
}

/** Progress between operations and the current speed in MB/s (decimal megabytes). */
export function progress (bytes, total, seconds) {
  const bar = $('progress')
  bar.value = total > 0 ? Math.min(100, Math.floor((bytes / total) * 100)) : 0
  $('speed').textContent = seconds > 0.05 ? `${(bytes / seconds / 1e6).toFixed(1)} MB/s` : ''
}

/** Says what is being done while the bar moves (the name of the file at work). */
export function working (what) {
  $('status').textContent = what
}

function end () {
  for (const b of document.querySelectorAll('button.primary, #enc-passkey, #dec-passkey')) b.disabled = false
}

/**
 * One plain sentence from an error: the library's message (already one clause, lowercase, no
 * full stop), capitalised and ended; a browser's own errors where a person cancelled a dialog.
 */
export function sentence (error) {
  if (error?.name === 'AbortError' && !error.code) return 'The file dialog was closed, so nothing was saved.'
  if (error?.name === 'NotAllowedError' && !error.code) return 'The browser did not allow the page to write there.'
  const text = String(error?.message ?? error ?? 'Something went wrong').trim().replace(/\s+/g, ' ')
  const capital = text.charAt(0).toUpperCase() + text.slice(1)
  return /[.!?]$/.test(capital) ? capital : `${capital}.`
}

/** A size for people: 1.5 MB, 320 kB, 12 B. */
export function size (n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} kB`
  return `${n} B`
}
