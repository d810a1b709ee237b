"""labelaudit.agreement.tolerance: tolerable_disagreements with its inputs, three faces."""

from labelaudit.agreement import tolerable_disagreements, tolerance


def test_tolerance_reports_the_papers_33_disagreements():
    result = tolerance(1000, 0.5, gamma=0.05, confidence=0.95)
    assert result.max_disagreements == 33 == tolerable_disagreements(1000, 0.5)
    assert result.to_dict() == {"n_items": 1000, "p_chance": 0.5, "gamma": 0.05,
                                "confidence": 0.95, "max_disagreements": 33}
    assert result.to_frame().to_dict("records") == [result.to_dict()]
    lines = result.summary().splitlines()
    assert lines[0].split() == ["items", "(n)", "1000"]
    assert lines[-1].endswith("  33")


def test_no_tolerable_disagreement_is_said_in_words():
    result = tolerance(10, 0.5, gamma=0.0001)
    assert result.max_disagreements == -1
    assert "none (even 0 exceeds gamma)" in result.summary()
