#!/usr/bin/env bash
# Register Cognitive Memory with Claude Desktop, and offer to set up Claude Code too.
# Safe to run again: it merges one "cognitive-memory" entry and keeps every other key and server,
# backs the config up only when it changes it, then runs `memory_system doctor` with the environment
# the entry gives the server, not the shell's (so doctor checks the data directory the server will
# use). It asks about Claude Code only when stdin is a terminal and no --claude-code option says
# what to do; otherwise it never prompts.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/setup_mcp_for_claude.sh [--config PATH] [--claude-code | --claude-code-project DIR | --no-claude-code]

Adds (or updates) the "cognitive-memory" server in Claude Desktop's configuration, offers to set up
Claude Code (`memory_system setup claude-code`: the memory hooks and the MCP server), then checks the
installation with `memory_system doctor`.

  --config PATH                the claude_desktop_config.json to edit (default: Claude Desktop's own)
  --claude-code                also set up Claude Code for every project (~/.claude/settings.json,
                               ~/.claude.json), without asking
  --claude-code-project DIR    also set up Claude Code for the project DIR, without asking
  --no-claude-code             do not set up Claude Code, without asking
  -h, --help                   show this help and change nothing

Without a --claude-code option the script asks (y/N) when stdin is a terminal, and skips Claude
Code when it is not.
EOF
}

config=""
claude_code=""  # user, project, no, or empty: ask when interactive
claude_project=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --config)
      if [ $# -lt 2 ] || [ -z "$2" ]; then
        echo "Error: --config needs the path of a claude_desktop_config.json." >&2
        usage >&2
        exit 2
      fi
      config="$2"
      shift 2
      ;;
    --claude-code)
      claude_code="user"
      shift
      ;;
    --claude-code-project)
      if [ $# -lt 2 ] || [ ! -d "$2" ]; then
        echo "Error: --claude-code-project needs the path of an existing project directory." >&2
        usage >&2
        exit 2
      fi
      claude_code="project"
      claude_project="$2"
      shift 2
      ;;
    --no-claude-code)
      claude_code="no"
      shift
      ;;
    *)
      echo "Error: unknown argument '$1'." >&2
      usage >&2
      exit 2
      ;;
  esac
done

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="$repo/.venv/bin/memory_system"
python="$repo/.venv/bin/python"

if [ ! -x "$bin" ]; then
  echo "memory_system is not installed in $repo/.venv: run 'make install' first." >&2
  exit 1
fi

if [ -z "$config" ]; then
  if [ "$(uname -s)" = "Darwin" ]; then
    config="$HOME/Library/Application Support/Claude/claude_desktop_config.json"
  else
    config="${XDG_CONFIG_HOME:-$HOME/.config}/Claude/claude_desktop_config.json"
  fi
fi

mkdir -p "$(dirname "$config")"
# Merges the entry; prints the entry's env as KEY=VALUE lines (for doctor) on stdout and what it
# did on stderr.
entry_env="$("$python" - "$config" "$bin" <<'PY'
import json
import shutil
import sys
import time
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
if not isinstance(entry, dict):
    sys.exit(f'"mcpServers"."cognitive-memory" in {path} is not an object; fix it, then run again.')
entry.update({"command": command, "args": ["serve", "mcp"]})
env = entry.setdefault("env", {})
servers["cognitive-memory"] = entry
new_text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
if text.strip() and json.loads(text) == config:
    print(f"{path} already registers cognitive-memory: nothing changed.", file=sys.stderr)
else:
    if path.exists():
        backup = path.with_name(f"{path.name}.backup.{time.strftime('%Y%m%d%H%M%S')}")
        n = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.backup.{time.strftime('%Y%m%d%H%M%S')}.{n}")
            n += 1
        shutil.copy2(path, backup)
        print(f"Backed up {path} to {backup}", file=sys.stderr)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(new_text, encoding="utf-8")
    tmp.replace(path)
    print(f"Registered cognitive-memory in {path}", file=sys.stderr)
for key, value in (env.items() if isinstance(env, dict) else ()):
    print(f"{key}={value}")
PY
)"

echo
echo "Claude Code: claude mcp add cognitive-memory -- \"$bin\" serve mcp"
echo "Restart Claude Desktop to load the server."
echo
doctor_env=()  # bash 3.2 (macOS) has no mapfile, and "${a[@]}" of an empty array trips set -u
while IFS= read -r line; do
  [ -n "$line" ] && doctor_env+=("$line")
done <<<"$entry_env"
if [ -z "$claude_code" ] && [ -t 0 ]; then
  read -r -p "Also set up Claude Code for every project (memory hooks and MCP server)? [y/N] " answer || answer=""
  case "$answer" in
    [yY] | [yY][eE][sS]) claude_code="user" ;;
    *) claude_code="no" ;;
  esac
fi
# Claude Code gets the entry's env too, so it shares Claude Desktop's data directory.
claude_scope=()
case "$claude_code" in
  user) claude_scope=(--user) ;;
  project) claude_scope=(--project-dir "$claude_project") ;;
  *) echo "Claude Code not set up; later: memory_system setup claude-code [--user | --project-dir DIR]" ;;
esac
if [ ${#claude_scope[@]} -gt 0 ] &&
  ! env ${doctor_env[@]+"${doctor_env[@]}"} "$bin" setup claude-code "${claude_scope[@]}"; then
  echo "Claude Code was not set up (above); Claude Desktop's configuration was still written." >&2
fi
# Doctor runs in the environment the server will get, not this shell's: an MCP client starts a
# stdio server with the entry's env over a few variables of its own (the MCP SDKs pass HOME,
# LOGNAME, PATH, SHELL, TERM and USER), and in a directory of its choosing (so no .env from here).
exported=" $(compgen -e | tr '\n' ' ') "
server_env=()
for name in HOME LOGNAME PATH SHELL TERM USER; do
  case "$exported" in
    *" $name "*) server_env+=("$name=${!name}") ;;
  esac
done
server_env+=(${doctor_env[@]+"${doctor_env[@]}"})
unseen=()
for name in $exported; do
  case "$name" in
    COGNITIVE_MEMORY_* | MCP_* | QDRANT_* | SENTENCE_BERT_MODEL | XDG_DATA_HOME | XDG_CACHE_HOME) ;;
    *) continue ;;
  esac
  case " ${doctor_env[*]%%=*} " in
    *" $name "*) ;;
    *) unseen+=("$name") ;;
  esac
done
if [ ${#unseen[@]} -gt 0 ]; then
  names="$(printf '%s, ' "${unseen[@]}")"
  echo "Note: this shell sets ${names%, }, which the server will not see (it gets the entry's" \
    "\"env\" only); to use them, add them to the \"env\" of \"cognitive-memory\" in $config." >&2
fi
echo
echo "Checking the installation with the environment the server gets (${server_env[*]%%=*}):"
if ! (cd / && env -i "${server_env[@]}" "$bin" doctor); then
  echo "doctor reported a problem (above); the configuration was still written." >&2
fi
