"""The binlog format: pure decoding and encoding, no I/O."""
