"""Every error path of the command line: exit code non-zero, one ``Error:`` line, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import invoke
from corpus_walk import walk
from time_limit import time_limit

FILE = "local-mariadb-10.11/compressed/mysql-bin.000002"
MAIN = "import sys; from binlogkit.cli.main import main; main(sys.argv[1:])"


@pytest.mark.parametrize(
    "args",
    [
        ["events", "--start-position", "9223372036854775807"],
        ["events", "--start-position", "99999999999999999999999"],
        ["events", "--start-position", "-5"],
        ["rows", "--start-position", "-5"],
        ["dump", "--stop-position", "-1"],
        ["dump", "--rewrite-db", "nodelim"],
        ["flashback", "--rewrite-db", "nodelim"],
        ["dump", "--include-gtids", "garbage"],
        ["flashback", "--include-gtids", "garbage"],
        ["dump", "--exclude-gtids", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-x"],
        ["flashback", "--exclude-gtids", "uuid:1-x"],
        ["dump", "--do-domain-ids", "1,x"],
    ],
)
def test_bad_option_values(corpus_dir: Path, args: list[str]) -> None:
    run = invoke(*args, str(corpus_dir / FILE))
    assert run.failed_cleanly() is None, run.failed_cleanly()


def test_index_naming_a_missing_binlog(corpus_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "mysql-bin.000002").symlink_to(corpus_dir / FILE)
    (tmp_path / "mysql-bin.index").write_text("./mysql-bin.000002\n./mysql-bin.000003\n")
    for command in ("events", "rows", "dump"):
        run = invoke(command, str(tmp_path / "mysql-bin.index"))
        assert run.failed_cleanly() is None, run.failed_cleanly()
        assert "mysql-bin.000003" in run.stderr


@pytest.mark.parametrize("folder", ["/proc/nope", "file"])
def test_relay_into_a_folder_it_cannot_make(tmp_path: Path, folder: str) -> None:
    if folder == "file":
        folder = str(tmp_path / "file")
        Path(folder).write_bytes(b"")
    run = invoke("relay", "mysql://u@127.0.0.1:1", "--to", folder)
    assert run.failed_cleanly() is None, run.failed_cleanly()


@pytest.mark.parametrize("command", [["events"], ["rows"], ["dump", "-v"], ["flashback", "--sql"]])
def test_output_to_a_full_device(corpus_dir: Path, command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-c", MAIN, *command, str(corpus_dir / FILE)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert errors == ["Error: cannot write the output: No space left on device"], done.stderr


def test_skip_corrupt_goes_past_a_damaged_event(corpus_dir: Path, tmp_path: Path) -> None:
    data = bytearray((corpus_dir / FILE).read_bytes())
    data[700] ^= 0xFF  # inside the third event's body: its CRC32 fails
    path = tmp_path / "damaged.bin"
    path.write_bytes(data)
    for command in (["events"], ["rows"], ["dump", "-v"]):
        stopped = invoke(*command, str(path))
        assert stopped.failed_cleanly() is None and "--skip-corrupt" in stopped.stderr
        skipped = invoke(*command, "--skip-corrupt", str(path))
        assert skipped.exit_code == 0, skipped.stderr
        assert len(skipped.stdout) > len(stopped.stdout)


def test_follow_reads_what_is_appended(corpus_dir: Path, tmp_path: Path) -> None:
    data = (corpus_dir / FILE).read_bytes()
    path = tmp_path / "growing.bin"
    path.write_bytes(data[:700])
    last = walk(data).events[-1].offset
    with subprocess.Popen(
        [sys.executable, "-c", MAIN, "events", "--follow", str(path)],
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        try:
            with time_limit(30):
                assert child.stdout is not None
                with path.open("ab") as f:
                    f.write(data[700:])
                offsets = (line.split("\t")[1:2] for line in child.stdout)
                assert any(offset == [str(last)] for offset in offsets)
        finally:
            child.terminate()
