'use strict'
// The repository README's JavaScript example runs as written under Node (its
// `require('./bindings/node')` is this package), in a fresh directory, so it cannot drift from
// the API.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const README = path.join(__dirname, '..', '..', '..', 'README.md')

test("the README's js example runs", async () => {
  const blocks = [...fs.readFileSync(README, 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.ok(blocks.length >= 1, 'no js block in README.md')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hs-readme-'))
  const cwd = process.cwd()
  try {
    process.chdir(dir)
    fs.writeFileSync('in.bin', Buffer.alloc(100000, 7))
    for (const code of blocks) {
      assert.match(code, /require\('\.\/bindings\/node'\)/)
      const body = code.replace("require('./bindings/node')", 'hsPackage')
      const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor
      const log = console.log
      console.log = () => {}
      try {
        await new AsyncFunction('hsPackage', 'Buffer', body)(require('..'), Buffer)
      } finally {
        console.log = log
      }
    }
    assert.ok(fs.statSync('in.bin.hs').size > 100000, 'the example wrote the encrypted file')
  } finally {
    process.chdir(cwd)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
