// The browser peers of the benchmark, bundled by bench/browser.mjs (esbuild) into dist/peers.js
// for the page: what @ldesign/crypto compares (crypto-js, node-forge), what fast browser code
// picks today (@noble/ciphers, hash-wasm) and age in TypeScript (age-encryption, "typage").

import { chacha20poly1305 } from '@noble/ciphers/chacha.js'
import { gcm } from '@noble/ciphers/aes.js'
import { sha256 as hwSha256, blake3 as hwBlake3 } from 'hash-wasm'
import CryptoJS from 'crypto-js'
import forge from 'node-forge'
import * as age from 'age-encryption'

window.peers = { chacha20poly1305, gcm, hwSha256, hwBlake3, CryptoJS, forge, age }
