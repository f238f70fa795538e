# Type stubs for the native module (src/*.rs). Buffer: any bytes-like object.
#
# Recipients: a recipient string as `hyperseal keygen`/`pubkey` print it ("age1...", "age1pq1...",
# "hs-mlkem1024...", an RSA SPKI PEM; several lines = several recipients), an Identity, or a list
# of them. Identities: an identity string ("AGE-SECRET-KEY-...", an identity file's text, a
# PKCS#8 PEM), an Identity, or a list of them. A passphrase is str or UTF-8 bytes. A key string
# that names an age plugin ("age1NAME1...", "AGE-PLUGIN-NAME-1...") runs the program
# age-plugin-NAME: every call refuses it (InvalidKeyError, ERR_HYPERSEAL_KEY) unless given
# allow_plugins=True. Never pass that for key strings that come from untrusted users.
import os
from collections.abc import Buffer, Callable, Sequence
from typing import IO, Literal, TypedDict, Unpack

__version__: str

_Recipients = str | Identity | Sequence[str | Identity]
_Identities = str | Identity | AgentIdentity | FileKey | Sequence[str | Identity | AgentIdentity | FileKey]
_Passphrase = str | Buffer
_Format = Literal["hyperseal", "age"]
_Suite = Literal["aes-256-gcm", "chacha20-poly1305", "sm4-gcm"]
_Path = str | os.PathLike[str]

def error_codes() -> list[str]:
    """Every stable error code, in the library's order (hyperseal.ERROR_CODES)."""

class Identity:
    """A key pair. ``public`` is the recipient string, ``secret`` the identity string; repr()
    never shows the secret. Pickling sends the secret (for Dask workers)::

        me = hyperseal.generate_key()
        same = hyperseal.Identity(me.secret)
        assert same == me and same.public == me.public
    """
    def __init__(self, secret: str) -> None: ...
    @property
    def public(self) -> str: ...
    @property
    def secret(self) -> str: ...

class AgentIdentity:
    """The identity agent (``hyperseal agent start``) at a socket path, as an identity: it
    answers for every key it holds, and ``rekey_tree`` asks it a window of files at a time.
    The package reads no environment; pass the path::

        agent = hyperseal.AgentIdentity(os.environ["HYPERSEAL_AGENT_SOCK"])
        plain = hyperseal.decrypt(sealed, agent)

    A dead agent fails at once, a hung one after ``timeout`` seconds (error code
    ``ERR_HYPERSEAL_KEY``).
    """
    def __init__(self, path: _Path, *, timeout: float = 10.0) -> None: ...
    @property
    def path(self) -> str: ...

class FileKey:
    """A file key from a detached header (:mod:`hyperseal.header`): it opens its one file as
    an identity does, so every decrypt function takes it as one. Zeroized when freed; repr()
    never shows it. ``expose()`` copies it into ``bytes``, which Python cannot zeroize."""
    def __init__(self, key: Buffer) -> None: ...
    def expose(self) -> bytes: ...
    def __len__(self) -> int: ...

def header_extract(file: Buffer | _Path) -> bytes:
    """The header of an (unarmored) file, byte for byte as age's ExtractHeader gives it."""

def header_decrypt(
    header: Buffer,
    identities: _Identities | None = None,
    *,
    passphrase: _Passphrase | None = None,
    allow_plugins: bool = False,
) -> FileKey:
    """The file key of a detached header, as age's DecryptHeader."""

def parse_key_as(kind: str, text: str) -> str:
    """``text`` checked as one key kind by that kind's parser, in its canonical spelling (for
    hyperseal.pyrage): "x25519-identity", "x25519-recipient", "pq-identity", "pq-recipient",
    "tag", "tagpq", "ssh-recipient", "ssh-identity", "plugin-identity", "plugin-recipient",
    "plugin-name", "plugin-identity:name", "plugin-recipient:name"."""

def encrypt_stream(
    reader: IO[bytes],
    writer: IO[bytes],
    recipients: _Recipients | None = None,
    *,
    passphrase: _Passphrase | None = None,
    format: _Format = "hyperseal",
    armor: bool = False,
    threads: int = 0,
    allow_plugins: bool = False,
) -> int:
    """Encrypts everything ``reader`` gives onto ``writer``, in constant memory."""

