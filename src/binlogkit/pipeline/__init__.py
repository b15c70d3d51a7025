"""Processing decoded events: row changes, transactions, filters."""
