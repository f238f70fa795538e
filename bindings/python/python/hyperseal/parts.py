"""One file sealed or opened in parts: the one API that hands you duties (below) the rest of
hyperseal performs itself.

:class:`PartKey` seals (or opens) **one** file in chunk-aligned parts, in processes that do not
share memory — what :func:`hyperseal.dask.encrypt_large` runs on. One process begins the file
(``PartKey.seal_new``: header, salt and a fresh payload key), every worker seals the plaintext
ranges of the parts it is given (``key.seal(first_chunk, data)``), and the sealed parts,
written after the header in order, are one ordinary hyperseal (or age) file::

    from hyperseal.parts import PartKey
    head, key = PartKey.seal_new(len(data), me.public)
    parts = [key.seal(first, data[p0:p1]) for first, p0, p1, f0, f1 in key.plan(64 << 20)]
    assert hyperseal.decrypt(head + b"".join(parts), me) == data

The duties:

* **The payload key leaves the process.** ``key.to_bytes()`` (and pickling, which uses it)
  exports it: whoever holds it can read and forge this one file (no other: every file has a
  fresh key). Ship it only over TLS (Dask: ``distributed.security.Security``), never log it.
* **The plaintext must not change while it is sealed.** Chunk *i* always gets the same nonce,
  so sealing a retried part again with the same bytes is harmless (the same ciphertext comes
  out), but sealing it with *different* bytes reuses a nonce under one key, which breaks
  AES-GCM and ChaCha20-Poly1305. So every seal is claimed: ``key.seal(first, data)`` and
  ``seal_into`` record the plan and each sealed part in the key's own in-memory store (this
  object, this process) and refuse other bytes for a part already sealed. Across processes,
  seal with ``key.seal_claimed(store, part_size, first, data)`` and one shared store
  (create-if-new: ``hyperseal._claims``, proven with its ``check()`` first).
  ``encrypt_large`` does, and also checks the source's stamp before and after.
* An opening key (``PartKey.open_file``) refuses to seal, so a job that only reads a file
  cannot by mistake write chunks under its nonces.
"""

from ._hyperseal import PartKey

__all__ = ["PartKey"]
