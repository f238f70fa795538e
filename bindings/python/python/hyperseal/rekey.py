"""Re-keying: change who can open a file without re-encrypting it.

In both formats the payload depends only on the file key and the payload salt, so a new header
that wraps the same file key to another recipient set (its MAC computed anew) leaves every
payload byte valid. The library (``hyperseal::rekey``) opens the header with an identity you
hold, checks the change against the format's rules and writes the new header:

* a local file: in place in O(header) behind a journal when the new header fits the old one's
  length, else a new file with the payload copied in the kernel (:func:`rekey_file`);
* bytes: the new header followed by the old bytes from the old header's end (:func:`rekey_bytes`);
* an S3 object: one multipart upload over the same key whose first part is the new header plus
  the payload's first bytes and whose other parts are copied by the server, so only the head
  of the object crosses the network (:mod:`hyperseal._rekey_s3`);
* any other fsspec URL: the new header, then the payload streamed through this process.

With ``sops=True`` the file is a sops file (YAML, JSON, dotenv, INI or binary, as sops 3.13
writes them): only the age entries of its ``sops`` metadata change, every other byte stays
(values, ``mac``, ``lastmodified``, comments). The target is ``recipients`` (the one key group's
age list) or ``add``/``remove``; for paths without them, each file's ``.sops.yaml`` creation
rule, as ``sops updatekeys`` reads it. ``rotate=True`` also draws a fresh data key and seals
every value again, as ``sops rotate`` does. The parsing, the walk, the rules and the atomic
writes are the library's (``rekey::sops``; files by ``rekey_files``).

Removal is not revocation: a removed recipient can still open every old copy, backup, git
revision and S3 version of the file, and may have kept its file key, which opens this one too.
Only a rotation (a fresh file key: a full re-encryption) protects what is written from then on.
"""

import os

from ._hyperseal import rekey_file as _rekey_file
from ._hyperseal import rekey_head as _rekey_head
from ._hyperseal import rekey_tree as _rekey_tree
from ._hyperseal import rekey_sops_bytes as _rekey_sops_bytes
from ._hyperseal import rekey_sops_files as _rekey_sops_files
from ._rekey_common import HEADER_BYTES, RekeyResult, _keys, _no_sops_options, _seq, _sops_keys  # noqa: F401

def rekey_head(head, identities=None, *, passphrase=None, recipients=None, add=(), remove=(), remove_own=False,
               allow_plugins=False):
    """The library's ``rekey_head``: ``(new_header, old_header_len, plan)`` for the start of a
    binary file (at least its whole header). The new file is ``new_header`` followed by the old
    file from ``old_header_len`` on."""
    new, old_len, plan = _rekey_head(head, identities,
                                     **_keys(recipients, add, remove, passphrase, remove_own, allow_plugins))
    return new, old_len, plan


def rekey_bytes(data, identities=None, *, passphrase=None, recipients=None, add=(), remove=(), remove_own=False,
                allow_plugins=False, sops=False, format=None, rotate=False):
    """A binary hyperseal or age file (bytes-like), re-keyed: returns the new file's bytes. The
    payload is not decrypted or copied through the library; armored input is refused.

    ``identities`` (or ``passphrase``) open the file. The change is either ``recipients`` (the
    full new list: every other stanza is dropped) or ``add``/``remove`` (an edit: every other
    stanza kept byte for byte). Removing every key you opened the file with is refused unless
    ``remove_own=True``.

    ``sops=True``: a sops file in ``format`` (``"yaml"``, ``"json"``, ``"binary"``,
    ``"dotenv"`` or ``"ini"``), its age entries moved to ``recipients`` or edited by
    ``add``/``remove`` (``rotate=True``: a fresh data key too); the same bytes come back when it
    is already the target. ``remove_own=True`` allows a key group none of ``identities``
    opens afterwards."""
    if sops:
        keys = _sops_keys(recipients, add, remove, passphrase, remove_own, allow_plugins, rotate)
        new, _, _ = _rekey_sops_bytes(data, identities, format=format, **keys)
        return bytes(data) if new is None else new
    _no_sops_options(rotate, format)
    new, old_len, _ = rekey_head(data, identities, passphrase=passphrase, recipients=recipients, add=add,
                                 remove=remove, remove_own=remove_own, allow_plugins=allow_plugins)
    return new + memoryview(data)[old_len:].tobytes()


def _local(path):
    if isinstance(path, os.PathLike):
        return os.fspath(path)
    if isinstance(path, str) and "://" not in path and "::" not in path:
        return path
    if isinstance(path, str) and path.startswith("file://"):
        return path[len("file://"):]
    return None


