// Types of the browser package (js/index.js, js/node.js and js/core.js export the same names).
// Every function throws (or rejects with) an Error whose `code` is one of `ErrorCode`.

/** The stable error codes, as in the Node package's `ERROR_CODES`. */
export type ErrorCode =
  | 'ERR_HYPERSEAL_AUTH' | 'ERR_HYPERSEAL_NO_IDENTITY' | 'ERR_HYPERSEAL_FORMAT' | 'ERR_HYPERSEAL_KEY'
  | 'ERR_HYPERSEAL_ARGUMENT' | 'ERR_HYPERSEAL_IO' | 'ERR_HYPERSEAL_TOKEN_EXPIRED' | 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY'
  | 'ERR_HYPERSEAL_LIMIT'

/** An error thrown by the package. */
export interface HypersealError extends Error { code: ErrorCode }

/** Bytes, or a string taken as its UTF-8 bytes. */
export type Data = Uint8Array | string

/** Key kinds available on WebAssembly (RSA is native-only). */
export type KeyKind = 'hybrid' | 'x25519' | 'mlkem1024'

export interface FileOptions extends KeyOptions {
  /** 'hyperseal' (default) or 'age' (X25519 and hybrid keys only). */
  format?: 'hyperseal' | 'age'
  /** ASCII armor (PEM-style, `-----BEGIN HYPERSEAL ENCRYPTED FILE-----` / age's). */
  armor?: boolean
}

export interface KeyOptions {
  /**
   * Allow a key that names an age plugin (`age1NAME1…`, `AGE-PLUGIN-NAME-1…`). Default false:
   * such keys are refused with ERR_HYPERSEAL_KEY. A browser runs no plugin programs, so an
   * allowed one then fails as not found.
   */
  allowPlugins?: boolean
}

/** Loads the module; the `hyperseal` and `hyperseal/wasm` entries have already done it. */
export default function init (options?: { module_or_path?: RequestInfo | URL | Response | BufferSource | WebAssembly.Module }): Promise<unknown>

export function errorCodes (): ErrorCode[]
export function generateKeyPair (options?: { kind?: KeyKind }): { publicKey: string, privateKey: string }
export function publicKeyOf (privateKey: string): string
export function encryptByPublicKey (data: Data, publicKey: string | string[], options?: FileOptions): Uint8Array
export function decryptByPrivateKey (data: Data, privateKey: string, options?: KeyOptions): Uint8Array
export function encryptWithPassphrase (data: Data, passphrase: string, options?: FileOptions): Uint8Array
export function decryptWithPassphrase (data: Data, passphrase: string): Uint8Array

// ── passkeys and security keys (WebAuthn PRF; typage's names and options) ────────────────────

/** Options of `WebAuthnRecipient` and `WebAuthnIdentity`, as typage's. */
export interface WebAuthnOptions {
  /** The identity string from `createCredential` (`AGE-PLUGIN-FIDO2PRF-1…`): required for a security key; for a passkey it spares the user the choice. */
  identity?: string
  /** The relying party of a discoverable credential (ignored with `identity`, which names it). Default: this page's host. */
  rpId?: string
}
/** A passkey or security key to encrypt to. Taken by the Async one-shots, the streams, WorkerPool and rekeyFile. */
export class WebAuthnRecipient { constructor (options?: WebAuthnOptions) }
/** A passkey or security key to decrypt with. Taken by the Async one-shots, the streams, WorkerPool, decryptRange and rekeyFile. */
export class WebAuthnIdentity { constructor (options?: WebAuthnOptions) }
/** Creates a credential (user verification and the PRF extension required) and returns its identity string. */
export function createCredential (options: { keyName: string, type?: 'passkey' | 'security-key', rpId?: string }): Promise<string>
/** The same three under typage's namespace (`webauthn.WebAuthnRecipient`, …). */
export const webauthn: { createCredential: typeof createCredential, WebAuthnRecipient: typeof WebAuthnRecipient, WebAuthnIdentity: typeof WebAuthnIdentity }

