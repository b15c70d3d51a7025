"""Delta's jars fetched into a cache folder: checked against Maven Central's SHA-1, kept once."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from binlogkit.spark import jars


def _serve(monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes]) -> list[str]:
    asked: list[str] = []

    def download(url: str) -> bytes:
        asked.append(url)
        return files[url]

    monkeypatch.setattr(jars, "_download", download)
    return asked


def test_jars_are_downloaded_once_and_checked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"{jars.MAVEN_CENTRAL}/io/delta/delta-storage/4.4.0/delta-storage-4.4.0.jar"
    data = b"jar bytes"
    asked = _serve(monkeypatch, {url: data, url + ".sha1": hashlib.sha1(data).hexdigest().encode()})
    coordinates = ("io.delta:delta-storage:4.4.0",)
    paths = jars.fetch_jars(tmp_path / "cache", coordinates)
    assert paths == [tmp_path / "cache" / "delta-storage-4.4.0.jar"]
    assert paths[0].read_bytes() == data and asked == [url, url + ".sha1"]
    assert jars.fetch_jars(tmp_path / "cache", coordinates) == paths
    assert len(asked) == 2


def test_a_corrupt_download_leaves_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = f"{jars.MAVEN_CENTRAL}/io/delta/delta-storage/4.4.0/delta-storage-4.4.0.jar"
    _serve(monkeypatch, {url: b"cut", url + ".sha1": b"0" * 40 + b"  delta-storage-4.4.0.jar"})
    with pytest.raises(OSError, match="SHA-1 differs"):
        jars.fetch_jars(tmp_path, ("io.delta:delta-storage:4.4.0",))
    assert list(tmp_path.iterdir()) == []


def test_the_jars_match_the_pinned_python_package() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    for coordinate in jars.DELTA_JARS:
        assert f'"delta-spark=={coordinate.rsplit(":", 1)[1]}"' in pyproject
