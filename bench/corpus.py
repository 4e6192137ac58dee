"""Deterministic, varied memory texts and queries for benchmarks (no downloads)."""

from __future__ import annotations

import random

__all__ = ["memory_texts", "query_texts"]

_SUBJECTS = (
    "the payments service",
    "the login page",
    "our CI pipeline",
    "the nightly backup job",
    "the search index",
    "the mobile app",
    "the billing database",
    "the staging cluster",
    "the React dashboard",
    "the GraphQL gateway",
    "the data warehouse",
    "the email worker",
    "the auth middleware",
    "the Kafka consumer",
    "the Terraform module",
)
_EVENTS = (
    "failed after the upgrade to version {n}",
    "timed out under load of {n} requests per second",
    "leaked memory when the cache grew past {n} MB",
    "needed a retry policy with {n} attempts",
    "was moved to a new region to cut latency by {n} ms",
    "broke because a certificate expired on day {n}",
    "got {n}% faster once the N+1 queries were batched",
    "dropped events when the queue held {n} messages",
)
_LESSONS = (
    "Always check {s} logs before restarting anything.",
    "Never deploy {s} on a Friday without a rollback plan.",
    "Prefer feature flags when changing {s}.",
    "Pin the dependency versions of {s} in CI.",
)
_TOPICS = (
    "how to debug {s}",
    "why did {s} fail",
    "performance problems in {s}",
    "deployment rules for {s}",
    "what broke in {s} last time",
    "monitoring for {s}",
)


def memory_texts(count: int, seed: int = 7) -> list[str]:
    """``count`` distinct texts mixing episodes, lessons and facts about software systems."""
    rng = random.Random(seed)
    texts = []
    for index in range(count):
        subject = rng.choice(_SUBJECTS)
        if index % 3 == 2:
            text = rng.choice(_LESSONS).format(s=subject)
        else:
            text = f"{subject.capitalize()} {rng.choice(_EVENTS).format(n=rng.randint(2, 900))}."
        texts.append(f"{text} (note {index})")
    return texts


def query_texts(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(_TOPICS).format(s=rng.choice(_SUBJECTS)) for _ in range(count)]
