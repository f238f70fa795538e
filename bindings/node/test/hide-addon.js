'use strict'
// Preloaded (`node --require`, through NODE_OPTIONS so that child processes get it too) by the
// second run of `make test`: every native addon fails to load as an incompatible one does, so
// the package's loader falls back to its WebAssembly build, exactly as on a platform without
// an addon. Nothing in the package knows about this file.
const Module = require('node:module')

Module._extensions['.node'] = function (module, filename) {
  const e = new Error(`${filename}: hidden by test/hide-addon.js (the WebAssembly fallback is under test)`)
  e.code = 'ERR_DLOPEN_FAILED'
  throw e
}
