"""Benchmarks: ``python -m bench [latency] ...`` (see README, Performance)."""

__all__: list[str] = []
