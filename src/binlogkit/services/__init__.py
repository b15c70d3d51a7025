"""Long-running services built on the protocol drivers: replica stream, relay, servers."""
