// Files and folders dropped on the Encrypt tab's Files input. A file input alone takes files
// only, and loses where they were: here a dropped folder is walked (DataTransferItem's
// webkitGetAsEntry, or getAsFileSystemHandle where a browser has only that), and every file
// keeps its path under the dropped folder, so `photos/2024/a.jpg` is saved as
// `photos/2024/a.jpg.age` under the folder the person chooses (save.js makes the folders).

/** What was dropped: `[{ file, path }]`, or null once the input is used again. */
let dropped = null

/**
 * Makes `input` take drops of files and folders. `told(list)` hears each new list, to say what
 * was chosen. Choosing with the input's own dialog forgets the drop.
 */
export function acceptDrops (input, told) {
  input.addEventListener('change', () => { dropped = null })
  input.addEventListener('drop', (event) => {
    const items = [...(event.dataTransfer?.items ?? [])].filter((i) => i.kind === 'file')
    // Where the browser cannot say which items are folders, the input's own drop (files) stays.
    if (items.length === 0 || !items.every((i) => i.webkitGetAsEntry || i.getAsFileSystemHandle)) return
    event.preventDefault()
    // Entries and handles must be taken now: the drop's items are gone after this event.
    const roots = items.map((i) => i.webkitGetAsEntry?.() ?? i.getAsFileSystemHandle())
    walkAll(roots).then((list) => {
      dropped = list
      // The input shows the files (a DataTransfer is how a page sets an input's files).
      const dt = new DataTransfer()
      for (const { file } of list) dt.items.add(file)
      input.files = dt.files
      told(list)
    }, (e) => told(null, e))
  })
}

/**
 * The chosen files as `[{ file, path }]`: the drop, or the input's own files (their names as
 * paths). The drop counts only while the input still holds its files.
 */
export function chosenWithPaths (input) {
  const files = [...input.files]
  if (dropped && dropped.length === files.length) return dropped
  return files.map((file) => ({ file, path: file.name }))
}

async function walkAll (roots) {
  const list = []
  for (const root of await Promise.all(roots)) {
    if (root) await walk(root, list)
  }
  return list
}

/** Every file under `node` (a FileSystemEntry or FileSystemHandle) into `list`, in name order. */
async function walk (node, list, prefix = '') {
  const path = `${prefix}${node.name}`
  if (node.isFile) {
    list.push({ file: await new Promise((resolve, reject) => node.file(resolve, reject)), path })
  } else if (node.kind === 'file') {
    list.push({ file: await node.getFile(), path })
  } else if (node.isDirectory) {
    for (const child of await children(node)) await walk(child, list, `${path}/`)
  } else if (node.kind === 'directory') {
    const kids = []
    for await (const child of node.values()) kids.push(child)
    kids.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const child of kids) await walk(child, list, `${path}/`)
  }
}

/** A directory entry's children: `readEntries` gives them in batches until an empty one. */
async function children (dir) {
  const reader = dir.createReader()
  const all = []
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject))
    if (batch.length === 0) break
    all.push(...batch)
  }
  return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
