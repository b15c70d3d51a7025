"""Command-line entry points; they hold no logic of their own."""
