"""A tiny hand-made NER corpus with one planted error of each issue type, a fake word
encoder and a tiny random BERT builder (helpers shared by the token tests)."""

from __future__ import annotations

import hashlib

import numpy as np

FIRST = ["John", "Mary", "Peter", "Anna", "Paul", "Laura"]
LAST = ["Smith", "Jones", "Brown", "Miller", "Davis", "Wilson"]
CITIES = ["Paris", "London", "Berlin", "Madrid", "Rome", "Vienna"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"]

TEMPLATES = [
    # (words, tags); P = person (first last), C = city, K = company
    (["P", "visited", "C", "on", "Monday", "."], None),
    (["K", "opened", "an", "office", "in", "C", "."], None),
    (["P", "joined", "K", "last", "year", "."], None),
    (["the", "mayor", "of", "C", "met", "P", "."], None),
    (["shares", "of", "K", "rose", "sharply", "."], None),
]


def _expand(template, rng):
    tokens, tags = [], []
    for w in template:
        if w == "P":
            tokens += [str(rng.choice(FIRST)), str(rng.choice(LAST))]
            tags += ["B-PER", "I-PER"]
        elif w == "C":
            tokens.append(str(rng.choice(CITIES)))
            tags.append("B-LOC")
        elif w == "K":
            tokens.append(str(rng.choice(COMPANIES)))
            tags.append("B-ORG")
        else:
            tokens.append(w)
            tags.append("O")
    return tokens, tags


def make_corpus(n_docs: int = 24, per_doc: int = 5, seed: int = 0):
    """Clean sentences: (tokens, tags, documents)."""
    rng = np.random.default_rng(seed)
    tokens, tags, docs = [], [], []
    for d in range(n_docs):
        for _ in range(per_doc):
            t, g = _expand(TEMPLATES[int(rng.integers(len(TEMPLATES)))][0], rng)
            tokens.append(t)
            tags.append(g)
            docs.append(d)
    return tokens, tags, docs


def _first(tags, wanted, start=0):
    return next(i for i in range(start, len(tags)) if tags[i] == wanted)


def plant_errors(tags):
    """Plant one error of each kind; returns (noisy tags, {kind: sentence index})."""
    noisy = [list(t) for t in tags]
    planted = {}

    def pick(cond, used):
        return next(i for i in range(len(noisy)) if i not in used and cond(noisy[i]))

    used: set[int] = set()
    i = pick(lambda t: "B-LOC" in t, used)  # a city tagged as an organisation
    noisy[i][_first(noisy[i], "B-LOC")] = "B-ORG"
    planted["wrong-type"], _ = i, used.add(i)
    i = pick(lambda t: "I-PER" in t, used)  # surname left out of the person
    noisy[i][_first(noisy[i], "I-PER")] = "O"
    planted["wrong-boundary"], _ = i, used.add(i)
    i = pick(lambda t: "B-LOC" in t, used)  # a city not tagged at all
    noisy[i][_first(noisy[i], "B-LOC")] = "O"
    planted["missing-entity"], _ = i, used.add(i)
    i = pick(lambda t: "B-ORG" in t and t[-1] == "O", used)  # a verb tagged as an entity
    j = _first(noisy[i], "B-ORG")
    noisy[i][j + 1] = "B-MISC"
    planted["spurious-entity"], _ = i, used.add(i)
    i = pick(lambda t: "B-PER" in t, used)  # person opened with I- (invalid in IOB2)
    noisy[i][_first(noisy[i], "B-PER")] = "I-PER"
    planted["invalid-sequence"], _ = i, used.add(i)
    return noisy, planted


def conll_text(tokens, tags, docs, *, sep="\t", extra_column=False) -> str:
    lines = []
    previous = None
    for t, g, d in zip(tokens, tags, docs, strict=False):
        if d != previous:
            lines += [f"-DOCSTART-{sep}O", ""]
            previous = d
        for tok, tag in zip(t, g, strict=False):
            lines.append(sep.join([tok, "NNP", tag] if extra_column else [tok, tag]))
        lines.append("")
    return "\n".join(lines) + "\n"


def fake_encode(sentences):
    """A deterministic random 24-d vector per token string (no context)."""
    out = []
    for sent in sentences:
        rows = []
        for tok in sent:
            seed = int.from_bytes(hashlib.sha256(tok.encode()).digest()[:4], "little")
            rows.append(np.random.default_rng(seed).normal(size=24))
        out.append(np.asarray(rows, dtype=np.float32))
    return out


def build_tiny_bert(folder):
    """Save a randomly initialised 1-layer BERT whose vocabulary holds the corpus's words."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = {w.lower() for t, _ in TEMPLATES for w in t if len(w) > 1}
    words |= {w.lower() for w in FIRST + LAST + CITIES + COMPANIES}
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "##s"] + sorted(words)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    # transformers 5 takes the vocabulary as ``vocab`` (``vocab_file`` is silently ignored).
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=37,
                        max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
