"""``mysqlbinlog`` / ``mariadb-binlog`` compatible text dumps of binlog events.

:class:`Dumper` prints events the way the tools do; :class:`DumpOptions`
holds the tools' output options. The formatters of the event families live
in :mod:`binlogkit.dump.formatters` (imported here so they are registered).
"""

from binlogkit.dump import formatters as _formatters  # noqa: F401  (registers the formatters)
from binlogkit.dump.dumper import Dumper, PrintState, formats
from binlogkit.dump.options import Base64Output, DumpOptions

__all__ = ["Base64Output", "DumpOptions", "Dumper", "PrintState", "formats"]
