// A static file server for the test page, on 127.0.0.1 and an ephemeral port only. Serves
// `root` read-only with the MIME types the page needs (application/wasm lets the browser
// compile the module while it downloads). By default the pages are cross-origin isolated
// (COOP/COEP below), as a page must be for `SharedArrayBuffer` and WorkerPool's shared-memory
// path; `{ isolated: false }` serves them without, for the transferable path.

import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join, normalize, extname, sep } from 'node:path'

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.webmanifest': 'application/manifest+json',
  '.md': 'text/markdown; charset=utf-8',
}

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
}

export function serve (root, { isolated = true } = {}) {
  const server = createServer(async (req, res) => {
    const asked = decodeURIComponent(new URL(req.url, 'http://x').pathname)
    // A folder's address is its index.html, as on any static server (the web app's root).
    const path = normalize(join(root, asked.endsWith('/') ? `${asked}index.html` : asked))
    if (!path.startsWith(root + sep) || path.includes(`${sep}node_modules${sep}`)) {
      res.writeHead(403).end()
      return
    }
    try {
      const body = await readFile(path)
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...(isolated ? ISOLATION : {}) })
      res.end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(r) }),
      })
    })
  })
}