def decrypt_stream(
    reader: IO[bytes],
    writer: IO[bytes],
    identities: _Identities | None = None,
    *,
    passphrase: _Passphrase | None = None,
    threads: int = 0,
    allow_plugins: bool = False,
) -> int:
    """Decrypts a file (binary or armored) from ``reader`` onto ``writer``; chunks are written as
    they authenticate."""

def generate_key(kind: Literal["hybrid", "x25519", "mlkem1024", "rsa3072", "rsa4096"] = "hybrid") -> Identity:
    """A new key pair: "hybrid" (ML-KEM-768 + X25519, age v1.3's post-quantum keys, the
    default), "x25519", "mlkem1024", "rsa3072" or "rsa4096"::

        me = hyperseal.generate_key()
        assert me.public.startswith("age1pq1")
    """

def public_of(secret: str | Identity) -> str:
    """The recipient string of an identity (what ``hyperseal pubkey`` prints)."""

def encrypt(
    data: Buffer,
    recipients: _Recipients | None = None,
    *,
    passphrase: _Passphrase | None = None,
    format: _Format = "hyperseal",
    suite: _Suite | None = None,
    armor: bool = False,
    threads: int = 0,
    allow_plugins: bool = False,
) -> bytes:
    """Encrypts ``data`` to ``recipients`` or with ``passphrase`` (Argon2id; scrypt for age
    files) as one file, on every core (``threads``: 0 = all, 1 = this thread). ``format="age"``
    writes an age v1 file any age implementation opens; ``armor`` PEM-style text::

        sealed = hyperseal.encrypt(b"secret", me.public)
        text = hyperseal.encrypt(b"secret", "age1...", format="age", armor=True)
    """

def decrypt(
    data: Buffer,
    identities: _Identities | None = None,
    *,
    passphrase: _Passphrase | None = None,
    threads: int = 0,
    allow_plugins: bool = False,
) -> bytes:
    """Decrypts a hyperseal or age file (binary or armored). Returns nothing unless the whole
    file authenticates; raises AuthenticationError, NoIdentityError or FormatError::

        assert hyperseal.decrypt(sealed, me) == b"secret"
    """

def encrypt_file(
    src: _Path,
    dst: _Path,
    recipients: _Recipients | None = None,
    *,
    passphrase: _Passphrase | None = None,
    format: _Format = "hyperseal",
    suite: _Suite | None = None,
    armor: bool = False,
    force: bool = False,
    progress: Callable[[int, int], object] | None = None,
    threads: int = 0,
    allow_plugins: bool = False,
) -> int:
    """Encrypts the file ``src`` into ``dst`` with constant memory on every core; returns the
    plaintext length. ``dst`` appears only when complete (mode 0600); an existing file is
    replaced (atomically) only with ``force=True``; devices and FIFOs are written through.
    ``progress(done, total)`` gets input bytes; an exception it raises stops the run and
    nothing is written::

        hyperseal.encrypt_file("t.parquet", "t.parquet.hs", me.public,
                               progress=lambda done, total: print(f"{done}/{total}"))
    """

def decrypt_file(
    src: _Path,
    dst: _Path,
    identities: _Identities | None = None,
    *,
    passphrase: _Passphrase | None = None,
    force: bool = False,
    progress: Callable[[int, int], object] | None = None,
    threads: int = 0,
    allow_plugins: bool = False,
) -> int:
    """Decrypts ``src`` (binary or armored) into ``dst``; returns the plaintext length. On any
    failure (damage, a cut file, a wrong key) ``dst`` is left as it was: a failed decrypt
    leaves no output file::

        hyperseal.decrypt_file("t.parquet.hs", "t.parquet", me)
    """

class Sealer:
    """Push-based encryption: ``update()`` returns the header and every complete chunk,
    ``finalize()`` the rest (the final chunk)::

        s = hyperseal.Sealer(me.public)
        sealed = s.update(b"hello, ") + s.update(b"world") + s.finalize()
    """
    def __init__(
        self,
        recipients: _Recipients | None = None,
        *,
        passphrase: _Passphrase | None = None,
        format: _Format = "hyperseal",
        suite: _Suite | None = None,
        threads: int = 0,
        allow_plugins: bool = False,
    ) -> None: ...
    def update(self, data: Buffer) -> bytes: ...
    def finalize(self) -> bytes: ...

