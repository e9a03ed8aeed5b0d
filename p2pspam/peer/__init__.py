"""The peer daemon: configuration, SQLite storage, the agent API and metrics."""
