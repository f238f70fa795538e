// The keys a person gives, as the library takes them: one key per line of a textbox, a
// passkey's identity string (`AGE-PLUGIN-FIDO2PRF-1…`, typage's) as the library's WebAuthn
// recipient. Every key is parsed and checked by the library, which also refuses a mix of
// post-quantum and classic recipients; this file only splits lines.

import { createCredential, generateKeyPair, WebAuthnRecipient, WebAuthnIdentity, EncryptSession, DecryptSession } from '../js/index.js'

/** typage's identity strings for passkeys start so (the library parses the rest). */
const PASSKEY = 'AGE-PLUGIN-FIDO2PRF-1'

/** The non-empty lines of a textbox, without `#` comments (as in age's key files). */
export function lines (text) {
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
}

const isPasskey = (line) => line.toUpperCase().startsWith(PASSKEY)

/**
 * The recipients of the Recipients box for `createEncryptStream`: strings, and passkeys as
 * WebAuthnRecipients. A passkey alone is refused (its files would die with the site), and the
 * keys are checked by the library now, before a save dialog opens or a byte is written.
 */
export function recipients (text) {
  const all = lines(text)
  const keys = all.filter((l) => !isPasskey(l))
  const passkeys = all.filter(isPasskey).map((identity) => new WebAuthnRecipient({ identity }))
  if (passkeys.length > 0 && keys.length === 0) {
    throw new Error('A passkey cannot be the only recipient, since its files could not be opened without this site: add a recovery key or another recipient.')
  }
  // A session made and dropped: the library parses every key and applies age's rules on mixing.
  if (keys.length > 0) new EncryptSession(keys, { format: 'age' }).free()
  return [...keys, ...passkeys]
}

/** An OpenSSH private key as `ssh-keygen` writes it: a block of lines, one key. */
const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g

/**
 * The identities of the Identities box (with the chosen passkey when `passkey`): each private
 * key block whole (an SSH key), the other lines one by one. The keys are checked by the library
 * now, before a save dialog opens or a byte is written.
 */
export function identities (text, passkey) {
  const blocks = []
  const rest = text.replace(PEM_BLOCK, (block) => { blocks.push(block); return '\n' })
  const keys = [...blocks, ...lines(rest)]
  if (keys.length > 0) new DecryptSession(keys, {}).free()
  return passkey ? [new WebAuthnIdentity(), ...keys] : keys
}

/**
 * Creates a passkey (the browser's dialog; a name through `prompt()`) and returns the lines to
 * add to the Recipients box: its identity string and, when `text` has no other recipient, a new
 * post-quantum recovery key's recipient, with that key (`recovery`) to show once.
 */
export async function addPasskey (text) {
  const name = window.prompt('A name for the new passkey:', 'hyperseal')
  if (name === null) return null
  const identity = await createCredential({ keyName: name.trim() || 'hyperseal', type: 'passkey' })
  const others = lines(text).filter((l) => !isPasskey(l))
  if (others.length > 0) return { add: [identity], recovery: null }
  const pair = generateKeyPair({ kind: 'hybrid' })
  return { add: [identity, pair.publicKey], recovery: pair }
}
