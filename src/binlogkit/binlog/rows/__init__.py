"""Rows: column types, row plans and row images."""