def rekey_file(path, identities=None, *, passphrase=None, recipients=None, add=(), remove=(), remove_own=False,
               output=None, force=False, dry_run=False, allow_plugins=False, storage_options=None,
               part_size=256 << 20, max_concurrency=8, split_links=False, sops=False, rotate=False):
    """Re-keys the file at ``path`` (see :func:`rekey_bytes` for the keys); returns a
    :class:`RekeyResult`. With ``dry_run=True`` the change is checked and reported, nothing
    is written.

    * A local path (binary or armored): in place when the new header fits the old one's length
      (only the header is rewritten, behind a journal), else the file is replaced whole by a
      rename; ``output`` writes the result there instead (``force=True`` replaces an existing
      one). Under a lock, with a concurrent writer's version winning (nothing is written over a
      file another program saved meanwhile); a rewrite keeps owner, group, mode and extended
      attributes, and a file with other hard links is only re-keyed in place unless
      ``split_links=True``. Every error says what the file was left as ("nothing changed",
      or that the change was made).
    * ``s3://bucket/key``: re-keyed without downloading the payload (:mod:`hyperseal._rekey_s3`):
      conditional on the object's ETag, so a concurrent writer wins and this raises ``IoError``
      with the object as the other writer left it. ``part_size`` (server-side copy parts) and
      ``max_concurrency`` tune it; ``storage_options`` go to s3fs.
    * Any other fsspec URL: the new header, then the payload streamed through this process, to
      ``output`` or (in place) to a temporary name moved over the file; only as atomic as that
      filesystem's move.

    ``sops=True`` (a local path or ``s3://bucket/key``): a sops file re-keyed where it is (see
    the module docs; ``rotate=True`` as ``sops rotate``), written whole and atomically (an
    object by a ``PutObject`` conditional on its ETag); ``written`` is ``"rewritten"`` (or
    ``"s3_put"``), ``"unchanged"`` or ``"nothing"`` (a dry run).
    """
    if sops:
        return _rekey_sops_file(path, identities, _sops_keys(recipients, add, remove, passphrase, remove_own,
                                                             allow_plugins, rotate),
                                output, split_links, dry_run, storage_options)
    _no_sops_options(rotate)
    keys = _keys(recipients, add, remove, passphrase, remove_own, allow_plugins)
    local = _local(path)
    if local is not None:
        out = _local(output) if output is not None else None
        if output is not None and out is None:
            raise ValueError("a local file is re-keyed into a local output (give a path)")
        got = _rekey_file(local, identities, output=out, force=force, dry_run=dry_run, split_links=split_links,
                          **keys)
        return RekeyResult(**got)

    import fsspec

    fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
    dest = None
    if output is not None:
        dfs, dest = fsspec.core.url_to_fs(output, **(storage_options or {}))
        if type(dfs) is not type(fs):
            raise ValueError("the output must be on the same filesystem as the file")
    if type(fs).__name__ == "S3FileSystem":
        from ._rekey_s3 import rekey_s3

        return rekey_s3(fs, fpath, identities, keys, output=dest, force=force, dry_run=dry_run,
                        part_size=part_size, max_concurrency=max_concurrency)
    return _rekey_fsspec(fs, fpath, identities, keys, dest, force, dry_run)


def _rekey_sops_file(path, identities, keys, output, split_links, dry_run, storage_options):
    if output is not None or split_links:
        from ._errors import ArgumentError

        raise ArgumentError("a sops file is re-keyed where it is: output and split_links are not its options")
    local = _local(path)
    if local is None:
        import fsspec

        fs, fpath = fsspec.core.url_to_fs(path, **(storage_options or {}))
        if type(fs).__name__ != "S3FileSystem":
            from ._errors import ArgumentError

            raise ArgumentError(f"{path}: sops files are re-keyed on a local path or s3://")
        from ._rekey_s3 import rekey_s3_sops

        return rekey_s3_sops(fs, fpath, identities, keys, dry_run=dry_run)
    files, _ = _rekey_sops_files([local], identities, recursive=False, dry_run=dry_run, **keys)
    got = files[0]
    if got["outcome"] == "failed":
        raise got["error"]
    if got["outcome"] == "unchanged":
        return RekeyResult(written="unchanged")
    written = "nothing" if dry_run else "rewritten"
    return RekeyResult(added=got["added"], removed=got["removed"], written=written)


def _read_head(read, size, parse):
    """``(head, parse(head))``: reads the start of the file by ``read(n)``,
    64 KiB first and then up to the library's header limit, until the library can parse the
    header (the header's length is the library's to find)."""
    from ._errors import FormatError

    n = min(size, 64 << 10)
    head = read(n)
    while True:
        try:
            return head, parse(head)
        except FormatError:  # a header cut short by the read; a wrong key is not retried
            if len(head) >= min(size, HEADER_BYTES + (64 << 10)):
                raise
            head += read(min(size, HEADER_BYTES + (64 << 10)) - len(head))


