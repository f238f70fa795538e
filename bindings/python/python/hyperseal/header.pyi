from collections.abc import Buffer

from ._hyperseal import FileKey as FileKey
from ._hyperseal import header_decrypt as decrypt
from ._hyperseal import header_extract as extract

__all__ = ["FileKey", "decrypt", "decrypt_with_file_key", "extract"]

def decrypt_with_file_key(data: Buffer, file_key: FileKey, *, threads: int = 0) -> bytes: ...