class Opener:
    """Push-based decryption of a binary file: ``update()`` returns only plaintext that
    authenticated, ``finalize()`` fails on a file cut short. After a failure every call raises
    AlreadyFinalized::

        o = hyperseal.Opener(me)
        plain = o.update(sealed[:1000]) + o.update(sealed[1000:]) + o.finalize()
    """
    def __init__(
        self, identities: _Identities | None = None, *, passphrase: _Passphrase | None = None, threads: int = 0,
        allow_plugins: bool = False,
    ) -> None: ...
    def update(self, data: Buffer) -> bytes: ...
    def finalize(self) -> bytes: ...

class Reader:
    """Native half of ``hyperseal.open(..., "rb")`` (use that)."""
    def __init__(
        self, source: object, identities: _Identities | None = None, *, passphrase: _Passphrase | None = None,
        threads: int = 0,
        allow_plugins: bool = False,
    ) -> None: ...
    def readinto(self, buf: Buffer) -> int: ...
    def seek(self, offset: int, whence: int = 0) -> int: ...
    def tell(self) -> int: ...
    def seekable(self) -> bool: ...
    @property
    def size(self) -> int | None: ...
    def close(self) -> None: ...

class Writer:
    """Native half of ``hyperseal.open(..., "wb")`` (use that)."""
    def __init__(
        self, target: object, recipients: _Recipients | None = None, *, passphrase: _Passphrase | None = None,
        format: _Format = "hyperseal", suite: _Suite | None = None, force: bool = False, threads: int = 0,
        allow_plugins: bool = False,
    ) -> None: ...
    def write(self, data: Buffer) -> int: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    @property
    def closed(self) -> bool: ...

class C2spEncryptor:
    def __init__(self, key: Buffer, context: Buffer | None = None, *, threads: int | None = None) -> None: ...
    @staticmethod
    def generate_key(bits: int = 256) -> bytes: ...
    def update(self, data: Buffer) -> bytes: ...
    def update_into(self, data: Buffer, buf: Buffer) -> int: ...
    def finalize(self) -> bytes: ...

class C2spDecryptor:
    def __init__(self, key: Buffer, context: Buffer | None = None, *, threads: int | None = None) -> None: ...
    def update(self, data: Buffer) -> bytes: ...
    def update_into(self, data: Buffer, buf: Buffer) -> int: ...
    def finalize(self) -> bytes: ...


class _RekeyChange(TypedDict, total=False):
    """The keywords every file re-key takes: the opening passphrase (instead of identities),
    the new recipients (the full list, or ``add``/``remove``), whether the result may leave out
    the given identities, and whether plugin keys are allowed (all default to None or False)."""

    passphrase: _Passphrase | None
    recipients: _Recipients | None
    add: _Recipients | None
    remove: _Recipients | None
    remove_own: bool
    allow_plugins: bool

def rekey_file(
    path: _Path,
    identities: _Identities | None = None,
    *,
    output: _Path | None = None,
    force: bool = False,
    dry_run: bool = False,
    split_links: bool = False,
    **change: Unpack[_RekeyChange],
) -> dict[str, object]:
    """The library's file re-key (see :func:`hyperseal.rekey_file`): the plan (``before``,
    ``after``, ``removed``, ``added``) with ``written`` ("in_place", "rewritten", "nothing")
    and ``bytes``."""

def rekey_tree(
    paths: list[_Path],
    identities: _Identities | None = None,
    *,
    recursive: bool = True,
    include: list[str] = ...,
    exclude: list[str] = ...,
    follow_symlinks: bool = False,
    dry_run: bool = False,
    manifest: _Path | None = None,
    split_links: bool = False,
    progress: Callable[[int, int], object] | None = None,
    **change: Unpack[_RekeyChange],
) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The library's tree re-key (see :func:`hyperseal.rekey_tree`): a dict per file and the
    counts (``in_place``, ``rewritten``, ``already_done``, ``skipped``, ``failed``)."""

def rekey_change_id(
    recipients: _Recipients | None = None,
    add: _Recipients | None = None,
    remove: _Recipients | None = None,
    remove_own: bool = False,
    allow_plugins: bool = False,
) -> str:
    """The change's name, as every re-key manifest records it (FORMAT.md §9.3)."""

def rekey_selected(include: list[str], exclude: list[str], rel: str) -> bool:
    """Whether ``rel`` passes the include and exclude globs, as the tree re-key selects."""

