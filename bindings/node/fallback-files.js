'use strict'
// Files for the WebAssembly fallback (fallback.js). The native addon writes files through the
// library's `AtomicOutput`; WebAssembly has no file system, so here node:fs does what it does,
// in its words and with its error codes:
//   - the input is read whole, and the output is made whole in memory before anything is written
//     (so a failed or killed run has written nothing);
//   - a regular destination is written as a temporary file in its directory, fsynced, and only
//     then given its name: link(2) for a new file (which refuses a name that appeared meanwhile),
//     rename(2) with `force`; the directory is fsynced after;
//   - an existing file is replaced only with `force`, and the output is 0600 whether new or
//     replaced; a directory and the input itself are refused; FIFOs and devices are written
//     through, never replaced;
//   - a re-keyed file is held open from its read to its replacement: another program's save
//     made meanwhile wins and the call rejects (`replaceIfUnchanged`).
// Unlike the native writer's unnamed O_TMPFILE, the temporary file has a name while it is being
// written: a process killed in that moment leaves `.NAME.XXXXXXXX.hyperseal-tmp` behind.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')

function coded (code, message) {
  return Object.assign(new Error(message), { code })
}

const ioError = (message) => coded('ERR_HYPERSEAL_IO', message)

/** The input, read whole; `what` names it in errors as the native writer does. */
async function readInput (src) {
  let st
  try {
    st = await fs.promises.stat(src)
  } catch (e) {
    throw ioError(`cannot open ${src}: ${e.message}`)
  }
  if (st.isDirectory()) throw ioError(`${src} is a directory`)
  try {
    return { bytes: await fs.promises.readFile(src), stat: st }
  } catch (e) {
    throw ioError(`cannot read ${src}: ${e.message}`)
  }
}

/**
 * What writing `dst` will be: 'new', 'replace' or 'through' (a FIFO or device). Checked before
 * any work is done, as the native writer creates its output first.
 */
async function destination (dst, { force, input }) {
  let st
  try {
    st = await fs.promises.stat(dst)
  } catch (e) {
    if (e.code === 'ENOENT') return { how: 'new' }
    throw ioError(`cannot open ${dst}: ${e.message}`)
  }
  if (st.isDirectory()) throw ioError(`${dst} is a directory`)
  if (!st.isFile()) return { how: 'through' }
  if (input && st.dev === input.dev && st.ino === input.ino) {
    throw coded('ERR_HYPERSEAL_ARGUMENT', `input file is output file: ${dst}`)
  }
  if (!force) throw exists(dst)
  // A replaced output is private (0600) as a new one is, whatever the file it replaces allowed:
  // it may be plaintext (the native writer's rule).
  return { how: 'replace' }
}

const exists = (dst) => ioError(`output file ${dst} already exists (pass force: true to overwrite it)`)

/** Writes `pieces` (Uint8Arrays) to `dst` all-or-nothing, as `destination` decided. */
async function writeAll (dst, pieces, where) {
  if (where.how === 'through') {
    const fh = await fs.promises.open(dst, 'w').catch((e) => { throw ioError(`cannot open ${dst}: ${e.message}`) })
    try {
      for (const p of pieces) await fh.write(p)
    } catch (e) {
      throw ioError(`writing ${dst}: ${e.message}`)
    } finally {
      await fh.close()
    }
    return
  }
  const dir = path.dirname(path.resolve(dst))
  const tmp = path.join(dir, `.${path.basename(dst)}.${crypto.randomBytes(4).toString('hex')}.hyperseal-tmp`)
  try {
    // New files are private (0600), whatever the umask, as the native writer makes them: the
    // output may be plaintext. A re-keyed file keeps its own mode (`where.mode`).
    const fh = await fs.promises.open(tmp, 'wx', where.mode ?? 0o600)
    try {
      for (const p of pieces) await fh.write(p)
      // Set again: `open` applied the umask.
      await fh.chmod(where.mode ?? 0o600)
      await fh.sync()
    } finally {
      await fh.close()
    }
    if (where.how === 'replace') {
      await fs.promises.rename(tmp, dst)
    } else {
      await fs.promises.link(tmp, dst).catch((e) => { throw e.code === 'EEXIST' ? exists(dst) : e })
      await fs.promises.unlink(tmp)
    }
  } catch (e) {
    await fs.promises.unlink(tmp).catch(() => {})
    throw e.code && e.code.startsWith('ERR_HYPERSEAL_') ? e : ioError(`writing ${dst}: ${e.message}`)
  }
  await syncDir(dir)
}

