// ESM entry: the same module as index.js.
import hyperseal from './index.js'

export const {
  ERROR_CODES,
  generateKeyPair,
  publicKeyOf,
  encryptByPublicKey,
  decryptByPrivateKey,
  encryptByPublicKeyAsync,
  decryptByPrivateKeyAsync,
  encryptFile,
  decryptFile,
  createEncryptStream,
  createDecryptStream,
  EncryptSession,
  DecryptSession,
} = hyperseal
export default hyperseal
