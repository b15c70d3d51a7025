"""The Delta Lake jars for Spark, fetched from Maven Central into a cache folder.

Just the two jars Delta needs beside Spark's own (about 10 MB), passed to a
session with ``spark.jars`` (:func:`binlogkit.spark.delta.with_delta`): leaner
and faster on a cold machine than ``configure_spark_with_delta_pip``, whose Ivy
resolution downloads some 170 MB, mostly jars Spark already has.
``python -m binlogkit.spark.jars DIR`` fills ``DIR`` (``scripts/test.sh`` does
it for ``.cache/jars``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import urllib.request
from pathlib import Path

__all__ = ["DELTA_JARS", "MAVEN_CENTRAL", "fetch_jars"]

log = logging.getLogger(__name__)

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"

DELTA_JARS = ("io.delta:delta-spark_4.2_2.13:4.4.0", "io.delta:delta-storage:4.4.0")
"""Maven coordinates; the version matches the ``delta-spark`` Python package pinned by the
``spark`` extra (4.4.1's jars are not on Maven Central)."""


def _url(coordinate: str) -> tuple[str, str]:
    """The download URL of a ``group:artifact:version`` jar and its file name."""
    group, artifact, version = coordinate.split(":")
    name = f"{artifact}-{version}.jar"
    return f"{MAVEN_CENTRAL}/{group.replace('.', '/')}/{artifact}/{version}/{name}", name


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        data: bytes = response.read()
    return data


def fetch_jars(folder: Path, coordinates: tuple[str, ...] = DELTA_JARS) -> list[Path]:
    """The jars' paths in ``folder``, downloading those not there yet (checked against Maven
    Central's SHA-1, written to a temporary name and renamed, so a partial file never counts)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for coordinate in coordinates:
        url, name = _url(coordinate)
        path = folder / name
        if not path.exists():
            log.info("downloading %s", url)
            data = _download(url)
            want = _download(url + ".sha1").decode().split()[0]
            if hashlib.sha1(data).hexdigest() != want:
                raise OSError(f"{url}: SHA-1 differs from Maven Central's {want}; try again")
            partial = path.with_name(f".{name}.{os.getpid()}")
            partial.write_bytes(data)
            partial.replace(path)
        paths.append(path)
    return paths


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="jars: %(message)s")
    fetch_jars(Path(sys.argv[1]))
