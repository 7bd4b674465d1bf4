"""The `recheck-gate` CI command: plain Python, importable without Django."""
