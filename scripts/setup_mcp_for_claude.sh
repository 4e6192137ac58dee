#!/usr/bin/env bash
# Register Cognitive Memory with Claude Desktop (and print the line for Claude Code).
# Safe to run again: it backs the config up, merges one "cognitive-memory" entry and keeps every
# other key and server, then runs `memory_system doctor`. Never prompts.
# Usage: scripts/setup_mcp_for_claude.sh [--config PATH]
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$repo/.venv/bin/memory_system"
python="$repo/.venv/bin/python"

if [ ! -x "$bin" ]; then
  echo "memory_system is not installed in $repo/.venv: run 'make install' first." >&2
  exit 1
fi

config=""
if [ "${1:-}" = "--config" ] && [ -n "${2:-}" ]; then
  config="$2"
elif [ "$(uname -s)" = "Darwin" ]; then
  config="$HOME/Library/Application Support/Claude/claude_desktop_config.json"
else
  config="${XDG_CONFIG_HOME:-$HOME/.config}/Claude/claude_desktop_config.json"
fi

mkdir -p "$(dirname "$config")"
if [ -f "$config" ]; then
  stamp="$(date +%Y%m%d%H%M%S)"
  backup="$config.backup.$stamp"
  n=1
  while [ -e "$backup" ]; do backup="$config.backup.$stamp.$n"; n=$((n + 1)); done
  cp -p "$config" "$backup"
  echo "Backed up $config to $backup"
fi

"$python" - "$config" "$bin" <<'PY'
import json
import sys
from pathlib import Path

path, command = Path(sys.argv[1]), sys.argv[2]
text = path.read_text(encoding="utf-8") if path.exists() else ""
try:
    config = json.loads(text) if text.strip() else {}
except json.JSONDecodeError as exc:
    sys.exit(f"{path} is not valid JSON ({exc}); fix it or move it away, then run again.")
if not isinstance(config, dict):
    sys.exit(f"{path} does not hold a JSON object; fix it or move it away, then run again.")
servers = config.setdefault("mcpServers", {})
if not isinstance(servers, dict):
    sys.exit(f'"mcpServers" in {path} is not an object; fix it, then run again.')
entry = servers.get("cognitive-memory", {})
entry.update({"command": command, "args": ["serve", "mcp"]})
entry.setdefault("env", {})
servers["cognitive-memory"] = entry
tmp = path.with_suffix(path.suffix + ".tmp")
tmp.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
tmp.replace(path)
print(f"Registered cognitive-memory in {path}")
PY

echo
echo "Claude Code: claude mcp add cognitive-memory -- \"$bin\" serve mcp"
echo "Restart Claude Desktop to load the server."
echo
echo "Checking the installation (memory_system doctor):"
if ! "$bin" doctor; then
  echo "doctor reported a problem (above); the configuration was still written." >&2
fi
