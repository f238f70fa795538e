// The browser entry (the `browser` export condition of the `hyperseal` package): loads
// hyperseal_bg.wasm from beside pkg/hyperseal.js before the importing module runs, so the
// functions are ready as soon as the import resolves, as the Node package's are:
//
//   import * as hs from 'hyperseal'
//   const { publicKey, privateKey } = hs.generateKeyPair({ kind: 'x25519' })
//
// Bundlers that understand `new URL('…', import.meta.url)` (webpack 5, Vite, Parcel) emit the
// .wasm as an asset by themselves; with esbuild, copy pkg/hyperseal_bg.wasm next to the bundle.
// `await init()` (the default export) is still accepted and returns at once.

import init from './core.js'

await init()

export * from './core.js'
export { WorkerPool, PARALLEL_MIN, BYTES_PARALLEL_MIN, BYTES_OPEN_PARALLEL_MIN, BYTES_SHARED_PARALLEL_MIN } from './workers.js'
export default init
