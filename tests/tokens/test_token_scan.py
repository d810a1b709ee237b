import numpy as np
import pytest
from ner_fixtures import fake_encode

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.detect import sentence_scores
from labelaudit.models import EncoderTokenScorer, cross_val_token_probs
from labelaudit.models import group_folds as document_folds
from labelaudit.scanning import scan_tokens
from labelaudit.tokens import make_token_dataset, read_conll, token_classes

# the token scan trains tagging heads (torch networks): `make test-fast` leaves these out
pytestmark = pytest.mark.heavy


def test_document_folds_never_split_a_document_and_balance_tokens():
    rng = np.random.default_rng(0)
    docs = np.repeat(np.arange(40), rng.integers(1, 6, size=40))
    sizes = rng.integers(3, 30, size=len(docs))
    folds = document_folds(docs, n_folds=5, sizes=sizes, random_state=0)
    for d in np.unique(docs):
        assert len(set(folds[docs == d])) == 1
    load = np.bincount(folds, weights=sizes)
    assert load.max() - load.min() <= sizes.max() * 5
    assert np.array_equal(folds, document_folds(docs, n_folds=5, sizes=sizes, random_state=0))
    with pytest.raises(InvalidInputError, match="cannot fill 5 folds"):
        document_folds(np.array([0, 0, 1]), n_folds=5)
    with pytest.raises(InvalidParameterError):
        document_folds(docs, n_folds=1)


class RecordingScorer:
    """Memorises its training sentences: proves that no sentence scores itself."""

    def prepare(self, dataset):
        return [tuple(t) for t in dataset.tokens]

    def fit(self, features, labels, n_classes):
        self.seen_ = set(features)
        self.n_classes_ = n_classes
        return self

    def predict_proba(self, features):
        assert not set(features) & self.seen_, "a scored sentence was in the training fold"
        return [np.full((len(f), self.n_classes_), 1 / self.n_classes_) for f in features]


def test_cross_fitting_is_out_of_sample(corpus):
    tokens, _, noisy, docs, _ = corpus
    unique = [t + [f"#{i}"] for i, t in enumerate(tokens)]
    ds = make_token_dataset(unique, [g + ["O"] for g in noisy], documents=docs)
    probs = cross_val_token_probs(ds, RecordingScorer(), classes=token_classes(ds), n_folds=4)
    assert [p.shape for p in probs] == [(len(t), len(token_classes(ds))) for t in unique]


def test_planted_errors_are_found_with_their_kinds(noisy_conll):
    path, _, planted = noisy_conll
    ds = read_conll(path)
    result = scan_tokens(ds, scorer=EncoderTokenScorer(encode=fake_encode), n_folds=4)
    records = result.to_records()
    by_id = {r["id"]: r for r in records}
    for kind, sentence in planted.items():
        found = [i["kind"] for i in by_id[sentence]["issues"]]
        assert kind in found, (kind, by_id[sentence]["issues"])
    # The five planted sentences are the five most suspect ones.
    assert {r["id"] for r in records[:5]} == set(planted.values())
    # Scores are sorted, most suspect first, and in [0, 1].
    scores = [r["score"] for r in records]
    assert scores == sorted(scores) and 0 <= scores[0] and scores[-1] <= 1
    # Wrong-type suggestion: the city should be LOC.
    [wrong] = [i for i in by_id[planted["wrong-type"]]["issues"] if i["kind"] == "wrong-type"]
    assert [s["type"] for s in wrong["suggested"]] == ["LOC"]
    assert [s["type"] for s in wrong["given"]] == ["ORG"]
    # The consistency rule also points at the mistagged city.
    assert "inconsistent-tag" in [i["kind"] for i in by_id[planted["wrong-type"]]["issues"]]


def test_clean_data_has_no_model_issues(corpus):
    tokens, clean, _, docs, _ = corpus
    ds = make_token_dataset(tokens, clean, documents=docs)
    result = scan_tokens(ds, scorer=EncoderTokenScorer(encode=fake_encode), n_folds=4)
    assert sum(len(x) for x in result.issues) == 0
    assert result.issue_frame().empty


def test_fit_on_train_score_on_test(corpus):
    tokens, clean, noisy, docs, planted = corpus
    train = make_token_dataset(tokens[60:], clean[60:])
    test = make_token_dataset(tokens[:60], noisy[:60])
    result = scan_tokens(train, score=test, scorer=EncoderTokenScorer(encode=fake_encode))
    assert len(result.dataset) == 60
    top = {r["id"] for r in result.to_records()[:5]}
    assert top == {i for i in planted.values() if i < 60}


def test_scan_with_given_probabilities_is_deterministic_and_order_free(corpus):
    tokens, _, noisy, docs, _ = corpus
    ds = make_token_dataset(tokens, noisy, documents=docs)
    classes = token_classes(ds)
    rng = np.random.default_rng(0)
    probs = [rng.dirichlet(np.ones(len(classes)), size=len(t)) for t in tokens]
    a = scan_tokens(ds, pred_probs=probs, classes=classes)
    b = scan_tokens(ds, pred_probs=probs, classes=classes)
    assert a.to_records() == b.to_records()
    order = rng.permutation(len(ds))
    c = scan_tokens(ds.subset(order), pred_probs=[probs[i] for i in order], classes=classes)
    assert np.allclose(c.sentence_scores, a.sentence_scores[order])
    assert [r["id"] for r in c.to_records()] == [r["id"] for r in a.to_records()]


