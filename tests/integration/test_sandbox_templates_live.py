"""Servers of ``mariadb_factory`` start on copies of one ``mariadb-install-db`` data directory
(``DatadirTemplates``): each copy is a server of its own; one install per InnoDB size."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from binlogkit.sandbox import DatadirTemplates, MariaDBSandbox


def test_servers_from_one_template_are_independent(
    mariadb_factory: Callable[..., MariaDBSandbox], tmp_path: Path
) -> None:
    templates = DatadirTemplates(tmp_path)
    first = mariadb_factory("template-a")
    second = mariadb_factory("template-b", innodb_log_file_size="16M")
    first.execute("CREATE DATABASE only_a; CREATE TABLE only_a.t (id INT PRIMARY KEY)")
    second.execute("CREATE DATABASE only_b")
    assert ("only_a",) in first.query("SHOW DATABASES")
    assert ("only_a",) not in second.query("SHOW DATABASES")
    assert ("only_b",) not in first.query("SHOW DATABASES")
    assert second.variable("innodb_log_file_size") == str(16 * 1024 * 1024)
    assert first.datadir.resolve() != second.datadir.resolve()

    sizes = {"innodb_log_file_size": "8M", "innodb_buffer_pool_size": "32M"}
    made = templates.datadir(sizes)
    assert (made / "mysql").is_dir()
    assert templates.datadir({**sizes, "server_id": 9}) == made  # installed once
    assert list(tmp_path.glob("datadir-*")) == [made]