/** A public key string, or a passkey. */
export type RecipientKey = string | WebAuthnRecipient | WebAuthnIdentity
/** A private key string, or a passkey. */
export type IdentityKey = string | WebAuthnIdentity | WebAuthnRecipient

/** `encryptByPublicKey` as a promise; also takes passkeys (the authenticator is asked first). */
export function encryptByPublicKeyAsync (data: Data, publicKey: RecipientKey | RecipientKey[], options?: FileOptions): Promise<Uint8Array>
/** `decryptByPrivateKey` as a promise; also takes passkeys (asked for the file's passkey stanza). */
export function decryptByPrivateKeyAsync (data: Data, privateKey: IdentityKey | IdentityKey[], options?: KeyOptions): Promise<Uint8Array>

export type EncryptStreamOptions = ({ publicKey: RecipientKey | RecipientKey[] } | { passphrase: string }) & { format?: 'hyperseal' | 'age', armor?: boolean } & KeyOptions
export type DecryptStreamOptions = ({ privateKey: IdentityKey | IdentityKey[] } | { passphrase: string }) & KeyOptions

export function createEncryptStream (options: EncryptStreamOptions): TransformStream<Data, Uint8Array>
export function createDecryptStream (options: DecryptStreamOptions): TransformStream<Uint8Array, Uint8Array>
export function encryptStream (readable: ReadableStream<Data>, options: EncryptStreamOptions): ReadableStream<Uint8Array>
export function decryptStream (readable: ReadableStream<Uint8Array>, options: DecryptStreamOptions): ReadableStream<Uint8Array>

/** Push-based sessions under the streams: `push` returns the bytes ready, `final` the rest. */
export class EncryptSession {
  constructor (publicKey: string | string[], options?: FileOptions)
  static withPassphrase (passphrase: string, options?: FileOptions): EncryptSession
  push (data: Uint8Array): Uint8Array
  final (): Uint8Array
  free (): void
}
export class DecryptSession {
  constructor (privateKey: string, options?: KeyOptions)
  static withPassphrase (passphrase: string): DecryptSession
  push (data: Uint8Array): Uint8Array
  final (): Uint8Array
  free (): void
}

/**
 * Plaintext bytes `offset … offset + length` of an encrypted `Blob`/`File` (binary hyperseal or
 * age), reading only what the library's random-access reader needs (header, final chunk, the
 * chunks of the range). Fewer bytes at the end, none past it.
 */
export function decryptRange (blob: Blob, privateKey: IdentityKey | IdentityKey[], offset: number, length: number, options?: KeyOptions): Promise<Uint8Array>

/** Who should open a file after a re-key (the same names as the Node package's). */
export interface RekeyOptions extends KeyOptions {
  /** The full new recipient list: replaces every stanza. Exclusive with `add` and `remove`. */
  recipients?: RecipientKey | RecipientKey[]
  /** Recipients to add; every other stanza is kept. A passkey here: `rekeyFile` only. */
  add?: RecipientKey | RecipientKey[]
  /** Recipients to remove (kinds whose stanzas name their key, and passkeys, which the authenticator names: X25519 and post-quantum ones are anonymous, give `recipients` instead). */
  remove?: RecipientKey | RecipientKey[]
  /** Open a passphrase-encrypted file with this passphrase (pass `null` as the identities). */
  passphrase?: string
  /** Allow a result that none of the given identities opens (default false: refused). */
  removeOwn?: boolean
}

/** What changed: stanza types before and after (slack left out), stanzas removed and added. */
export interface RekeyReport {
  before: string[]
  after: string[]
  removed: number
  added: number
  /** Always false in a page: the result is a new Blob. */
  inPlace: boolean
}

/**
 * Re-keys a binary hyperseal or age file in memory without re-encrypting it: the new header,
 * then the old salt and payload. Same length as `data` where the new header fits the old one.
 */
