# The memory server in HTTP mode (used by docker-compose.yml). CPU torch keeps the image small.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY cognitive_memory ./cognitive_memory
COPY interfaces ./interfaces
COPY memory_system ./memory_system
# The ONNX export of the model is made at build time, so the container starts on ONNX Runtime.
ENV COGNITIVE_MEMORY_CACHE_DIR=/opt/cognitive-memory/cache
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
 && pip install --no-cache-dir . \
 && memory_system encoder export
ENV COGNITIVE_MEMORY_DATA_DIR=/data \
    MCP_SERVER_MODE=http \
    MCP_SERVER_HOST=0.0.0.0 \
    MCP_SERVER_PORT=8080
VOLUME /data
EXPOSE 8080
CMD ["memory_system", "serve", "mcp"]
