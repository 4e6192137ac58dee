"""Parsing `git log -z --numstat` output: renames, binary files, merges, odd messages, any chunking."""

from __future__ import annotations

from cognitive_memory.loaders.git_history import (
    Commit,
    FileChange,
    commit_from_digest,
    commit_to_digest,
    parse_log,
)

A, B, C = "a" * 40, "b" * 40, "c" * 40


def record(sha: str, parents: str, time: int, message: str, stats: bytes = b"") -> bytes:
    header = b"\x1e" + b"\x1f".join([sha.encode(), parents.encode(), str(time).encode(), message.encode()])
    return header + b"\x1f\x00" + (b"\n" + stats if stats else b"")


RAW = (
    record(C, f"{A} {B}", 300, "Merge branch 'topic'\n")
    + record(
        B,
        A,
        200,
        "Fix the \x1e separator\n\nBody line\n",
        b"0\t0\t\x00d/{x} => y.txt\x00d/b => c.txt\x00"
        + b"-\t-\timage.png\x00"
        + b"12\t3\tname with spaces.py\x00",
    )
    + record(A, "", 100, "init\n", b"1\t0\tREADME.md\x00")
)


def test_commits_files_renames_and_binary_counts() -> None:
    merge, fix, init = parse_log([RAW])
    assert merge == Commit(C, (A, B), 300, "Merge branch 'topic'")
    assert merge.is_merge and not fix.is_merge
    assert fix.subject == "Fix the \x1e separator" and fix.body == "Body line"
    assert fix.files == (
        FileChange("d/b => c.txt", 0, 0, old_path="d/{x} => y.txt"),
        FileChange("image.png", None, None),
        FileChange("name with spaces.py", 12, 3),
    )
    assert init == Commit(A, (), 100, "init", (FileChange("README.md", 1, 0),))


def test_any_chunking_gives_the_same_commits() -> None:
    whole = list(parse_log([RAW]))
    for size in (1, 7, 41, 64):
        assert list(parse_log(RAW[i : i + size] for i in range(0, len(RAW), size))) == whole


def test_empty_output_gives_no_commits() -> None:
    assert list(parse_log([])) == [] and list(parse_log([b""])) == []


def test_a_digest_round_trips() -> None:
    for commit in parse_log([RAW]):
        assert commit_from_digest(commit_to_digest(commit)) == commit