/** The new name is durable once its directory is synced (not possible on Windows: skipped). */
async function syncDir (dir) {
  if (process.platform === 'win32') return
  const fh = await fs.promises.open(dir, 'r')
  try { await fh.sync() } finally { await fh.close() }
}

/**
 * A file to re-key: held open from the read to the replacement, so that a save another program
 * makes meanwhile is seen (`replaceIfUnchanged`).
 */
async function openForRekey (src) {
  let fh
  try {
    fh = await fs.promises.open(src, 'r')
  } catch (e) {
    throw ioError(`cannot open ${src}: ${e.message}`)
  }
  try {
    const stat = await fh.stat({ bigint: true })
    if (stat.isDirectory()) throw ioError(`${src} is a directory`)
    return { fh, stat, bytes: await fs.promises.readFile(fh) }
  } catch (e) {
    await fh.close()
    throw e.code && e.code.startsWith('ERR_HYPERSEAL_') ? e : ioError(`cannot read ${src}: ${e.message}`)
  }
}

const changedByAnother = (p) => ioError(`${p} was changed by another program while it was being re-keyed; it is as that program left it`)

/**
 * Whether the name `p` still names the file that was read, unchanged (its size and modification
 * time); and, while it is open, so does the file behind `input.fh`.
 */
async function unchanged (p, input) {
  const named = await fs.promises.lstat(p, { bigint: true }).catch(() => null)
  const now = input.fh === null ? named : await input.fh.stat({ bigint: true })
  const was = input.stat
  return named !== null && named.ino === was.ino && named.dev === was.dev &&
    now.size === was.size && now.mtimeNs === was.mtimeNs
}

/**
 * Replaces the re-keyed file `p` by `pieces` (mode `mode`) unless another program saved it since
 * it was read, as the native re-key promises: its save wins, and the call rejects. Without the
 * kernel's write lease (which Node cannot take), the old file keeps a second name while the new
 * one is renamed into place, and its bytes are checked once more after: a save that landed in
 * that moment is put back.
 */
async function replaceIfUnchanged (p, pieces, mode, input) {
  const dir = path.dirname(path.resolve(p))
  const tmp = path.join(dir, `.${path.basename(p)}.${crypto.randomBytes(4).toString('hex')}.hyperseal-tmp`)
  const old = path.join(dir, `.${path.basename(p)}.hyperseal-old`)
  try {
    const fh = await fs.promises.open(tmp, 'wx', mode)
    try {
      for (const piece of pieces) await fh.write(piece)
      await fh.chmod(mode)
      await fh.sync()
    } finally {
      await fh.close()
    }
    if (!await unchanged(p, input)) throw changedByAnother(p)
    await fs.promises.link(p, old)
    // Closed before the rename: Windows cannot replace a file that is open. The second name
    // keeps the old file reachable for the check after.
    await input.fh.close()
    input.fh = null
    await fs.promises.rename(tmp, p)
    if (!await unchanged(old, input)) {
      await fs.promises.rename(old, p)
      throw changedByAnother(p)
    }
    await fs.promises.unlink(old)
  } catch (e) {
    await fs.promises.unlink(tmp).catch(() => {})
    await fs.promises.unlink(old).catch(() => {})
    throw e.code && e.code.startsWith('ERR_HYPERSEAL_') ? e : ioError(`writing ${p}: ${e.message}`)
  }
  await syncDir(dir)
}

module.exports = { readInput, destination, writeAll, ioError, openForRekey, replaceIfUnchanged }
