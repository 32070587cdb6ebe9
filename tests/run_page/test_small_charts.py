"""The RL metrics' small charts: each axis names its unit, and the Entropy and Answer length charts carry the
Signal and the Cut-off share on a right-hand axis in %."""

from __future__ import annotations

from rounds import TINY_MODEL_ROUND, scored_round

from app.runs.metrics import small_charts
from projections.rows import RoundRow


def rows(count: int) -> list[RoundRow]:
    results = [scored_round(n, 0.3, TINY_MODEL_ROUND, reward=0.4, signal=0.5 + n / 100, cut_off=0.02 * n,
                            token_entropy=0.9, mean_answer_tokens=4.0) for n in range(count)]
    return [RoundRow(run_id=None, rounds_total=count, best_round=0, scored_at="",  # type: ignore[arg-type]
                     **{k: v for k, v in r.to_dict().items() if k in RoundRow.__dataclass_fields__}) for r in results]


def test_each_chart_names_its_unit_and_two_carry_a_second_line_in_percent() -> None:
    charts = {chart["title"]: chart for chart in small_charts(rows(4))}
    assert charts["Answer length"]["y_title"] == "tokens" and charts["Entropy"]["y_title"] == "nats a token"
    assert [s["name"] for s in charts["Entropy"]["series"]] == ["Entropy", "Signal"]
    assert charts["Entropy"]["series"][1] == {"name": "Signal", "y": [51.0, 52.0, 53.0], "color": "#2952cc",
                                              "axis": "y2"}
    assert [s["name"] for s in charts["Answer length"]["series"]] == ["Answer length", "Cut off"]
    assert charts["Answer length"]["series"][1]["y"] == [2.0, 4.0, 6.0] and charts["Answer length"]["y2_title"] == "%"
    assert len(charts["Loss"]["series"]) == 1 and charts["Loss"]["y2_title"] is None
