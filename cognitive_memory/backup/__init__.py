"""Snapshots of the memory database (`snapshot`: made while servers write, checked before use)
and putting one in place of a data directory's database (`restore`)."""

__all__: list[str] = []
