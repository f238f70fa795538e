'use strict'
// AgentIdentity: the CLI's identity agent as a private key, by socket path. On the addon it
// opens buffers, files, streams and a re-key through a real agent (`hyperseal agent start
// --foreground`); on the WebAssembly fallback it is refused with a coded error.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { spawn, execFileSync } = require('node:child_process')
const { pipeline } = require('node:stream/promises')
const { Readable } = require('node:stream')
const { hs, tmpdir, cliBin, rejectsWith } = require('./helpers')

const bin = cliBin()
const unix = process.platform !== 'win32'

function connects (sock) {
  return new Promise((resolve) => {
    const c = net.connect(sock, () => { c.destroy(); resolve(true) })
    c.on('error', () => resolve(false))
  })
}

async function startAgent (t) {
  const dir = tmpdir()
  const run = path.join(dir, 'run')
  fs.mkdirSync(run, { mode: 0o700 })
  const agent = spawn(bin, ['agent', 'start', '--foreground'], { env: { ...process.env, XDG_RUNTIME_DIR: run }, stdio: 'ignore' })
  t.after(() => agent.kill('SIGKILL'))
  const sock = path.join(run, 'hyperseal', 'agent.sock')
  const until = Date.now() + 20000
  while (!(await connects(sock))) {
    assert.ok(Date.now() < until, 'the agent did not start')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { dir, sock, agent }
}

test('AgentIdentity opens what the agent\'s keys open', { skip: hs.backend !== 'native' || !bin || !unix }, async (t) => {
  const { dir, sock, agent } = await startAgent(t)
  const me = hs.generateKeyPair({ kind: 'x25519' })
  fs.writeFileSync(path.join(dir, 'me.key'), me.privateKey + '\n')
  execFileSync(bin, ['agent', 'add', path.join(dir, 'me.key')], { env: { ...process.env, HYPERSEAL_AGENT_SOCK: sock }, stdio: 'pipe' })
  const id = new hs.AgentIdentity(sock)
  assert.equal(id.path, sock)
  assert.match(id.privateKey, /^AGE-PLUGIN-HYPERSEAL-1/)
  assert.equal(hs.agentIdentity(sock), id.privateKey)
  assert.equal(execFileSync(bin, ['agent', 'identity'], { env: { ...process.env, HYPERSEAL_AGENT_SOCK: sock } }).toString().trim(), id.privateKey)
  const data = Buffer.from('through the agent')
  const sealed = hs.encryptByPublicKey(data, me.publicKey)
  assert.deepEqual(hs.decryptByPrivateKey(sealed, id), data)
  assert.deepEqual(await hs.decryptByPrivateKeyAsync(sealed, id.privateKey), data)
  // In a list, after a key that does not open the file.
  const other = hs.generateKeyPair({ kind: 'x25519' })
  assert.deepEqual(hs.decryptByPrivateKey(sealed, [other.privateKey, id].map(String).join('\n')), data)
  fs.writeFileSync(path.join(dir, 'f.hs'), sealed)
  await hs.decryptFile(path.join(dir, 'f.hs'), path.join(dir, 'f.out'), { privateKey: id })
  assert.deepEqual(fs.readFileSync(path.join(dir, 'f.out')), data)
  const chunks = []
  await pipeline(Readable.from([sealed]), hs.createDecryptStream({ privateKey: id }), async function * (src) {
    for await (const c of src) chunks.push(c)
  })
  assert.deepEqual(Buffer.concat(chunks), data)
  await hs.rekeyFile(path.join(dir, 'f.hs'), id, { add: [other.publicKey] })
  assert.deepEqual(hs.decryptByPrivateKey(fs.readFileSync(path.join(dir, 'f.hs')), other.privateKey), data)
  // A gone agent: a coded error, at once.
  agent.kill('SIGKILL')
  await new Promise((resolve) => agent.once('exit', resolve))
  assert.throws(() => hs.decryptByPrivateKey(sealed, id), (e) => e.code === 'ERR_HYPERSEAL_KEY' && /agent/.test(e.message))
})

test('AgentIdentity is refused where there is no agent to reach', { skip: hs.backend === 'native' && unix }, async () => {
  assert.throws(() => new hs.AgentIdentity('/run/user/1000/hyperseal/agent.sock'), (e) => e.code === 'ERR_HYPERSEAL_KEY')
  await rejectsWith(hs.decryptByPrivateKeyAsync(Buffer.from('x'), 'AGE-PLUGIN-HYPERSEAL-1QQQQQQ'), 'ERR_HYPERSEAL_KEY')
})

test('AgentIdentity takes a path', () => {
  assert.throws(() => new hs.AgentIdentity(''), (e) => e.code === 'ERR_HYPERSEAL_ARGUMENT')
  assert.throws(() => new hs.AgentIdentity(42), (e) => e.code === 'ERR_HYPERSEAL_ARGUMENT')
})
