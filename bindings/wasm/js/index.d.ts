// Types of the browser package (js/index.js, js/node.js and js/core.js export the same names).
// Every function throws (or rejects with) an Error whose `code` is one of `ErrorCode`.

/** The stable error codes, as in the Node package's `ERROR_CODES`. */
export type ErrorCode =
  | 'ERR_HYPERSEAL_AUTH' | 'ERR_HYPERSEAL_NO_IDENTITY' | 'ERR_HYPERSEAL_FORMAT' | 'ERR_HYPERSEAL_KEY'
  | 'ERR_HYPERSEAL_ARGUMENT' | 'ERR_HYPERSEAL_IO' | 'ERR_HYPERSEAL_TOKEN_EXPIRED' | 'ERR_HYPERSEAL_TOKEN_UNKNOWN_KEY'

/** An error thrown by the package. */
export interface HypersealError extends Error { code: ErrorCode }

/** Bytes, or a string taken as its UTF-8 bytes. */
export type Data = Uint8Array | string

/** Key kinds available on WebAssembly (RSA is native-only). */
export type KeyKind = 'hybrid' | 'x25519' | 'mlkem1024'

export interface FileOptions {
  /** 'hyperseal' (default) or 'age' (X25519 and hybrid keys only). */
  format?: 'hyperseal' | 'age'
  /** ASCII armor (one-shot calls only). */
  armor?: boolean
}

/** Loads the module; the `hyperseal` and `hyperseal/wasm` entries have already done it. */
export default function init (options?: { module_or_path?: RequestInfo | URL | Response | BufferSource | WebAssembly.Module }): Promise<unknown>

export function errorCodes (): ErrorCode[]
export function generateKeyPair (options?: { kind?: KeyKind }): { publicKey: string, privateKey: string }
export function publicKeyOf (privateKey: string): string
export function encryptByPublicKey (data: Data, publicKey: string | string[], options?: FileOptions): Uint8Array
export function decryptByPrivateKey (data: Data, privateKey: string): Uint8Array
export function encryptWithPassphrase (data: Data, passphrase: string, options?: FileOptions): Uint8Array
export function decryptWithPassphrase (data: Data, passphrase: string): Uint8Array

export interface EncryptStreamOptions { publicKey: string | string[], format?: 'hyperseal' | 'age' }
export type DecryptStreamOptions = { privateKey: string } | { passphrase: string }

export function createEncryptStream (options: EncryptStreamOptions): TransformStream<Data, Uint8Array>
export function createDecryptStream (options: DecryptStreamOptions): TransformStream<Uint8Array, Uint8Array>
export function encryptStream (readable: ReadableStream<Data>, options: EncryptStreamOptions): ReadableStream<Uint8Array>
export function decryptStream (readable: ReadableStream<Uint8Array>, options: DecryptStreamOptions): ReadableStream<Uint8Array>

/** Push-based sessions under the streams: `push` returns the bytes ready, `final` the rest. */
export class EncryptSession {
  constructor (publicKey: string | string[], options?: FileOptions)
  push (data: Uint8Array): Uint8Array
  final (): Uint8Array
  free (): void
}
export class DecryptSession {
  constructor (privateKey: string)
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
export function decryptRange (blob: Blob, privateKey: string, offset: number, length: number): Promise<Uint8Array>
