import json

import pytest
from ner_fixtures import conll_text, make_corpus

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.tokens import make_token_dataset, read_conll, read_tokens, write_conll


def test_reads_documents_sentences_and_tags(tmp_path):
    tokens, tags, docs = make_corpus(n_docs=3, per_doc=2)
    path = tmp_path / "a.conll"
    path.write_text(conll_text(tokens, tags, docs))
    ds = read_conll(path)
    assert ds.tokens == tokens
    assert ds.tags == tags
    assert ds.documents.tolist() == docs
    assert ds.has_documents and ds.scheme == "iob2"
    assert ds.ids == list(range(6))
    assert ds.lines[0] == 3  # after the -DOCSTART- line and its blank line


def test_whitespace_columns_and_tag_column(tmp_path):
    tokens, tags, docs = make_corpus(n_docs=2, per_doc=2)
    path = tmp_path / "b.conll"
    path.write_text(conll_text(tokens, tags, docs, sep=" ", extra_column=True))
    assert read_conll(path).tags == tags  # default: last column
    pos = read_conll(path, tag_column=1)
    assert pos.scheme == "plain" and pos.tags[0][0] == "NNP"


def test_tab_separated_tokens_may_contain_spaces(tmp_path):
    path = tmp_path / "c.conll"
    path.write_text("New York\tB-LOC\nrocks\tO\n")
    assert read_conll(path).tokens == [["New York", "rocks"]]


def test_no_documents_means_one_document_per_sentence(tmp_path):
    path = tmp_path / "d.conll"
    path.write_text("a O\nb B-PER\n\nc O\n\n\nd O\n")
    ds = read_conll(path)
    assert ds.documents.tolist() == [0, 1, 2] and not ds.has_documents


def test_wrong_column_count_names_the_lines(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("John NNP B-PER\nruns VBZ\n\nParis NNP B-LOC\nnow RB O extra\n")
    with pytest.raises(InvalidInputError, match=r"line 2 has 2; line 5 has 4.*like line 1"):
        read_conll(path)


def test_unknown_prefix_names_the_line(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("John B-PER\nruns O\n\nParis X-LOC\n")
    with pytest.raises(InvalidInputError, match=r"line 4: 'X-LOC'"):
        read_conll(path)


def test_unknown_prefix_is_one_check_with_one_wording(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("John B-PER\nruns X-O\n")
    with pytest.raises(InvalidInputError) as from_file:
        read_conll(path)
    with pytest.raises(InvalidInputError) as from_lists:
        make_token_dataset([["John", "runs"]], [["B-PER", "X-O"]])
    assert "line 2: 'X-O'" in str(from_file.value)
    assert "sentence 1 token 2: 'X-O'" in str(from_lists.value)
    for error in (from_file.value, from_lists.value):
        assert "unknown tag prefix in IOB2 data" in str(error)
        assert "give scheme='plain' for tags without spans" in str(error)
    # the CLI spells the options it names as its flags
    assert from_file.value.params == ("scheme", "tag_column")
    assert from_lists.value.params == ("scheme",)


def test_bad_tag_column_and_missing_file(tmp_path):
    path = tmp_path / "e.conll"
    path.write_text("John B-PER\n")
    with pytest.raises(InvalidParameterError, match="tag column 5"):
        read_conll(path, tag_column=5)
    with pytest.raises(InvalidInputError, match="no such file"):
        read_conll(tmp_path / "missing.conll")
    empty = tmp_path / "empty.conll"
    empty.write_text("\n-DOCSTART- O\n\n")
    with pytest.raises(InvalidInputError, match="no sentences"):
        read_conll(empty)


def test_iob1_and_bioes_files_convert_to_iob2(tmp_path):
    iob1 = tmp_path / "iob1.conll"
    iob1.write_text("EU I-ORG\nrejects O\nGerman I-MISC\ncall O\n")
    ds = read_conll(iob1)
    assert ds.scheme == "iob1" and ds.iob2_tags == [["B-ORG", "O", "B-MISC", "O"]]
    assert ds.to_scheme(["B-ORG", "O", "B-LOC", "I-LOC"]) == ["I-ORG", "O", "I-LOC", "I-LOC"]
    bioes = tmp_path / "x.conll"
    bioes.write_text("New B-LOC\nYork E-LOC\nis O\nbig O\n")
    assert read_conll(bioes).iob2_tags == [["B-LOC", "I-LOC", "O", "O"]]


def test_jsonl_reader(tmp_path):
    path = tmp_path / "a.jsonl"
    rows = [{"id": "s1", "doc": "d1", "tokens": ["John", "runs"], "tags": ["B-PER", "O"]},
            {"id": "s2", "doc": "d1", "tokens": ["Paris"], "tags": ["B-LOC"]},
            {"id": "s3", "doc": "d2", "tokens": ["so"], "tags": ["O"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = read_tokens(path)
    assert ds.ids == ["s1", "s2", "s3"] and ds.documents.tolist() == [0, 0, 1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"tokens": ["a", "b"], "tags": ["O"]}))
    with pytest.raises(InvalidInputError, match="line 2: 2 tokens but 1 tags"):
        read_tokens(bad)
    worse = tmp_path / "worse.jsonl"
    worse.write_text('{"tokens": ["a"]}\n')
    with pytest.raises(InvalidInputError, match="line 1: expected an object"):
        read_tokens(worse)


def test_duplicate_ids_rejected():
    with pytest.raises(InvalidInputError, match="duplicate"):
        make_token_dataset([["a"], ["b"]], [["O"], ["O"]], ids=["x", "x"])


def test_write_conll_round_trip(tmp_path):
    tokens, tags, docs = make_corpus(n_docs=2, per_doc=3)
    ds = make_token_dataset(tokens, tags, documents=docs)
    out = write_conll(ds, tmp_path / "out.conll")
    back = read_conll(out)
    assert back.tokens == tokens and back.tags == tags and back.documents.tolist() == docs


def test_conll_with_bom_and_undecodable_bytes(tmp_path):
    import pytest

    from labelaudit import InvalidInputError
    from labelaudit.tokens import read_conll

    path = tmp_path / "bom.conll"
    path.write_bytes("\ufeffJohn B-PER\nruns O\n".encode())
    assert read_conll(path).tokens == [["John", "runs"]]
    path.write_bytes(b"John B-PER\n\nM\xfcller B-PER\n")
    with pytest.raises(InvalidInputError, match="undecodable bytes at line 3"):
        read_conll(path)
