// The real worker (js/worker.js) with faults a page can meet: a worker that never answers and
// one that crashes. Only the tests load it (WorkerPool's `url` option); nothing here ships.
//
//   run('hang')            never answers
//   run('crash')           throws outside any call (the Worker's `error` event)
//   ?parts=hang in the URL never answers a part past the first chunk (a stuck part mid-file)

import '../js/worker.js'

const real = self.onmessage
const hangParts = new URLSearchParams(self.location.search).get('parts') === 'hang'

self.onmessage = (event) => {
  const { op, name, options } = event.data
  if (op === 'run' && name === 'hang') return
  if (op === 'run' && name === 'crash') { setTimeout(() => { throw new Error('worker crashed') }); return }
  if (hangParts && /^(seal|open)(Bytes|Shared)$/.test(op) && options.first > 0) return
  return real(event)
}
