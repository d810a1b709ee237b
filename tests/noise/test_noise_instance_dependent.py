"""Instance-dependent (NoisywikiHow) noise with injected embeddings; one slow real-encoder test."""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.noise import inject_noise
from labelaudit.noise._instance_dependent import nearest_other_class

# two classes on the unit circle; items near the boundary (angle ~ 90 degrees) are hard
ANGLES = np.array([0, 10, 20, 80, 85, 100, 95, 160, 170, 180])
LABELS = np.array(["x", "x", "x", "x", "x", "y", "y", "y", "y", "y"])
TEXTS = [f"text {k}" for k in range(len(ANGLES))]


def circle() -> np.ndarray:
    radians = np.deg2rad(ANGLES)
    return np.c_[np.cos(radians), np.sin(radians)]


def test_nearest_other_class_by_hand():
    neighbours, similarity = nearest_other_class(circle(), LABELS == "y")
    # x items' nearest y is the one at 95 degrees (row 6); y items' nearest x is at 85 (row 4)
    assert neighbours.tolist() == [6, 6, 6, 6, 6, 4, 4, 4, 4, 4]
    assert similarity[4] == pytest.approx(np.cos(np.deg2rad(10)))
    assert similarity[0] == pytest.approx(np.cos(np.deg2rad(95)))


def test_hardest_items_take_their_neighbours_label():
    result = inject_noise(LABELS, method="instance-dependent", rate=0.4, embeddings=circle())
    # s_x: rows 4 and 6 (10 degrees apart) are hardest, then 3 and 5 (15 degrees)
    assert np.flatnonzero(result.is_noisy).tolist() == [3, 4, 5, 6]
    assert result.labels.tolist() == ["x", "x", "x", "y", "y", "x", "x", "y", "y", "y"]
    assert result.similarity is not None and result.similarity[4] > result.similarity[0]


def test_swap_input_keeps_the_label_and_takes_the_text():
    texts = list(TEXTS)
    result = inject_noise(LABELS, method="instance-dependent", rate=0.2, embeddings=circle(),
                          texts=texts, swap_input=True)
    assert np.flatnonzero(result.is_noisy).tolist() == [4, 6]
    assert np.array_equal(result.labels, result.clean_labels)
    assert result.text_source.tolist() == [-1, -1, -1, -1, 6, -1, 4, -1, -1, -1]
    frame = result.to_frame()
    assert frame["text_from"].tolist()[4] == 6 and frame["text_from"].isna().sum() == 8


def test_swap_input_never_swaps_in_the_same_text():
    texts = list(TEXTS)
    texts[6] = texts[4]  # rows 4 and 6 are duplicates across classes
    result = inject_noise(LABELS, method="instance-dependent", rate=0.2, embeddings=circle(),
                          texts=texts, swap_input=True)
    for row, source in enumerate(result.text_source.tolist()):
        if source >= 0:
            assert texts[source] != texts[row]


def test_embed_function_is_used_instead_of_the_encoder():
    calls = []

    def fake_embed(texts):
        calls.append(list(texts))
        return circle()

    result = inject_noise(LABELS, method="instance-dependent", rate=0.2, texts=TEXTS,
                          embed=fake_embed)
    assert calls == [TEXTS]
    assert np.flatnonzero(result.is_noisy).tolist() == [4, 6]


def test_rate_applies_per_noise_source():
    labels = np.array(["a"] * 10 + ["b"] * 10 + ["c"] * 20)
    embeddings = np.random.default_rng(0).normal(size=(40, 8))
    result = inject_noise(labels, method="instance-dependent", rate=0.25, embeddings=embeddings,
                          sources={"a": "SC", "b": "SC", "c": "TC"})
    summary = result.achieved_rates().set_index(["by", "value"])
    assert summary.loc[("source", "SC"), "n_noisy"] == 5
    assert summary.loc[("source", "TC"), "n_noisy"] == 5
    # within a source, the hardest items are taken
    for source in ("SC", "TC"):
        members = result.sources == source
        chosen = result.similarity[members & result.is_noisy]
        rest = result.similarity[members & ~result.is_noisy]
        assert chosen.min() >= rest.max()


def test_instance_dependent_needs_texts_or_embeddings():
    with pytest.raises(InvalidParameterError, match="needs the texts"):
        inject_noise(LABELS, method="instance-dependent", rate=0.2)
    with pytest.raises(InvalidInputError, match="shape"):
        inject_noise(LABELS, method="instance-dependent", rate=0.2, embeddings=np.ones((3, 2)))
    with pytest.raises(InvalidParameterError, match="only used by instance-dependent"):
        inject_noise(LABELS, method="uniform", rate=0.2, swap_input=True)


@pytest.mark.slow
def test_real_default_encoder(tmp_path):
    texts = ["the striker scored a late goal", "the keeper saved a penalty in the match",
             "bake the bread for forty minutes", "simmer the tomato sauce slowly",
             "the football team won the cup final", "whisk the eggs with sugar"]
    labels = ["sport", "sport", "food", "food", "sport", "food"]
    result = inject_noise(labels, method="instance-dependent", rate=0.34, texts=texts,
                          cache_dir=tmp_path)
    assert result.n_noisy == 2
    assert np.all(result.similarity[result.is_noisy].min()
                  >= result.similarity[~result.is_noisy].max())
    assert any(tmp_path.rglob("*.npz"))  # embeddings were cached


def test_blocks_give_the_same_neighbours():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 5))
    labels = rng.integers(3, size=50)
    whole = nearest_other_class(vectors, labels)
    blocked = nearest_other_class(vectors, labels, block_size=7)
    assert np.array_equal(whole[0], blocked[0]) and np.allclose(whole[1], blocked[1])
    assert all(labels[j] != labels[i] for i, j in enumerate(whole[0]))
    # brute force: the nearest other-class item by cosine
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(50):
        sims = np.where(labels != labels[i], unit @ unit[i], -np.inf)
        assert whole[0][i] == int(np.argmax(sims))
