'use strict'
// `backend` names what runs. `make test` runs the suite twice and says which to expect: the
// native addon, then (test/hide-addon.js preloaded) the WebAssembly fallback.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { hs } = require('./helpers')

test('backend is the expected one', () => {
  assert.ok(['native', 'wasm'].includes(hs.backend), hs.backend)
  const expected = process.env.HYPERSEAL_TEST_BACKEND
  if (expected) assert.equal(hs.backend, expected)
})

test('both backends carry the same names', () => {
  const native = Object.keys(require('../loader.js').binding).sort()
  const fallback = Object.keys(require('../fallback.js')).sort()
  // The addon's class exports are its own; the fallback mirrors every one of them.
  assert.deepEqual(fallback.filter((n) => !native.includes(n)), [])
  assert.deepEqual(native.filter((n) => !fallback.includes(n)), [])
})