export function rekey (data: Uint8Array, identities: string | string[] | null, options: RekeyOptions): Uint8Array

/**
 * Re-keys an encrypted `Blob`/`File` reading only its header: `blob` is the new header followed
 * by a slice of the original (a `File` of the same name when given one; `null` with `dryRun`).
 */
export function rekeyFile (file: Blob, identities: IdentityKey | IdentityKey[] | null, options: RekeyOptions & { dryRun?: boolean }): Promise<RekeyReport & { blob: Blob | null }>

// ── toolkit (as in the Node package; signatures and hazmat modes are native-only) ─────────────

export type HashAlgorithm = 'sha256' | 'sha384' | 'sha512' | 'sha3-256' | 'sha3-512' | 'blake2b512' | 'blake3' | 'sm3' | 'legacy-md5' | 'legacy-sha1'
export type AeadAlgorithm = 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-poly1305' | 'xchacha20-poly1305' | 'aes-256-gcm-siv' | 'sm4-ccm'

export function hash (algo: HashAlgorithm, data: Data): Uint8Array
/** `algo`: a hash name ('sha256', 'blake2b512', …) or 'hmac-sha256'. */
export function hmac (algo: string, key: Data, data: Data): Uint8Array
/** Constant-time; a tag of the wrong length is `false`. */
export function hmacVerify (algo: string, key: Data, data: Data, tag: Uint8Array): boolean

export interface Pbkdf2Options { iterations?: number, hash?: 'sha256' | 'sha512', length?: number }
export interface Argon2Options { memoryKib?: number, timeCost?: number, parallelism?: number, length?: number }
export interface ScryptOptions { cost?: number, blockSize?: number, parallelization?: number, length?: number, N?: number, r?: number, p?: number }

export function kdfPbkdf2 (password: Data, salt: Data, options?: Pbkdf2Options): Promise<Uint8Array>
export function kdfArgon2id (password: Data, salt: Data, options?: Argon2Options): Promise<Uint8Array>
export function kdfScrypt (password: Data, salt: Data, options?: ScryptOptions): Promise<Uint8Array>
export function kdfHkdf (ikm: Data, salt: Data, info: Data, length: number, hash?: 'sha256' | 'sha512'): Uint8Array
export const kdf: { pbkdf2: typeof kdfPbkdf2, argon2id: typeof kdfArgon2id, scrypt: typeof kdfScrypt, hkdf: typeof kdfHkdf }

/** `nonce ‖ ciphertext ‖ tag`, with a fresh random nonce. */
export function aeadSeal (algo: AeadAlgorithm, key: Uint8Array, plaintext: Data, aad?: Data): Uint8Array
/** `aeadSeal` into `out` (the caller's, reusable: at least nonce + plaintext + 16 bytes); returns the bytes written. */
export function aeadSealInto (algo: AeadAlgorithm, key: Uint8Array, plaintext: Data, out: Uint8Array, aad?: Data): number
export function aeadOpen (algo: AeadAlgorithm, key: Uint8Array, sealed: Uint8Array, aad?: Data): Uint8Array
export function aeadGenerateKey (algo: AeadAlgorithm): Uint8Array
export const aead: { seal: typeof aeadSeal, sealInto: typeof aeadSealInto, open: typeof aeadOpen, generateKey: typeof aeadGenerateKey }

