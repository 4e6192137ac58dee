"""Text encoders: the real all-MiniLM-L6-v2 and a deterministic stand-in for tests."""

from cognitive_memory.encoding.base import Encoder
from cognitive_memory.encoding.hashing import HashEncoder
from cognitive_memory.encoding.onnx_encoder import OnnxEncoder
from cognitive_memory.encoding.sentence_bert import DEFAULT_MODEL, SentenceBertEncoder, resolve_model_path

__all__ = [
    "DEFAULT_MODEL",
    "Encoder",
    "HashEncoder",
    "OnnxEncoder",
    "SentenceBertEncoder",
    "resolve_model_path",
]
