"""The tokens package on bad options, all-O data, line
separators inside tokens, progress bars and load reports."""

import json

import numpy as np
import pytest
from ner_fixtures import fake_encode, make_corpus

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.detect import sentence_scores
from labelaudit.evaluation import evaluate_tokens
from labelaudit.models import EncoderTokenScorer, cross_val_token_probs, make_token_scorer
from labelaudit.models._tokens import encode_word_vectors
from labelaudit.scanning import scan_tokens
from labelaudit.tokens import (
    make_token_dataset,
    read_conll,
    read_tokens,
    token_classes,
    write_conll,
)


def _never(sentences):
    raise AssertionError("the words were encoded before the options were checked")


@pytest.fixture
def tagged():
    tokens, tags, docs = make_corpus(n_docs=8, per_doc=4)
    return make_token_dataset(tokens, tags, documents=docs)


@pytest.fixture
def untagged():
    tokens, tags, docs = make_corpus(n_docs=8, per_doc=4, seed=1)
    return make_token_dataset(tokens, [["O"] * len(t) for t in tags], documents=docs)


# --- numeric options are checked, by name, before any model loads ---------------

@pytest.mark.parametrize(("options", "name"), [
    ({"n_folds": 1}, "n_folds"),
    ({"n_folds": 2.5}, "n_folds"),
    ({"random_state": -1}, "random_state"),
    ({"random_state": 2**40}, "random_state"),
    ({"softmin_temperature": 0}, "softmin_temperature"),
    ({"consistency_min_count": 0}, "consistency_min_count"),
    ({"consistency_max_share": 1.5}, "consistency_max_share"),
])
def test_bad_numeric_options_of_scan_tokens_name_the_parameter(tagged, options, name):
    with pytest.raises(InvalidParameterError, match=name):
        scan_tokens(tagged, scorer=EncoderTokenScorer(encode=_never), **options)


@pytest.mark.parametrize(("options", "name"), [
    ({"epochs": -1}, "epochs"),
    ({"epochs": 0}, "epochs"),
    ({"batch_size": 0}, "batch_size"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"max_length": 2}, "max_length"),
])
def test_bad_numeric_options_of_finetune_fail_before_the_model_loads(tagged, options, name):
    # The model does not exist: loading it would fail with another error.
    scorer = make_token_scorer("finetune", model="/no/such/model", **options)
    with pytest.raises(InvalidParameterError, match=name):
        scan_tokens(tagged, scorer=scorer, n_folds=2)


@pytest.mark.parametrize(("options", "name"), [
    ({"batch_size": 0}, "batch_size"),
    ({"window": -1}, "window"),
    ({"layers": ()}, "layers"),
    ({"random_state": -3}, "random_state"),
])
def test_bad_numeric_options_of_the_encoder_scorer_name_the_parameter(tagged, options, name):
    with pytest.raises(InvalidParameterError, match=name):
        scan_tokens(tagged, scorer=EncoderTokenScorer(encode=_never, **options), n_folds=2)


def test_bad_numeric_options_of_the_helpers_name_the_parameter(tagged):
    with pytest.raises(InvalidParameterError, match="batch_size"):
        encode_word_vectors([["a"]], model="/no/such/model", batch_size=0)
    with pytest.raises(InvalidParameterError, match="max_length"):
        encode_word_vectors([["a"]], model="/no/such/model", max_length=0)
    labels = [np.array([0, 1])]
    probs = [np.array([[0.9, 0.1], [0.2, 0.8]])]
    with pytest.raises(InvalidParameterError, match="temperature"):
        sentence_scores(labels, probs, method="softmin", temperature=0.0)
    records = scan_tokens(tagged, scorer=EncoderTokenScorer(encode=fake_encode),
                          n_folds=2).to_records()
    for ks in ([0], [], [2.5], "10"):
        with pytest.raises(InvalidParameterError, match="ks"):
            evaluate_tokens(records, tagged, ks=ks)


def test_too_many_folds_for_the_documents_fail_before_encoding(tagged):
    classes = token_classes(tagged)
    with pytest.raises(InvalidInputError, match="8 documents cannot fill 9 folds"):
        cross_val_token_probs(tagged, EncoderTokenScorer(encode=_never), classes=classes,
                              n_folds=9)


# --- data whose every tag is O -------------------------------------------------

