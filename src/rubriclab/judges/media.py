"""Images as OpenAI content parts: URLs pass through, local files are read and base64-encoded.

Multimodal rubrics put these parts in a user message's ``content`` list. Other stores
(``gs://`` as in Vertex datasets, ``s3://``, ``az://`` ...) are read through ``fsspec`` and the
store's package (``gcsfs`` for ``gs://``) when they are installed; when not, the image is a
:class:`MediaError` naming the package to install, which callers record on that row.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["MediaError", "image_part"]

_REMOTE = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
#: the object stores read through fsspec, and the package each needs (the only schemes read:
#: a dataset is untrusted, and fsspec also speaks ftp, ssh, http and local files)
_STORE_PACKAGES = {
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "s3": "s3fs",
    "s3a": "s3fs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
}


class MediaError(ValueError):
    """An image that cannot be read or sent; the message says which and why (a row error)."""


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def _sniff(data: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    head = data[:256].lstrip().lower()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in data[:1024]):
        return "image/svg+xml"
    return None


def image_part(
    source: str | os.PathLike[str] | bytes, *, detail: str | None = None
) -> dict[str, Any]:
    """An ``{"type": "image_url", ...}`` part from an http(s) URL, a data URI, a path or bytes."""
    if isinstance(source, bytes):
        url = _data_uri(source, "the given bytes")
    elif isinstance(source, str) and source.startswith(("http://", "https://", "data:")):
        if source.startswith("data:") and ";base64," not in source[:100]:
            raise MediaError("image data URI must be base64: 'data:image/png;base64,...'")
        url = source
    elif isinstance(source, str) and _REMOTE.match(source):
        scheme = source.split("://", 1)[0].lower()
        if scheme not in _STORE_PACKAGES:  # data is untrusted: no ftp://, ssh://, file:// ...
            raise MediaError(
                f"image {source!r}: {scheme}:// is not read here; use http(s), a data: URI, a "
                f"local path, or an object store ({', '.join(sorted(_STORE_PACKAGES))})"
            )
        url = _data_uri(_read_remote(source), repr(source))
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        try:
            data = path.read_bytes()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise MediaError(
                f"image file {_short(path)} cannot be read ({reason}): pass an http(s) URL, "
                "a data: URI, or the path of a readable image file"
            ) from None
        url = _data_uri(data, _short(path))
    else:
        raise TypeError(
            f"image_part() takes a URL, data URI, file path or bytes, not {type(source).__name__}"
        )
    image: dict[str, Any] = {"url": url}
    if detail is not None:
        if detail not in ("auto", "low", "high"):
            raise ValueError(f"detail must be 'auto', 'low' or 'high', got {detail!r}")
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def _short(path: Path) -> str:
    """A path for a one-line message (an over-long one is cut)."""
    text = str(path)
    return repr(text if len(text) <= 200 else text[:100] + "…" + text[-60:])


def _read_remote(uri: str) -> bytes:
    """The bytes at ``gs://...`` (or any fsspec store), or a MediaError saying what to install."""
    match = _REMOTE.match(uri)
    scheme = match.group(1).lower() if match else ""
    package = _STORE_PACKAGES.get(scheme)
    needs = f"fsspec and {package}" if package else "fsspec and the package for this store"
    try:
        import fsspec
    except ImportError:
        raise MediaError(
            f"image {uri!r}: reading {scheme}:// needs {needs}: pip install 'rubriclab[remote]' "
            f"(or pip install fsspec{' ' + package if package else ''})"
        ) from None
    try:
        with fsspec.open(uri, "rb") as fh:
            data: bytes = fh.read()
    except ImportError as exc:  # fsspec knows the store but its package is missing
        missing = package or str(exc)
        raise MediaError(
            f"image {uri!r}: reading {scheme}:// needs {missing}: pip install {missing}"
        ) from None
    except FileNotFoundError:
        raise MediaError(f"image {uri!r} cannot be read (no such object)") from None
    except (OSError, RuntimeError) as exc:  # no permission, no network, no credentials
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise MediaError(f"image {uri!r} cannot be read ({reason})") from None
    return data


def _data_uri(data: bytes, what: str) -> str:
    """A data URI of an image, its type read from its content (never from a file name: a
    ``notes.png`` holding text, or a key file, is not sent to a judge as an image)."""
    if not data:
        raise MediaError(f"image file {what} is empty")
    mime = _sniff(data)
    if mime is None:
        raise MediaError(
            f"image file {what} is not a recognised image by its content (png, jpeg, gif, "
            "webp, bmp, svg)"
        )
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
