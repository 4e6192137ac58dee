"""The encoder on its own, torch against ONNX Runtime, on the same texts in one process."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.latency import percentiles, time_each
from cognitive_memory.encoding import Encoder, OnnxEncoder, SentenceBertEncoder
from cognitive_memory.encoding.onnx_export import min_cosine

__all__ = ["batch_per_second", "compare", "encoder_numbers"]

BATCH = 64
ROUNDS = 3


def batch_per_second(encoder: Encoder, texts: Sequence[str]) -> float:
    """Texts per second embedded in batches of 64 (one warm-up batch first)."""
    encoder.encode(texts[:BATCH])
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        encoder.encode(texts[start : start + BATCH])
    return len(texts) / (time.perf_counter() - started)


def encoder_numbers(encoder: Encoder, cues: Sequence[str], sample: Sequence[str]) -> dict[str, Any]:
    """Batch-1 latency over ``cues`` and batch throughput over ``sample`` (median of 3 passes)."""
    encoder.encode(cues[:5])
    rates = [batch_per_second(encoder, sample) for _ in range(ROUNDS)]
    return {
        "batch1": percentiles(time_each(lambda text: encoder.encode([text]), cues)),
        "batch_per_second": round(statistics.median(rates), 1),
    }


def compare(
    torch_encoder: SentenceBertEncoder, onnx_encoder: OnnxEncoder, cues: Sequence[str], sample: Sequence[str]
) -> dict[str, Any]:
    """torch and ONNX Runtime: batch-1 p50/p95, throughput, and how close their vectors are."""
    torch_encoder.warm_up()
    onnx_encoder.warm_up()
    texts = [*cues, *sample]
    cosine = min_cosine(onnx_encoder.encode(texts), torch_encoder.encode(texts))
    torch_numbers = encoder_numbers(torch_encoder, cues, sample)
    onnx_numbers = encoder_numbers(onnx_encoder, cues, sample)
    return {
        "torch": torch_numbers,
        "onnx": {**onnx_numbers, "backend": onnx_encoder.backend},
        "min_cosine_onnx_vs_torch": round(float(np.float64(cosine)), 7),
        "onnx_batch1_speedup": _ratio(torch_numbers["batch1"]["p50_ms"], onnx_numbers["batch1"]["p50_ms"]),
        "onnx_throughput_ratio": _ratio(onnx_numbers["batch_per_second"], torch_numbers["batch_per_second"]),
    }


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 2)
