"""The learning-curve consistency test on tagged sentences (a fake word encoder)."""

from __future__ import annotations

import pytest
from ner_fixtures import conll_text, fake_encode, make_corpus

from labelaudit._errors import InvalidInputError
from labelaudit.consistency_check import consistency
from labelaudit.models import EncoderTokenScorer
from labelaudit.tokens import make_token_dataset

# every curve point trains a tagging head (a torch network): the fast tier leaves these out
pytestmark = pytest.mark.heavy

SWAP = {"B-PER": "B-LOC", "I-PER": "I-LOC", "B-LOC": "B-PER", "I-LOC": "I-PER"}


def scorer():
    return EncoderTokenScorer(encode=fake_encode, head="linear", cache=False)


def corpus(n_docs, seed, swap=False):
    tokens, tags, _ = make_corpus(n_docs=n_docs, seed=seed)
    if swap:  # another rule: persons and places trade types
        tags = [[SWAP.get(t, t) for t in sent] for sent in tags]
    return make_token_dataset(tokens, tags)


def test_shifted_token_rule_is_inconsistent_and_same_rule_consistent():
    train = corpus(40, 0)
    same = consistency(train, corpus(8, 1), scorer=scorer(), repeats=3,
                                  n_points=4)
    shifted = consistency(train, corpus(8, 1, swap=True), scorer=scorer(),
                                     repeats=3, n_points=4)
    assert same.metric == "entity_f1"
    assert same.verdict == "consistent"
    assert shifted.verdict == "inconsistent"
    assert shifted.verdicts["TestTrain"].gap < -0.1


def test_corrected_copy_validates(tmp_path):
    train = corpus(40, 0)
    fixed = corpus(8, 1)
    wrong_tags = [list(t) for t in fixed.tags]
    for i in range(0, len(wrong_tags), 2):  # every other sentence swapped
        wrong_tags[i] = [SWAP.get(t, t) for t in wrong_tags[i]]
    wrong = make_token_dataset(fixed.tokens, wrong_tags)
    result = consistency(train, wrong, fixed, scorer=scorer(), repeats=5,
                                    n_points=4)
    changed = sum(a != b for a, b in zip(wrong.tags, fixed.tags, strict=True))
    assert result.sizes["z"] == changed
    assert result.verdicts["MistakePureTrain"].verdict == "inconsistent"
    assert result.verdicts["PureTrainCorrect"].verdict == "consistent"
    # the changed sentences are those with persons or places, a biased sample, so the
    # Correct schemes are judged against their Mistake twins (same items, same order)
    for name, verdict in result.corrections.items():
        assert verdict.gap < 0, name
        assert verdict.reference == name.replace("Mistake", "Correct")
    for name in ("MistakeTestTrain", "MistakePureTrain"):  # fed first: a clear effect
        assert result.corrections[name].verdict == "correction helps", name


def test_corrected_tokens_must_align(tmp_path):
    train, suspect = corpus(40, 0), corpus(8, 1)
    tokens = [list(t) for t in suspect.tokens]
    tokens[3][0] = "Zzz"
    (tmp_path / "fixed.conll").write_text(
        conll_text(tokens, suspect.tags, [0] * len(tokens)))
    with pytest.raises(InvalidInputError, match="differ from the suspect file's in sentence 4"):
        consistency(train, suspect, tmp_path / "fixed.conll", scorer=scorer())
    odd = make_token_dataset(suspect.tokens, [["B-MISC" if t != "O" else t for t in s]
                                              for s in suspect.tags])
    with pytest.raises(InvalidInputError, match=r"entity types only in the suspect file: "
                                                r"\['MISC'\]"):
        consistency(train, odd, scorer=scorer())


def crf():
    return EncoderTokenScorer(encode=fake_encode, cache=False)  # the CRF head warm-starts


def test_warm_started_curves_keep_the_verdicts_with_the_same_points():
    train = corpus(40, 0)
    options = {"scorer": crf(), "repeats": 3, "n_points": 4, "adaptive": False}
    shifted = consistency(train, corpus(8, 1, swap=True), **options)
    same = consistency(train, corpus(8, 1), **options)
    cold = consistency(train, corpus(8, 1, swap=True), **options, warm_start=False)
    assert shifted.scorer.endswith("(warm-started)") and cold.scorer == "encoder+crf"
    assert shifted.verdict == cold.verdict == "inconsistent" and same.verdict == "consistent"
    assert shifted.n_fits == cold.n_fits  # every point is still one fit
    # the first point of every curve is a fresh fit either way
    assert shifted.curves["TestTrain"].scores[:, 0].tolist() == \
        cold.curves["TestTrain"].scores[:, 0].tolist()
    assert shifted.curves["TestTrain"].scores[:, 1:].tolist() != \
        cold.curves["TestTrain"].scores[:, 1:].tolist()


