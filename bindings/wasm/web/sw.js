// The page's service worker: at install it stores every file of the page (the list and the
// version are written in by the build, from the files' SHA-256 sums), and then answers every
// request for them from that store, so the page opens and works with the server gone. A new
// build is a new version: its worker stores the new files and drops the old store. It never
// fetches anything but the page's own files, and passes other requests through untouched.

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

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url)
  if (event.request.method !== 'GET' || url.origin !== self.location.origin) return
  event.respondWith((async () => {
    const cache = await caches.open(CACHE)
    // The page's address with or without index.html is the same file.
    const path = url.pathname.endsWith('/') ? new URL('index.html', url) : url
    return (await cache.match(path, { ignoreSearch: true })) ?? fetch(event.request)
  })())
})
