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
//     made meanwhile wins and the call rejects (`replaceIfUnchanged`); the new file keeps the
//     old one's owner, group and mode (`keepOwnerAndMode`); on Linux, where the native re-key
//     also copies extended attributes and ACLs, which node:fs can neither read nor write, a
//     re-key that would replace the file is refused (`refuseRewriteOver`).
// Unlike the native writer's unnamed O_TMPFILE, the temporary file has a name while it is being
// written: a process killed in that moment leaves `.NAME.XXXXXXXX.hyperseal-tmp` behind, and one
// killed while a re-keyed file's old version has its second name leaves that too
// (`.NAME.XXXXXXXX.hyperseal-old`). Every name made beside the file is random and created
// exclusively, and is removed only while it still names the file this call made there
// (`sideName`, `removeOwn`): in a shared directory, another user's file at a guessed name is
// never written through or removed.

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
  let tmp = null
  try {
    // New files are private (0600), whatever the umask, as the native writer makes them: the
    // output may be plaintext.
    tmp = await created(sideName(dir, dst, 'hyperseal-tmp'))
    try {
      for (const p of pieces) await tmp.fh.write(p)
      // Set again: `open` applied the umask.
      await tmp.fh.chmod(0o600)
      await tmp.fh.sync()
    } finally {
      await tmp.fh.close()
    }
    if (where.how === 'replace') {
      await fs.promises.rename(tmp.name, dst)
      tmp = null
    } else {
      await fs.promises.link(tmp.name, dst).catch((e) => { throw e.code === 'EEXIST' ? exists(dst) : e })
      await removeOwn(tmp)
      tmp = null
    }
  } catch (e) {
    await removeOwn(tmp)
    throw e.code && e.code.startsWith('ERR_HYPERSEAL_') ? e : ioError(`writing ${dst}: ${e.message}`)
  }
  await syncDir(dir)
}

/**
 * A name beside `p` in `dir` that nobody can guess ahead (`.NAME.XXXXXXXX.KIND`): one that
 * exists already makes the call fail, never gets written through or removed.
 */
function sideName (dir, p, kind) {
  return path.join(dir, `.${path.basename(p)}.${crypto.randomBytes(4).toString('hex')}.${kind}`)
}

/** `name`, created here and only here (O_EXCL), 0600; open, with the identity it was made with. */
async function created (name) {
  const fh = await fs.promises.open(name, 'wx', 0o600)
  try {
    const st = await fh.stat({ bigint: true })
    return { name, fh, dev: st.dev, ino: st.ino }
  } catch (e) {
    // Left in place: without its identity, the name cannot be told from one put there since.
    await fh.close()
    throw e
  }
}

/**
 * Removes a name this call made (`{ name, dev, ino }`), only while it still names that file:
 * a name renamed away or replaced since is left to whoever did it.
 */
async function removeOwn (made) {
  if (made === null) return
  const now = await fs.promises.lstat(made.name, { bigint: true }).catch(() => null)
  if (now !== null && now.dev === made.dev && now.ino === made.ino) {
    await fs.promises.unlink(made.name).catch(() => {})
  }
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
 * Replaces the re-keyed file `p` by `pieces` unless another program saved it since it was read,
 * as the native re-key promises: its save wins, and the call rejects. Without the kernel's write
 * lease (which Node cannot take), the old file keeps a second name while the new one is renamed
 * into place, and its bytes are checked once more after: a save that landed in that moment is
 * put back. The new file keeps the old one's owner, group and mode, or the call is refused with
 * nothing changed, as the native rewrite is.
 */
async function replaceIfUnchanged (p, pieces, input) {
  // Before anything is created beside the file.
  refuseRewriteOver(p)
  const dir = path.dirname(path.resolve(p))
  let tmp = null
  let old = null
  try {
    tmp = await created(sideName(dir, p, 'hyperseal-tmp'))
    try {
      for (const piece of pieces) await tmp.fh.write(piece)
      await keepOwnerAndMode(tmp.fh, input.stat, p)
      await tmp.fh.sync()
    } finally {
      await tmp.fh.close()
    }
    if (!await unchanged(p, input)) throw changedByAnother(p)
    old = await secondName(p, sideName(dir, p, 'hyperseal-old'), input)
    // Closed before the rename: Windows cannot replace a file that is open. The second name
    // keeps the old file reachable for the check after.
    await input.fh.close()
    input.fh = null
    await fs.promises.rename(tmp.name, p)
    tmp = null
    if (!await unchanged(old.name, input)) {
      await fs.promises.rename(old.name, p)
      old = null
      throw changedByAnother(p)
    }
    await removeOwn(old)
    old = null
  } catch (e) {
    await removeOwn(tmp)
    await removeOwn(old)
    throw e.code && e.code.startsWith('ERR_HYPERSEAL_') ? e : ioError(`writing ${p}: ${e.message}`)
  }
  await syncDir(dir)
}

/**
 * Links the held file (`p`, as read) at `name`, which link(2) creates only where nothing is;
 * refused, and the new name removed, if `p` no longer named that file.
 */
async function secondName (p, name, input) {
  await fs.promises.link(p, name)
  const st = await fs.promises.lstat(name, { bigint: true })
  const made = { name, dev: st.dev, ino: st.ino }
  if (st.dev !== input.stat.dev || st.ino !== input.stat.ino) {
    await removeOwn(made)
    throw changedByAnother(p)
  }
  return made
}

const notKept = (p, why) => ioError(`${p}: the rewritten file could not keep the original's owner, mode or attributes (${why}); nothing changed`)

/**
 * The owner, group and mode of the file read (`was`) on the new file, as the native rewrite
 * sets them (fchown, then fchmod, which fchown's clearing of set-user-ID bits makes the last
 * word). An owner or group this process may not give (another user's file, a group it is not in)
 * refuses the re-key: the file would otherwise change hands behind its owner's back.
 */
async function keepOwnerAndMode (fh, was, p) {
  const now = await fh.stat({ bigint: true })
  // Windows reports no owner (0) and Node's chown does nothing there.
  if (process.platform !== 'win32' && (now.uid !== was.uid || now.gid !== was.gid)) {
    await fh.chown(Number(was.uid), Number(was.gid)).catch((e) => { throw notKept(p, `${e.code}: cannot give it owner ${was.uid} and group ${was.gid}`) })
  }
  await fh.chmod(Number(was.mode & 0o7777n)).catch((e) => { throw notKept(p, `${e.code}: ${e.message}`) })
}

/**
 * Refuses to replace the file `p` by a new one where that could drop what the native re-key
 * keeps: on Linux it copies the file's extended attributes (POSIX ACLs among them, as
 * `system.posix_acl_*`), and node:fs has no call to read or set them, so whether a file has any
 * cannot even be seen. Refused for every file rather than guessed, and no program on the host
 * is run to list them: a library must not depend on, or execute, whatever the PATH finds.
 * Elsewhere the native re-key keeps owner, group and mode only, and so does the rewrite here.
 */
function refuseRewriteOver (p) {
  if (process.platform !== 'linux') return
  throw notKept(p, 'the WebAssembly build cannot see or copy extended attributes and ACLs, which the native re-key keeps on Linux; write the re-keyed file elsewhere with `output`, or use the native addon')
}

module.exports = { readInput, destination, writeAll, ioError, openForRekey, replaceIfUnchanged, refuseRewriteOver }