def _rekey_fsspec(fs, path, identities, keys, dest, force, dry_run):
    import secrets

    with fs.open(path, "rb") as f:
        size = fs.size(path)
        head, (new, old_len, plan) = _read_head(f.read, size, lambda h: _rekey_head(h, identities, **keys))
        if dry_run:
            return RekeyResult(**plan)
        if dest is not None and not force and fs.exists(dest):
            from ._errors import IoError

            raise IoError(f"{dest} exists (pass force=True to replace it)")
        target = dest or f"{path}.{secrets.token_hex(6)}.hyperseal-rekey"
        try:
            with fs.open(target, "wb") as out:
                out.write(new)
                out.write(head[old_len:])
                while chunk := f.read(8 << 20):
                    out.write(chunk)
        except BaseException:
            try:
                fs.rm_file(target)
            except (OSError, FileNotFoundError):
                pass
            raise
    if dest is None:
        fs.mv(target, path)
    return RekeyResult(**plan, written="rewritten", bytes=size - old_len + len(new))


def rekey_tree(paths, identities=None, *, passphrase=None, recipients=None, add=(), remove=(), remove_own=False,
               recursive=True, include=(), exclude=(), follow_symlinks=False, dry_run=False, manifest=None,
               split_links=False, allow_plugins=False, progress=None, client=None, storage_options=None,
               sops=False, rotate=False):
    """Re-keys every file under ``paths`` (a local folder or file, or a list of them) that
    hyperseal or age can open, as ``hyperseal rekey --recursive`` does; returns
    ``(files, summary)``: a dict per file (``path``, ``outcome`` — ``"in_place"``,
    ``"rewritten"``, ``"planned"`` (dry run), ``"already_done"``, ``"skipped"`` with its
    ``reason``, or ``"failed"`` with the ``error`` it raised — and the ``plan``), and the counts.

    Files that are not encrypted, not opened by ``identities``, symbolic links (unless
    ``follow_symlinks``) and other non-regular files are skipped, never touched; ``include`` and
    ``exclude`` globs select files (``*``/``?`` within a name, ``**`` across folders). One folder
    keeps ``FOLDER/.hyperseal-rekey.manifest`` (``manifest`` puts it elsewhere): a run that was
    killed resumes with the same call, applying the change once per file. ``progress(done,
    total)`` is called after each file. Keys and errors as :func:`rekey_file`.

    ``paths`` may also be an S3 prefix, ``"s3://bucket/prefix/"``: its objects are re-keyed by
    :func:`hyperseal.dask.rekey_prefix` on the Dask ``client`` given (with ``storage_options``
    for s3fs), each by a server-side copy; the result is that function's ``(objects, summary)``.

    ``sops=True``: the sops files among them (see the module docs), each file's age entries
    moved to ``recipients``, ``add``/``remove``, or its ``.sops.yaml`` creation rule
    (``rotate=True``: a fresh data key too). Each file is written whole and atomically, so a
    stopped run is finished by running it again (no manifest); files that are not sops files,
    or that no rule selects, are skipped. The outcomes are ``"changed"`` (``"planned"`` in a
    dry run, with ``added``/``removed`` age entries), ``"unchanged"``, ``"skipped"`` and
    ``"failed"``. ``include``, ``exclude``, ``follow_symlinks``, ``manifest`` and
    ``split_links`` are options of age trees.
    """
    if not sops:
        _no_sops_options(rotate)
    if isinstance(paths, str) and paths.startswith("s3://"):
        if client is None:
            from ._errors import ArgumentError

            raise ArgumentError(f"{paths}: an S3 prefix is re-keyed on Dask workers: pass client= (a "
                                "dask.distributed.Client), or call hyperseal.dask.rekey_prefix")
        if recursive is not True or follow_symlinks or split_links:
            from ._errors import ArgumentError

            raise ArgumentError("recursive, follow_symlinks and split_links are options of local trees")
        from .dask import rekey_prefix

        return rekey_prefix(client, paths, identities, passphrase=passphrase, recipients=recipients, add=add,
                            remove=remove, remove_own=remove_own, include=include, exclude=exclude,
                            dry_run=dry_run, manifest=manifest, storage_options=storage_options,
                            progress=progress, allow_plugins=allow_plugins, sops=sops, rotate=rotate)
    if client is not None or storage_options is not None:
        from ._errors import ArgumentError

        raise ArgumentError("client and storage_options are for an S3 prefix (s3://bucket/prefix/)")
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if sops:
        if include or exclude or follow_symlinks or manifest is not None or split_links:
            from ._errors import ArgumentError

            raise ArgumentError("sops files are selected by .sops.yaml's path_regex and written whole: include, "
                                "exclude, follow_symlinks, manifest and split_links are options of age trees")
        return _rekey_sops_files([os.fspath(p) for p in paths], identities, recursive=recursive, dry_run=dry_run,
                                 progress=progress,
                                 **_sops_keys(recipients, add, remove, passphrase, remove_own, allow_plugins, rotate))
    keys = _keys(recipients, add, remove, passphrase, remove_own, allow_plugins)
    return _rekey_tree([os.fspath(p) for p in paths], identities, recursive=recursive, include=list(include),
                       exclude=list(exclude), follow_symlinks=follow_symlinks, dry_run=dry_run,
                       manifest=None if manifest is None else os.fspath(manifest), split_links=split_links,
                       progress=progress, **keys)
