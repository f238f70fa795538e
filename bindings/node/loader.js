'use strict'
// Which implementation runs. In order:
//   1. `hyperseal.node` beside this file: a local build (`npm run build`, `make build`);
//   2. the platform package npm installed as an optional dependency (`hyperseal-linux-x64-gnu`,
//      …: the names this package's own `optionalDependencies` list);
//   3. the WebAssembly build of the same library (`fallback.js`), for every other platform
//      (macOS, FreeBSD, musl Linux, …) and for an addon that is present but cannot load.
// `backend` says which one it was: 'native' or 'wasm'.

const { optionalDependencies = {} } = require('./package.json')

/**
 * Whether this is a musl libc process. A glibc Node reports the glibc it runs on in its
 * diagnostic report header (napi-rs's test); where no report can be made, the loader path
 * `ldd` names decides.
 */
function isMusl () {
  try {
    const header = process.report.getReport().header
    return !header.glibcVersionRuntime
  } catch {
    try {
      return require('node:fs').readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
    } catch {
      return false
    }
  }
}

/**
 * The platform as the packages name it: `os-cpu[-libc]`. Windows addons are built with
 * mingw-w64 (the GNU toolchain), hence `-gnu` there too.
 */
function platformName () {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-gnu`
  return `${platform}-${arch}`
}

function loadNative () {
  try {
    return require('./hyperseal.node')
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') return null
  }
  const name = platformName()
  const pkg = `hyperseal-${name}`
  if (!(pkg in optionalDependencies)) return null
  try {
    return require(`${pkg}/hyperseal.${name}.node`)
  } catch {
    // Not installed (npm --omit=optional, another platform's lockfile) or unloadable (an older
    // libc than it was linked for): the WebAssembly build serves instead.
    return null
  }
}

const native = loadNative()

module.exports = native
  ? { backend: 'native', binding: native }
  : { backend: 'wasm', binding: require('./fallback.js') }
