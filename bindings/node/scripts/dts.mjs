// Writes index.d.ts from the type definitions napi-derive wrote while cargo compiled the addon
// (NAPI_TYPE_DEF_TMP_FOLDER: the Makefile's `addon`), as `napi build --dts` does. `napi build`
// also runs cargo with an explicit --target, which keeps its build apart from target/release:
// the addon the tests load and `make dist` packs is the workspace's own release build instead.
// Usage: node scripts/dts.mjs TYPE_DEF_FOLDER
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync, renameSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateTypeDef } from '@napi-rs/cli'

const here = dirname(fileURLToPath(import.meta.url))
const pkg = join(here, '..')
const typeDefDir = process.argv[2]
if (!typeDefDir || readdirSync(typeDefDir).length === 0) {
  console.error(`dts: no type definitions in ${typeDefDir} (build the addon with NAPI_TYPE_DEF_TMP_FOLDER set)`)
  process.exit(1)
}
const dtsHeader = execFileSync(process.execPath, [join(here, 'dts-header.js')], { encoding: 'utf8' })
const { dts } = await generateTypeDef({ typeDefDir, dtsHeader, cwd: pkg, declareBindingTarget: false })
const dest = join(pkg, 'index.d.ts')
let old = ''
try { old = readFileSync(dest, 'utf8') } catch {}
if (dts !== old) {
  writeFileSync(dest + '.tmp', dts)
  renameSync(dest + '.tmp', dest)
  console.error('dts: index.d.ts updated from the addon\'s sources')
}
