"""Images from object stores: read through fsspec when it and the store's package are installed;
otherwise one clear error naming what to install. Other schemes in (untrusted) data are refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rubriclab.judges import MediaError, image_part


@pytest.mark.parametrize(
    "uri", ["ftp://intranet/x.png", "file:///etc/passwd", "ssh://host/x.png", "weird://a/b"]
)
def test_schemes_other_than_object_stores_are_refused(uri: str) -> None:
    with pytest.raises(MediaError, match="is not read here"):
        image_part(uri)


def test_without_fsspec_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(MediaError) as info:
        image_part("gs://bucket/car.jpg")
    message = str(info.value)
    assert "gcsfs" in message and "pip install 'rubriclab[remote]'" in message


def test_without_the_store_package_the_error_names_it() -> None:
    pytest.importorskip("fsspec")
    try:
        import s3fs  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover - only where s3fs happens to be installed
        pytest.skip("s3fs is installed")
    with pytest.raises(MediaError, match="needs s3fs: pip install s3fs"):
        image_part("s3://bucket/car.jpg")


def test_a_media_error_is_a_value_error_for_existing_callers() -> None:
    assert issubclass(MediaError, ValueError)


def test_a_local_file_is_an_image_by_its_content_never_by_its_name(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa.png"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    with pytest.raises(MediaError, match="not a recognised image by its content"):
        image_part(secret)
    real = tmp_path / "shot.bin"  # negative control: real PNG bytes under any name
    real.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    assert image_part(real)["image_url"]["url"].startswith("data:image/png;base64,")


def test_an_over_long_image_path_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(MediaError) as info:
        image_part(tmp_path / ("x" * 5000 + ".png"))
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
