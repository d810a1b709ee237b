import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.tokens import (
    Span,
    convert_tags,
    detect_scheme,
    invalid_transitions,
    spans_from_tags,
    tags_from_spans,
)


def test_iob1_to_iob2_opens_entities_with_b():
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"]
    assert convert_tags(iob1, source="iob1", target="iob2") == [
        "B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG"]


def test_bioes_round_trip_and_singletons():
    bioes = ["S-LOC", "O", "B-ORG", "I-ORG", "E-ORG", "S-ORG"]
    iob2 = convert_tags(bioes, source="bioes", target="iob2")
    assert iob2 == ["B-LOC", "O", "B-ORG", "I-ORG", "I-ORG", "B-ORG"]
    assert convert_tags(iob2, source="iob2", target="bioes") == bioes


def test_bilou_aliases_are_read_as_bioes():
    assert convert_tags(["U-PER", "B-LOC", "L-LOC"], source="bioes", target="iob2") == [
        "B-PER", "B-LOC", "I-LOC"]


def test_invalid_iob2_sequence_read_like_conlleval():
    assert convert_tags(["O", "I-PER", "I-LOC"], source="iob2", target="iob2") == [
        "O", "B-PER", "B-LOC"]
    assert spans_from_tags(["O", "I-PER", "I-LOC"]) == [Span(1, 2, "PER"), Span(2, 3, "LOC")]


def test_detect_scheme():
    assert detect_scheme([["O", "B-PER", "I-PER"], ["B-LOC"]]) == "iob2"
    assert detect_scheme([["O", "I-PER", "I-PER"], ["I-LOC", "B-LOC"]]) == "iob1"
    assert detect_scheme([["S-PER"]]) == "bioes"
    assert detect_scheme([["O", "O"]]) == "plain"
    assert detect_scheme([["NN", "VBZ"]]) == "plain"


def test_invalid_transitions_per_scheme():
    tags = ["O", "I-PER", "B-LOC", "I-ORG", "B-ORG", "I-ORG"]
    assert [i for i, _ in invalid_transitions(tags, scheme="iob2")] == [1, 3]
    assert invalid_transitions(tags, scheme="iob1") == []
    bioes = ["B-PER", "O", "E-LOC", "S-ORG", "B-ORG", "E-ORG"]
    assert [i for i, _ in invalid_transitions(bioes, scheme="bioes")] == [0, 2]


def test_unknown_prefix_and_scheme_raise():
    with pytest.raises(InvalidInputError, match="no known prefix"):
        convert_tags(["X-PER"], source="iob2", target="bioes")
    with pytest.raises(InvalidParameterError):
        convert_tags(["O"], source="iob3", target="iob2")
    with pytest.raises(InvalidParameterError):
        convert_tags(["NN"], source="plain", target="iob2")


def test_tags_from_spans_rejects_overlap():
    with pytest.raises(InvalidInputError, match="overlaps"):
        tags_from_spans([Span(0, 2, "A"), Span(1, 3, "B")], 4)


_spans = st.lists(
    st.tuples(st.integers(0, 11), st.integers(1, 3), st.sampled_from(["PER", "LOC", "ORG"])),
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(_spans, st.sampled_from(["iob1", "iob2", "bioes"]))
def test_spans_survive_every_scheme(raw, scheme):
    spans, used = [], set()
    for start, width, kind in raw:
        cells = set(range(start, min(start + width, 14)))
        if cells and not cells & used:
            used |= cells
            spans.append(Span(min(cells), max(cells) + 1, kind))
    spans.sort()
    tags = tags_from_spans(spans, 14, scheme=scheme)
    assert spans_from_tags(tags, scheme=scheme) == spans
    assert invalid_transitions(tags, scheme=scheme) == []
    back = convert_tags(tags, source=scheme, target="iob2")
    assert back == tags_from_spans(spans, 14)
