"""``python -m memory_system``: the console script (a detached session-end hook runs this way)."""

from memory_system.entry import main

main()