def test_warm_chains_share_their_common_points_and_parents_come_first():
    import numpy as np

    from labelaudit.consistency_check import curve_grid, draw_schemes
    from labelaudit.consistency_check._fits import curve_trees

    rng = np.random.default_rng(0)
    draws = [draw_schemes(60, 20, size=12, rng=rng, mistakes=np.arange(4)) for _ in range(2)]
    names = list(draws[0].schemes)
    grids = {n: curve_grid(len(draws[0].order(n)), 5) for n in names}
    trees, where = curve_trees(draws, names, grids)
    points = [(test, prefix, parent) for test, nodes in trees for _, prefix, parent in nodes]
    assert sorted(set(where.values())) == list(range(len(points)))
    assert len(points) < sum(len(g) for g in grids.values()) * len(draws)  # shared points
    for _, nodes in trees:
        assert nodes[0][2] == -1 and all(0 <= p < i for i, (_, _, p) in enumerate(nodes)
                                         if i)
        for _, prefix, parent in nodes[1:]:  # a point's parent is a prefix of it
            before = nodes[parent][1]
            assert len(before) < len(prefix) and (prefix[:len(before)] == before).all()
    for (name, r, k), i in where.items():
        assert (points[i][1] == draws[r].order(name)[:grids[name][k]]).all()
        assert (points[i][0] == draws[r].test).all()
    sizes = [sum(len(p) for _, p, _ in nodes) for _, nodes in trees]
    assert sizes == sorted(sizes, reverse=True)  # the largest task first


def test_a_killed_warm_run_resumes_without_refitting_finished_points(tmp_path, monkeypatch):
    import labelaudit.consistency_check._fits as module

    train, suspect = corpus(40, 0), corpus(8, 1)
    real, calls = module.fit_point, []

    def dies_after_seven(*args, **kwargs):
        if len(calls) == 7:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "fit_point", dies_after_seven)
    options = {"scorer": crf(), "repeats": 3, "n_points": 4, "adaptive": False,
               "checkpoint_dir": tmp_path / "fits"}
    with pytest.raises(KeyboardInterrupt):
        consistency(train, suspect, **options)
    assert len(list((tmp_path / "fits").glob("consistency-point-*.pkl"))) == 7
    calls.clear()
    monkeypatch.setattr(module, "fit_point",
                        lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    resumed = consistency(train, suspect, **options)
    assert len(calls) == resumed.n_fits - 7
    monkeypatch.setattr(module, "fit_point", real)
    fresh = consistency(train, suspect, **{**options, "checkpoint_dir": None})
    assert resumed.to_dict() == fresh.to_dict()


def test_warm_curves_in_worker_processes_read_the_vectors_from_one_mapped_file(monkeypatch):
    import labelaudit.engine._mapped_rows as module

    files = []
    real = module.MappedRows.__init__

    def opened(self, path, offsets):
        files.append(path)
        real(self, path, offsets)

    monkeypatch.setattr(module.MappedRows, "__init__", opened)
    train, suspect = corpus(40, 0), corpus(8, 1, swap=True)
    options = {"scorer": crf(), "repeats": 3, "n_points": 3, "adaptive": False}
    two = consistency(train, suspect, workers=2, **options)
    assert len(set(files)) == 1  # mapped once here (the workers map it in their own copy)
    assert two.to_dict() == consistency(train, suspect, **options).to_dict()


def test_the_default_token_scorer_is_the_encoder_on_each_words_own_vector():
    from types import SimpleNamespace

    from labelaudit.consistency_check._run import _scorer

    model, name = _scorer(SimpleNamespace(kind="tokens"), None)
    assert name == "encoder" and model.window == 0 and model.head == "crf"
    assert _scorer(SimpleNamespace(kind="tokens"), "encoder")[0].window == 0
    assert _scorer(SimpleNamespace(kind="tokens"), "finetune")[1] == "finetune"


def test_checkpoints_of_another_scorer_setting_are_not_reused(tmp_path, monkeypatch):
    import labelaudit.consistency_check._fits as module

    train, suspect = corpus(40, 0), corpus(8, 1)
    options = {"repeats": 2, "n_points": 2, "adaptive": False,
               "checkpoint_dir": tmp_path / "fits"}
    first = consistency(train, suspect, scorer=crf(), **options)
    real, calls = module.fit_point, []
    monkeypatch.setattr(module, "fit_point", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    consistency(train, suspect, scorer=crf(), **options)
    assert calls == []  # the same settings: every point read back
    wider = EncoderTokenScorer(encode=fake_encode, cache=False, window=2)
    consistency(train, suspect, scorer=wider, **options)
    assert len(calls) == first.n_fits  # another window: every point fitted again