def test_all_o_training_data_says_there_are_no_entities(tagged, untagged):
    with pytest.raises(InvalidInputError,
                       match="every tag of the training data is O: there are no entities"):
        scan_tokens(untagged, score=tagged, scorer=EncoderTokenScorer(encode=_never))
    with pytest.raises(InvalidInputError,
                       match="every tag of the data is O: there are no entities to learn"):
        scan_tokens(untagged, scorer=EncoderTokenScorer(encode=_never), n_folds=2)
    # The same data read with an explicit span scheme is refused the same way.
    as_iob2 = make_token_dataset(untagged.tokens, untagged.tags, scheme="iob2")
    with pytest.raises(InvalidInputError, match="every tag of the data is O"):
        scan_tokens(as_iob2, scorer=EncoderTokenScorer(encode=_never), n_folds=2)


def test_all_o_single_plain_tag_says_one_tag_cannot_be_learned(tagged):
    pos = make_token_dataset(tagged.tokens, [["NN"] * len(t) for t in tagged.tokens])
    with pytest.raises(InvalidInputError, match="every tag of the data is 'NN'"):
        scan_tokens(pos, scorer=EncoderTokenScorer(encode=_never), n_folds=2)


def test_all_o_file_to_audit_takes_the_training_scheme(tagged, untagged):
    result = scan_tokens(tagged, score=untagged, scorer=EncoderTokenScorer(encode=fake_encode))
    assert result.dataset.scheme == "iob2"
    kinds = {x.kind for issues in result.issues for x in issues}
    assert "missing-entity" in kinds  # the untagged names are found


def test_all_o_aside_different_tag_kinds_are_named_with_examples(tagged):
    pos = make_token_dataset(tagged.tokens, [["NN"] * len(t) for t in tagged.tokens])
    with pytest.raises(InvalidInputError, match=r"IOB2 span tags \(such as 'B-\w+'\) but the "
                       r"scored data has plain tags \(such as 'NN'\)"):
        scan_tokens(tagged, score=pos, scorer=EncoderTokenScorer(encode=_never))


# --- U+0085, U+2028 and U+2029 inside tokens -----------------------------------

@pytest.mark.parametrize("char", ["\u0085", "\u2028", "\u2029", "\u00a0"])
@pytest.mark.parametrize("sep", [" ", "\t"])
def test_conll_token_with_nel_or_line_separator_stays_whole(tmp_path, char, sep):
    path = tmp_path / "odd.conll"
    text = (f"-DOCSTART-{sep}O\r\n\r\nA{char}B{sep}B-PER\r\nruns{sep}O\r\n\r\n"
            f"Rome{sep}B-LOC\nwins{sep}O\n")
    path.write_bytes(text.encode("utf-8"))
    ds = read_conll(path)
    assert ds.tokens == [[f"A{char}B", "runs"], ["Rome", "wins"]]
    assert ds.tags == [["B-PER", "O"], ["B-LOC", "O"]]
    assert ds.lines == [3, 6]
    out = write_conll(ds, tmp_path / "copy.conll")
    assert read_conll(out).tokens == ds.tokens


def test_conll_line_separator_errors_keep_their_line_numbers(tmp_path):
    path = tmp_path / "bad.conll"
    path.write_text("A\u2028B B-PER\nruns O x\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="line 2 has 3"):
        read_conll(path)


def test_token_jsonl_with_nel_or_line_separator_stays_whole(tmp_path):
    path = tmp_path / "odd.jsonl"
    rows = [{"tokens": ["A\u0085B", "runs"], "tags": ["B-PER", "O"]},
            {"tokens": ["X\u2028Y", "Z\u2029"], "tags": ["B-LOC", "O"]}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    ds = read_tokens(path)
    assert ds.tokens == [r["tokens"] for r in rows] and ds.lines == [1, 2]


# --- progress bars say what they do; no load reports between them -------------

def test_progress_encoding_bar_is_named_for_the_sentences(tiny_ner_bert_dir, capfd):
    sentences = [["Paris", "visited"], ["Rome"], ["John", "Smith", "joined", "Acme"]]
    encode_word_vectors(sentences, model=str(tiny_ner_bert_dir), progress=True)
    err = capfd.readouterr().err
    assert "encoding 3 sentences" in err
    assert "Batches" not in err and "Loading weights" not in err


def test_progress_finetune_bar_named_and_no_load_report_between_bars(tiny_ner_bert_dir, tagged,
                                                                     capfd):
    scorer = make_token_scorer("finetune", model=str(tiny_ner_bert_dir), epochs=1,
                               batch_size=8, max_length=16, progress=True)
    features = scorer.prepare(tagged)
    labels = [np.zeros(len(t), dtype=np.int64) for t in tagged.tokens]
    scorer.fit(features[:10], labels[:10], 3)
    err = capfd.readouterr().err
    assert "fine-tuning on 10 sentences (1 epoch)" in err
    # The classifier is new, as it must be for fine-tuning: transformers' report of it
    # would land between the bars of every fold.
    for noise in ("LOAD REPORT", "MISSING", "newly initialized", "Loading weights"):
        assert noise not in err
