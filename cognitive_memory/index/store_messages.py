"""The messages between the processes sharing one vector store (``shared_store``): JSON with a
4-byte length before it, vectors as base64 of little-endian 32-bit floats."""

from __future__ import annotations

import base64
import json
import socket
import struct
from typing import Any

import numpy as np

from cognitive_memory.core.memory import Vector
from cognitive_memory.index.sparse import SparseVector
from cognitive_memory.index.vector_store import VectorFilter, VectorPoint

__all__ = ["filter_from", "pack_point", "pack_vector", "point_from", "receive", "send", "unpack_vector"]

_HEADER = struct.Struct(">I")
_MAX_MESSAGE = 256 * 1024 * 1024


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.extend(chunk)
    return bytes(chunks)


def receive(sock: socket.socket) -> dict[str, Any]:
    (size,) = _HEADER.unpack(receive_exactly(sock, _HEADER.size))
    if size > _MAX_MESSAGE:
        raise ConnectionError(f"message of {size} bytes refused")
    message: dict[str, Any] = json.loads(receive_exactly(sock, size))
    return message


def pack_vector(vector: Vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def unpack_vector(text: str) -> Vector:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def filter_from(data: dict[str, Any] | None) -> VectorFilter | None:
    """The filter a client sent: lists of accepted values, and the bounds of the time range."""
    if data is None:
        return None
    fields: dict[str, Any] = {}
    for key, value in data.items():
        fields[key] = tuple(value) if isinstance(value, list) else value
    return VectorFilter(**fields)


def pack_point(point: VectorPoint) -> dict[str, Any]:
    """A point as a message carries it (``point_from`` reads it back)."""
    words = [point.words.indices, point.words.values]
    return {
        "id": point.id,
        "vector": pack_vector(point.vector),
        "payload": dict(point.payload),
        "words": words,
    }


def point_from(data: dict[str, Any]) -> VectorPoint:
    words = SparseVector(*map(tuple, data.get("words", ((), ()))))
    return VectorPoint(data["id"], unpack_vector(data["vector"]), data["payload"], words)
