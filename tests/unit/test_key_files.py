"""Key files: MariaDB's file_key_management format, plain and encrypted by ``openssl enc``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from binlogkit.errors import BinlogError
from binlogkit.io.key_files import BinlogEncryption, read_key_file

KEYS = """# comment
1;770A8A65DA156D24EE2A093277530142
   # another comment

33;B374A26A71490437AA024E4FADD5B497FDFF1A8EA6FF12F6FB65AF2720B59CCF
4;18420B5CBA31CCDFFE9716E91EB61374D05914F3ADE23E03 --> ignored
"""


def test_plain_key_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(KEYS)
    keys = read_key_file(path)
    assert keys.kind == "file_key_management"
    assert keys.keys == {
        1: bytes.fromhex("770A8A65DA156D24EE2A093277530142"),
        33: bytes.fromhex("B374A26A71490437AA024E4FADD5B497FDFF1A8EA6FF12F6FB65AF2720B59CCF"),
        4: bytes.fromhex("18420B5CBA31CCDFFE9716E91EB61374D05914F3ADE23E03"),
    }
    assert BinlogEncryption.from_key_file(path).key == keys.keys[1]
    with pytest.raises(BinlogError, match="key id 7 is not in the key file"):
        keys.key(7)
    with pytest.raises(BinlogError, match="a file key was given but the key file is not encrypted"):
        read_key_file(path, "secret")


@pytest.mark.parametrize("line", ["1;ABC", "x;00", "0;" + "00" * 16, "2;" + "00" * 20])
def test_bad_key_line_names_its_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(f"# first\n{line}\n")
    with pytest.raises(BinlogError, match="line 2 is not ID;HEXKEY") as err:
        read_key_file(path)
    assert err.value.file == str(path)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_key_file_encrypted_by_openssl(tmp_path: Path) -> None:
    plain = tmp_path / "keys.txt"
    plain.write_text(KEYS)
    encrypted = tmp_path / "keys.enc"
    command = ["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass", "pass:secret"]
    subprocess.run([*command, "-in", str(plain), "-out", str(encrypted)], check=True)
    secret_file = tmp_path / "filekey"
    secret_file.write_text("secret\n")
    assert read_key_file(encrypted, "secret") == read_key_file(encrypted, f"FILE:{secret_file}")
    assert read_key_file(encrypted, "secret").keys == read_key_file(plain).keys
    with pytest.raises(BinlogError, match="the key file is encrypted"):
        read_key_file(encrypted)
    # A wrong secret fails the padding check, or (1 in ~256, the salt is random) gives garbage.
    with pytest.raises(BinlogError, match=r"cannot decrypt the key file: wrong|is not ID;HEXKEY"):
        read_key_file(encrypted, "not the secret")
