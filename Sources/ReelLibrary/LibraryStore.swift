// The library tree on SQLite.
