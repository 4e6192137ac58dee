"""The ranking table's columns (replicas/ranking.py): rows out as they went in, room grown, memories
dropped, vectors of another size left out, rows handed out never changed by a later write."""

from __future__ import annotations

import numpy as np

from cognitive_memory.core.ranking import RankingRow
from cognitive_memory.replicas import RankingTable


def _row(n: int, dimension: int = 4, *, uses: int = 0) -> RankingRow:
    vector = np.arange(dimension, dtype=np.float32) + n
    return RankingRow(
        f"m{n}",
        n / 100,
        uses,
        1.0e9 + n,
        1.0e9,
        None if n % 2 else "by_hand",
        vector,
        f"p{n % 3}",
        n % 3,
        "episodic",
        '["a"]' if n % 2 else "[]",
        "Ana" if n % 5 == 0 else None,
        frozenset({f"t{n}", "shared"}),
        None if n % 4 else f"s{n}",
    )


def _same(got: list[RankingRow], expected: list[RankingRow]) -> bool:
    def plain(rows: list[RankingRow]) -> list[tuple[object, ...]]:
        return [(*row[:6], row.embedding.tobytes(), *row[7:]) for row in rows]

    return plain(got) == plain(expected)


def test_rows_come_out_as_they_went_in_past_the_room_the_table_began_with() -> None:
    rows = [_row(n) for n in range(40)]
    table = RankingTable.read(7, iter(rows), dimension=4, room=16)

    assert len(table) == 40 and table.seq == 7
    asked = ["m39", "unknown", "m0", "m17"]
    assert _same(table.rows(asked), [rows[39], rows[0], rows[17]])
    assert set(table.vectors_of(asked)) == {"m39", "m0", "m17"}
    assert table.rows([]) == []


def test_a_changed_row_is_written_over_and_a_gone_memory_dropped() -> None:
    table = RankingTable.read(1, iter([_row(n) for n in range(5)]), dimension=4)
    before = table.rows(["m1"])[0]
    changed = _row(1, uses=3)._replace(embedding=np.ones(4, dtype=np.float32), terms=frozenset({"new"}))

    table.take(["m1", "m2"], [changed])

    assert _same(table.rows(["m1", "m2"]), [changed])
    assert before.embedding.tolist() == [1.0, 2.0, 3.0, 4.0]  # the row handed out kept its copy
    assert not before.embedding.flags.writeable


def test_a_vector_of_another_size_is_left_out() -> None:
    table = RankingTable.read(1, iter([_row(0), _row(1, dimension=3)]), dimension=4)
    assert [row.id for row in table.rows(["m0", "m1"])] == ["m0"]


def test_whether_every_memory_is_in_some_projects_follows_each_write() -> None:
    table = RankingTable.read(1, iter([_row(n) for n in range(3)]), dimension=4)  # p0, p1, p2

    assert table.only_in(["p0", "p1", "p2"]) and not table.only_in(["p0", "p1"])
    table.take(["m2"], [])  # the only memory of p2 forgotten
    assert table.only_in(["p0", "p1"])
    table.put(_row(1)._replace(project="p0"))  # p1's memory moved to p0
    assert table.only_in(["p0"]) and not table.only_in([])
    table.put(_row(7)._replace(project="p9"))
    assert not table.only_in(["p0"]) and table.only_in(["p0", "p9"])