def test_sentence_scores_match_cleanlab_min_and_softmin():
    from cleanlab.token_classification.rank import get_label_quality_scores

    rng = np.random.default_rng(0)
    labels = [rng.integers(0, 3, size=n) for n in (3, 5, 2)]
    probs = [rng.dirichlet(np.ones(3), size=len(y)) for y in labels]
    mins = sentence_scores(labels, probs)
    expected_min = [p[np.arange(len(y)), y].min() for y, p in zip(labels, probs, strict=True)]
    assert np.allclose(mins, expected_min)
    soft = sentence_scores(labels, probs, method="softmin")
    expected, _ = get_label_quality_scores([list(y) for y in labels], probs,
                                           sentence_score_method="softmin")
    assert np.allclose(soft, expected)
    with pytest.raises(InvalidParameterError):
        sentence_scores(labels, probs, method="mean")


def test_bad_probabilities_are_rejected(corpus):
    tokens, _, noisy, _, _ = corpus
    ds = make_token_dataset(tokens, noisy)
    with pytest.raises(InvalidParameterError, match="classes"):
        scan_tokens(ds, pred_probs=[np.ones((len(t), 9)) for t in tokens])
    with pytest.raises(InvalidInputError, match="shape"):
        scan_tokens(ds, pred_probs=[np.ones((1, 9)) for t in tokens], classes=token_classes(ds))


def test_plain_tags_give_wrong_tag_issues():
    rng = np.random.default_rng(0)
    words = {"dog": "NN", "cat": "NN", "runs": "VB", "eats": "VB", "the": "DT"}
    tokens, tags = [], []
    for _ in range(40):
        sent = ["the", str(rng.choice(["dog", "cat"])), str(rng.choice(["runs", "eats"]))]
        tokens.append(sent)
        tags.append([words[w] for w in sent])
    tags[3][2] = "NN"  # a verb tagged as a noun
    ds = make_token_dataset(tokens, tags)
    assert ds.scheme == "plain"
    result = scan_tokens(ds, scorer=EncoderTokenScorer(encode=fake_encode), n_folds=4)
    first = result.to_records()[0]
    assert first["id"] == 3
    assert [(i["kind"], i["start"]) for i in first["issues"] if i["source"] == "model"] == [
        ("wrong-tag", 2)]
    frame = result.token_frame()
    assert list(frame.columns) == ["id", "position", "token", "tag", "suggested_tag", "loss",
                                   "score"]
    assert len(frame) == ds.n_tokens


# --- issue #12: token scorers on the shared layers -----------------------------------------

def test_token_scorers_are_scorers_and_clone_unfitted(corpus):
    from labelaudit.models import Scorer, TokenScorer

    tokens, _, noisy, docs, _ = corpus
    ds = make_token_dataset(tokens, noisy, documents=docs)
    scorer = EncoderTokenScorer(encode=fake_encode, head="linear")
    assert isinstance(scorer, TokenScorer) and isinstance(scorer, Scorer)
    classes = token_classes(ds)
    from labelaudit.tokens import encode_tags

    scorer.fit(scorer.prepare(ds), encode_tags(ds, classes), n_classes=len(classes))
    fresh = scorer.clone()
    assert hasattr(scorer, "head_") and not hasattr(fresh, "head_")
    assert fresh.head == "linear" and fresh.name == "encoder+linear"


def test_token_scores_are_detect_label_quality_scores(corpus):
    from labelaudit.detect import label_quality_scores, token_scores

    rng = np.random.default_rng(0)
    labels = [rng.integers(0, 3, size=n) for n in (3, 1, 4)]
    probs = [rng.dirichlet(np.ones(3), size=len(y)) for y in labels]
    flat = label_quality_scores(np.concatenate(labels), np.vstack(probs), method="loss")
    assert np.array_equal(np.concatenate(token_scores(labels, probs)), flat)
    assert [len(s) for s in token_scores(labels, probs)] == [3, 1, 4]


def test_several_token_scorers_are_averaged_per_token(noisy_conll):
    path, _, planted = noisy_conll
    ds = read_conll(path)
    members = [EncoderTokenScorer(encode=fake_encode, head="linear"),
               EncoderTokenScorer(encode=fake_encode)]
    result = scan_tokens(ds, scorer=members, n_folds=4)
    assert result.scorer == "encoder+linear+encoder+crf"
    for sent, probs in zip(ds.tokens, result.pred_probs, strict=True):
        assert probs.shape == (len(sent), len(result.classes))
        assert np.allclose(probs.sum(1), 1.0)
    assert {r["id"] for r in result.to_records()[:5]} == set(planted.values())
    single = scan_tokens(ds, scorer=[members[1]], n_folds=4)
    alone = scan_tokens(ds, scorer=members[1], n_folds=4)
    assert single.to_records() == alone.to_records()
    with pytest.raises(InvalidParameterError, match="at least one"):
        scan_tokens(ds, scorer=[], n_folds=4)


def test_token_names_are_imported_from_where_they_live():
    import labelaudit.models
    import labelaudit.tokens

    for moved in ("EncoderTokenScorer", "document_folds", "cross_val_token_probs"):
        assert not hasattr(labelaudit.tokens, moved)  # no deprecated aliases before 1.0
    assert labelaudit.scanning.scan_tokens is scan_tokens
    assert "EncoderTokenScorer" in labelaudit.models.__all__