def looks_encrypted(head: Buffer) -> bool:
    """Whether bytes begin as a hyperseal or age file does."""

def rekey_sops_files(
    paths: list[_Path],
    identities: _Identities | None,
    *,
    recipients: _Recipients | None = None,
    add: _Recipients | None = None,
    remove: _Recipients | None = None,
    force: bool = False,
    rotate: bool = False,
    dry_run: bool = False,
    recursive: bool = True,
    allow_plugins: bool = False,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The library's sops re-key of files and folders (see :func:`hyperseal.rekey_tree` with
    ``sops=True``): a dict per file (``outcome``: "changed", "planned", "unchanged", "skipped",
    "failed") and the counts."""

def rekey_sops_bytes(
    data: Buffer,
    identities: _Identities | None,
    *,
    name: str | None = None,
    format: Literal["yaml", "json", "binary", "dotenv", "ini"] | None = None,
    recipients: _Recipients | None = None,
    add: _Recipients | None = None,
    remove: _Recipients | None = None,
    force: bool = False,
    rotate: bool = False,
    allow_plugins: bool = False,
) -> tuple[bytes | None, int, int]:
    """A sops file in memory re-keyed: ``(new, added, removed)``, ``new`` None when it is
    already the target. Its format is ``format``, or sops's reading of ``name``."""

def looks_like_sops(data: bytes, name: str) -> bool:
    """Whether bytes carry sops metadata, as sops stores a file called ``name``."""

def rekey_head(
    head: Buffer,
    identities: _Identities | None = None,
    **change: Unpack[_RekeyChange],
) -> tuple[bytes, int, dict[str, object]]:
    """``(new_header, old_header_len, plan)`` for the start of a binary file (see
    :func:`hyperseal.rekey_bytes`)."""

def c2sp_encrypt(key: Buffer, data: Buffer, context: Buffer | None = None) -> bytes: ...
def c2sp_decrypt(key: Buffer, data: Buffer, context: Buffer | None = None) -> bytes: ...