/** 'ed25519' (default), 'ecdsa-p256', 'ml-dsa-65' (RSA is native-only: ERR_HYPERSEAL_ARGUMENT). */
export type SignKeyKind = 'ed25519' | 'ecdsa-p256' | 'ml-dsa-65'
/** A signing key pair as PEM text: PKCS#8 (`BEGIN PRIVATE KEY`, keep it secret) and SPKI. */
export interface SignKeyPair { privateKey: string, publicKey: string }
export function signGenerateKeyPair (kind?: SignKeyKind): SignKeyPair
/** Ed25519 and ML-DSA-65 sign the message itself; ECDSA P-256 is SHA-256 with an ASN.1 DER signature. */
export function signMessage (privateKey: string, data: Data, padding?: 'pss' | 'pkcs1'): Uint8Array
/** Whether the signature is valid; an unusable key throws ERR_HYPERSEAL_KEY, a wrong signature is `false`. */
export function signVerify (publicKey: string, data: Data, signature: Uint8Array, padding?: 'pss' | 'pkcs1'): boolean
export function signPublicKeyOf (privateKey: string): string
export const sign: { generateKeyPair: typeof signGenerateKeyPair, sign: typeof signMessage, verify: typeof signVerify, publicKeyOf: typeof signPublicKeyOf }

export function tokenGenerateKey (): string
export function tokenSeal (key: string, plaintext: Data, aad?: Data, ttlSeconds?: number): string
export function tokenOpen (keys: string | string[], token: string, aad?: Data): Uint8Array
export const token: {
  generateKey: typeof tokenGenerateKey
  seal (key: string, plaintext: Data, options?: { aad?: Data, ttlSeconds?: number }): string
  open (keys: string | string[], token: string, options?: { aad?: Data }): Uint8Array
}

// ── off the main thread (browser entry only) ──────────────────────────────────────────────────

export interface FileJobOptions { onProgress?: (bytesRead: number) => void }

/** Blob inputs from this size on go through every worker in parts (`encryptFile`, `decryptFile`). */
export const PARALLEL_MIN: number
/** `encrypt` from this size on goes through every worker in parts; below, one stream. */
export const BYTES_PARALLEL_MIN: number
/** `decrypt` from this size on goes through every worker in parts; below, one stream. */
export const BYTES_OPEN_PARALLEL_MIN: number
/** Both crossovers where the page is cross-origin isolated (the workers share its memory). */
export const BYTES_SHARED_PARALLEL_MIN: number

export interface BytesJobOptions { parallel?: boolean }

/**
 * Workers, each with its own WebAssembly instance; calls go to the least busy one. A worker
 * silent for `timeoutMs` (default 60 000) in a call fails it with ERR_HYPERSEAL_IO and is replaced.
 */
export class WorkerPool {
  constructor (options?: { size?: number, url?: string | URL, timeoutMs?: number })
  readonly size: number
  /** Starts every worker and waits until each has loaded. */
  ready (): Promise<void>
  /** Bytes in memory across the workers (one stream below `BYTES_PARALLEL_MIN`, `BYTES_OPEN_PARALLEL_MIN` to decrypt); the input is copied, not detached. */
  encrypt (data: Data | ArrayBuffer, options: EncryptStreamOptions & BytesJobOptions): Promise<Uint8Array>
  decrypt (data: Uint8Array | ArrayBuffer, options: DecryptStreamOptions & BytesJobOptions): Promise<Uint8Array>
  encryptFile (blob: Blob, options: EncryptStreamOptions & FileJobOptions): Promise<Blob>
  decryptFile (blob: Blob, options: DecryptStreamOptions & FileJobOptions): Promise<Blob>
  /**
   * `encryptFile` written to `sink` (a FileSystemWritableFileStream: `write` takes Blobs and
   * bytes, in call order) part by part as the parts are sealed, never joined into one Blob. The
   * caller closes the sink when the call resolves, and aborts it when it rejects.
   */
  encryptFileTo (blob: Blob, sink: { write (data: Blob | Uint8Array): Promise<void> }, options: EncryptStreamOptions & FileJobOptions): Promise<void>
  /** `decryptFile` written to `sink`, as `encryptFileTo`: every part authenticated before it is written; the file is whole only when the call resolves. */
  decryptFileTo (blob: Blob, sink: { write (data: Blob | Uint8Array): Promise<void> }, options: DecryptStreamOptions & FileJobOptions): Promise<void>
  /** Runs an export of the package by name in a worker. */
  run (name: string, ...args: unknown[]): Promise<any>
  terminate (): void
}
