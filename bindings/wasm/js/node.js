// The WebAssembly build under Node (`import * as hs from 'hyperseal/wasm'`): the same module a
// page runs, loaded from the package's own files (Node's fetch cannot read file: URLs). Node
// programs normally use the native addon (`import 'hyperseal'`); this entry exists so the very
// bytes shipped to browsers can be tested and used where no addon builds.

import { readFile } from 'node:fs/promises'
import init from './core.js'

await init({ module_or_path: await readFile(new URL('../pkg/hyperseal_bg.wasm', import.meta.url)) })

export * from './core.js'
export default init
