"""Everything that touches files, sockets and streams around the pure decoder."""
