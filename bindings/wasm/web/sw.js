// The page's service worker: at install it stores every file of the page (the list and the
// version are written in by the build, from the files' SHA-256 sums), and then answers every
// request for them from that store, so the page opens and works with the server gone. A new
// build is a new version: its worker stores the new files and drops the old store. It never
// fetches anything but the page's own files, and passes other requests through untouched.
//
// It also carries downloads for browsers that cannot write files from a page (no
// `showSaveFilePicker`): the page sends a file's bytes here over a MessageChannel as it makes
// them, and the download it starts (a navigation to download/ID/NAME) is answered with a
// ReadableStream of those bytes, so the file goes to the disk as it is made, never held whole.

const VERSION = '__VERSION__'
const FILES = __FILES__
const CACHE = `hyperseal-web-${VERSION}`

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE)
    // `reload`: the server's current files, never an older copy from the HTTP cache.
    await cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })))
    await self.skipWaiting()
  })())
})

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('hyperseal-web-') && name !== CACHE) await caches.delete(name)
    }
    await self.clients.claim()
  })())
})

/** Downloads announced by a page and not yet asked for: id → { name, stream }. */
const downloads = new Map()

self.addEventListener('message', (event) => {
  const { download, name } = event.data ?? {}
  const port = event.ports[0]
  if (typeof download !== 'string' || !port) return // a page's keep-alive, or nothing of ours
  downloads.set(download, { name, stream: fromPort(port) })
  port.postMessage({ ready: true })
})

/**
 * The bytes a page sends on `port` as a stream. One chunk is asked for at a time (`more`), so
 * the page goes no faster than the download is written; `end` closes the stream, `abort`
 * errors it, and the browser then drops the download (nothing of a failed file is kept).
 */
function fromPort (port) {
  const queue = []
  let wake = null
  port.onmessage = ({ data }) => {
    queue.push(data)
    wake?.()
  }
  return new ReadableStream({
    async pull (controller) {
      port.postMessage({ more: true })
      while (queue.length === 0) await new Promise((resolve) => { wake = resolve })
      wake = null
      const { chunk, end, abort } = queue.shift()
      if (chunk) controller.enqueue(chunk)
      else if (end) { controller.close(); port.close() } else controller.error(new Error(abort ?? 'the page stopped the download'))
    },
    cancel () {
      port.postMessage({ cancelled: true })
      port.close()
    },
  }, { highWaterMark: 0 })
}

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url)
  const id = url.origin === self.location.origin && url.pathname.match(/\/download\/([\w-]+)\/[^/]*$/)?.[1]
  if (id && downloads.has(id)) {
    const { name, stream } = downloads.get(id)
    downloads.delete(id)
    const headers = {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      'x-content-type-options': 'nosniff',
    }
    event.respondWith(new Response(stream, { headers }))
    return
  }
  if (event.request.method !== 'GET' || url.origin !== self.location.origin) return
  event.respondWith((async () => {
    const cache = await caches.open(CACHE)
    // The page's address with or without index.html is the same file.
    const path = url.pathname.endsWith('/') ? new URL('index.html', url) : url
    return (await cache.match(path, { ignoreSearch: true })) ?? fetch(event.request)
  })())
})
