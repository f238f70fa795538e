// Types of `hyperseal/age`: typage's public API (npm `age-encryption` 0.3) with its names and
// shapes, so code typed against 'age-encryption' type-checks with the import changed.

/** A header stanza: `args[0]` is its type, the rest its arguments; `body` its raw body. */
export declare class Stanza {
  readonly args: string[]
  readonly body: Uint8Array
  constructor (args: string[], body: Uint8Array)
}

/** A recipient written in JavaScript: wraps each file's key into stanzas of its own. */
export interface Recipient {
  wrapFileKey (fileKey: Uint8Array): Stanza[] | Promise<Stanza[]>
}

/** An identity written in JavaScript: the file key from the header's stanzas, or null if none is its own. */
export interface Identity {
  unwrapFileKey (stanzas: Stanza[]): Uint8Array | null | Promise<Uint8Array | null>
}

/** A stream that also says the size of the output for a given input size. */
export interface ReadableStreamWithSize extends ReadableStream<Uint8Array> {
  size (sourceSize: number): number
}

export declare class Encrypter {
  /** Encrypts to a passphrase (scrypt); once, and never with recipients. */
  setPassphrase (s: string): void
  /** scrypt's log2 N for a passphrase (default 18). */
  setScryptWorkFactor (logN: number): void
  /** `age1…`, `age1pq1…`, `age1tag1…`, `age1tagpq1…`, a WebAuthnRecipient or a Recipient. */
  addRecipient (s: string | Recipient | webauthn.WebAuthnRecipient): void
  encrypt (file: Uint8Array | string): Promise<Uint8Array>
  encrypt (file: ReadableStream<Uint8Array>): Promise<ReadableStreamWithSize>
}

export declare class Decrypter {
  addPassphrase (s: string): void
  /** `AGE-SECRET-KEY-1…`, `AGE-SECRET-KEY-PQ-1…`, an X25519 CryptoKey, a WebAuthnIdentity or an Identity. */
  addIdentity (s: string | CryptoKey | Identity | webauthn.WebAuthnIdentity): void
  decrypt (file: Uint8Array, outputFormat?: 'uint8array'): Promise<Uint8Array>
  decrypt (file: Uint8Array, outputFormat: 'text'): Promise<string>
  decrypt (file: ReadableStream<Uint8Array>): Promise<ReadableStreamWithSize>
  /** The file key of a detached header (the version line through the MAC). */
  decryptHeader (header: Uint8Array): Promise<Uint8Array>
}

export declare function generateIdentity (): Promise<string>
export declare function generateX25519Identity (): Promise<string>
export declare function generateHybridIdentity (): Promise<string>
export declare function identityToRecipient (identity: string | CryptoKey): Promise<string>

export declare namespace armor {
  function encode (file: Uint8Array): string
  function decode (file: string): Uint8Array
}

export declare namespace webauthn {
  interface Options {
    /** The identity string from createCredential (`AGE-PLUGIN-FIDO2PRF-1…`). */
    identity?: string
    /** The relying party (default: the page's host). */
    rpId?: string
  }
  interface CreationOptions {
    keyName: string
    type?: 'passkey' | 'security-key'
    rpId?: string
  }
  function createCredential (options: CreationOptions): Promise<string>
  /** A passkey to encrypt to; asked when `encrypt` runs (the library writes its stanza). */
  class WebAuthnRecipient {
    constructor (options?: Options)
  }
  /** A passkey to decrypt with; asked when `decrypt` reads the header. */
  class WebAuthnIdentity {
    constructor (options?: Options)
  }
}