class PartKey:
    """One file sealed or opened in chunk-aligned parts (see :mod:`hyperseal.parts`)."""

    @classmethod
    def seal_new(
        cls,
        plaintext_len: int,
        recipients: _Recipients | None = None,
        *,
        passphrase: _Passphrase | None = None,
        format: _Format = "hyperseal",
        suite: _Suite | None = None,
        chunk_size: int | None = None,
        allow_plugins: bool = False,
    ) -> tuple[bytes, PartKey]: ...
    @classmethod
    def open_file(
        cls, file: IO[bytes], file_len: int, identities: _Identities | None = None, *, passphrase: _Passphrase | None = None,
        allow_plugins: bool = False,
    ) -> PartKey: ...
    def plan(self, part_size: int) -> list[tuple[int, int, int, int, int]]:
        """``(first_chunk, plaintext_start, plaintext_end, file_start, file_end)`` per part."""
    def seal(self, first_chunk: int, data: Buffer, part_size: int | None = None) -> bytes:
        """Seals one part, claimed in this key's in-memory store: the same bytes again give the
        same output, other bytes for the part raise ``ArgumentError``. ``part_size`` defaults to
        this key's last ``plan()``, else to what the part shows."""
    def open(self, first_chunk: int, data: Buffer) -> bytes: ...
    def seal_into(self, first_chunk: int, data: Buffer, out: Buffer, part_size: int | None = None) -> None:
        """``seal`` into a writable buffer of exactly the sealed part's size (wiped if refused)."""
    def open_into(self, first_chunk: int, data: Buffer, out: Buffer) -> int:
        """``open`` into a writable buffer; returns the plaintext length."""
    def seal_claimed(self, store: object, part_size: int, first_chunk: int, data: Buffer) -> bytes:
        """``seal``, with the plan and the part claimed in ``store`` first (an object with
        ``put_new(name, record) -> bytes | None``, see :mod:`hyperseal._claims`): other bytes
        under claimed nonces raise ``ArgumentError``."""
    def seal_claimed_into(self, store: object, part_size: int, first_chunk: int, data: Buffer,
                          out: Buffer) -> None:
        """``seal_claimed`` into a private writable buffer of exactly the sealed part's size."""
    def claims_of(self, part_size: int, first_chunk: int, sealed: Buffer) -> list[tuple[str, bytes]]:
        """The plan's and the part's ``(name, record)`` claims of a part sealed elsewhere."""
    @property
    def chunk_size(self) -> int: ...
    @property
    def plaintext_len(self) -> int: ...
    @property
    def file_len(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    @classmethod
    def from_bytes(cls, data: Buffer) -> PartKey: ...

class AtomicOutput:
    """The library's nothing-lost output, with a named temporary that other processes write at
    offsets (``hyperseal.dask``'s large objects)."""

    def __init__(self, path: _Path, *, force: bool = False) -> None: ...
    @property
    def temporary_path(self) -> str: ...
    def commit(self) -> None: ...
    def discard(self) -> None: ...

# ── the toolkit (names as in the Node package) ──────────────────────────────────────────
_HashAlgo = Literal[
    "sha256", "sha384", "sha512", "sha3-256", "sha3-512", "blake2b512", "blake3", "sm3", "legacy-md5", "legacy-sha1"
]
_MacAlgo = Literal[
    "sha256", "sha384", "sha512", "sha3-256", "sha3-512", "blake2b512", "sm3", "legacy-sha1", "legacy-md5"
] | str

def hash(algo: _HashAlgo, data: Buffer | str) -> bytes:
    """The digest of ``data`` (a ``str`` is hashed as UTF-8): ``sha256``, ``sha384``,
    ``sha512``, ``sha3-256``, ``sha3-512``, ``blake2b512``, ``blake3``, ``sm3``, and the
    collision-broken ``legacy-md5`` / ``legacy-sha1`` (bare ``md5``/``sha1`` are refused)::

        hyperseal.hash("sha256", b"abc").hex()   # same as hashlib.sha256(b"abc").hexdigest()
    """

def hash_file(algo: _HashAlgo, path: _Path) -> bytes:
    """The digest of a file, read with the GIL released (BLAKE3: every core, memory-mapped)."""

def hmac(algo: _MacAlgo, key: Buffer | str, data: Buffer | str) -> bytes:
    """The HMAC tag of ``data`` under ``key``; ``algo`` is a hash name (``"sha256"``) or the
    toolkit's ``"hmac-sha256"``."""

def hmac_verify(algo: _MacAlgo, key: Buffer | str, data: Buffer | str, tag: Buffer) -> bool:
    """Whether ``tag`` is the HMAC of ``data`` under ``key``, compared in constant time; a tag
    of the wrong length is ``False``."""

# Native names behind hyperseal.kdf, .aead, .sign and .token (documented in their own stubs).
def kdf_pbkdf2(password: Buffer | str, salt: Buffer | str, *, iterations: int = ..., hash: str = ..., length: int = ...) -> bytes: ...
def kdf_argon2id(
    password: Buffer | str, salt: Buffer | str, *, memory_kib: int = ..., time_cost: int = ..., parallelism: int = ..., length: int = ...
) -> bytes: ...
def kdf_scrypt(
    password: Buffer | str, salt: Buffer | str, *, cost: int = ..., block_size: int = ..., parallelization: int = ..., length: int = ...
) -> bytes: ...
def kdf_hkdf(ikm: Buffer | str, salt: Buffer | str, info: Buffer | str, length: int, *, hash: str = ...) -> bytes: ...
def aead_seal(algo: str, key: Buffer, plaintext: Buffer | str, *, aad: Buffer | str | None = None) -> bytes: ...
def aead_open(algo: str, key: Buffer, sealed: Buffer, *, aad: Buffer | str | None = None) -> bytes: ...
def aead_generate_key(algo: str) -> bytes: ...
def sign_generate_key_pair(kind: str = "ed25519") -> tuple[str, str]: ...
def sign_message(private_key: str, data: Buffer | str, *, padding: str | None = None) -> bytes: ...
def sign_verify(public_key: str, data: Buffer | str, signature: Buffer, *, padding: str | None = None) -> bool: ...
def sign_public_key_of(private_key: str) -> str: ...
def token_generate_key() -> str: ...
def token_seal(key: str, plaintext: Buffer | str, *, aad: Buffer | str | None = None, ttl_seconds: float | None = None) -> str: ...
def token_open(keys: str | Sequence[str], token: str, *, aad: Buffer | str | None = None) -> bytes: ...
