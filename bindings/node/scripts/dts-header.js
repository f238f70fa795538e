'use strict'
// Prints dts-header.d.ts with the error-code union filled in from the library's one list
// (`ErrorCode::as_str` in crates/hyperseal/src/error.rs), so the TypeScript type cannot drift.
const fs = require('node:fs')
const path = require('node:path')

const src = fs.readFileSync(path.join(__dirname, '../../../crates/hyperseal/src/error.rs'), 'utf8')
const body = src.slice(src.indexOf('pub fn as_str(self)'))
const codes = [...new Set(body.match(/"ERR_HYPERSEAL_[A-Z_]+"/g))]
if (codes.length === 0) throw new Error('no error codes found in crates/hyperseal/src/error.rs')
const union = codes.map((c) => `  | '${c.slice(1, -1)}'`).join('\n')
const header = fs.readFileSync(path.join(__dirname, '../dts-header.d.ts'), 'utf8')
process.stdout.write(header.replace('@@ERROR_CODES@@', union))
