'use strict'
// The Node hybrid library's design (hybrid public-key encryption in Node), rebuilt from its
// report's description (the report names no code):
//   sync:  encryptByPublicKey / decryptByPrivateKey = NaCl box (tweetnacl) straight over the
//          data, with an ephemeral sender key: ephPub(32) ‖ nonce(24) ‖ box(data)(+16).
//   async: encryptByPublicKeyAsync / decryptByPrivateKeyAsync = hybrid: NaCl box wraps a fresh
//          AES-256 key, WebCrypto AES-GCM encrypts the data:
//          len(4) ‖ ephPub(32) ‖ nonce(24) ‖ box(aesKey)(48) ‖ iv(12) ‖ aes-gcm(data)(+16).
// Overheads 72 and 136 bytes reproduce the report's expansion column (107.03% / 113.28% at 1 KB).
const nacl = require('tweetnacl')
const { webcrypto } = require('node:crypto')

const subtle = webcrypto.subtle

function generateKeyPair () {
  const kp = nacl.box.keyPair()
  return { publicKey: Buffer.from(kp.publicKey), privateKey: Buffer.from(kp.secretKey) }
}

function encryptByPublicKey (data, publicKey) {
  const eph = nacl.box.keyPair()
  const nonce = nacl.randomBytes(24)
  const boxed = nacl.box(data, nonce, publicKey, eph.secretKey)
  return Buffer.concat([eph.publicKey, nonce, boxed])
}

function decryptByPrivateKey (data, privateKey) {
  const out = nacl.box.open(data.subarray(56), data.subarray(32, 56), data.subarray(0, 32), privateKey)
  if (!out) throw new Error('decryption failed')
  return Buffer.from(out.buffer, out.byteOffset, out.length)
}

async function encryptByPublicKeyAsync (data, publicKey) {
  const aesKey = nacl.randomBytes(32)
  const wrapped = encryptByPublicKey(aesKey, publicKey) // 32 + 24 + 48 = 104
  const iv = nacl.randomBytes(12)
  const key = await subtle.importKey('raw', aesKey, 'AES-GCM', false, ['encrypt'])
  const ct = new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv }, key, data))
  const len = Buffer.alloc(4)
  len.writeUInt32BE(wrapped.length)
  return Buffer.concat([len, wrapped, iv, ct])
}

async function decryptByPrivateKeyAsync (data, privateKey) {
  const n = data.readUInt32BE(0)
  const aesKey = decryptByPrivateKey(data.subarray(4, 4 + n), privateKey)
  const iv = data.subarray(4 + n, 16 + n)
  const key = await subtle.importKey('raw', aesKey, 'AES-GCM', false, ['decrypt'])
  return Buffer.from(await subtle.decrypt({ name: 'AES-GCM', iv }, key, data.subarray(16 + n)))
}

module.exports = { generateKeyPair, encryptByPublicKey, decryptByPrivateKey, encryptByPublicKeyAsync, decryptByPrivateKeyAsync }
