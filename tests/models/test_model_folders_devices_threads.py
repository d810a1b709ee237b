"""The shared model layer: a --model folder that is not a
model, a --device the machine lacks, a hub model without network, the torch thread count,
tapt's file modes and losses, a damaged model folder for predict, and a class of one item
found before any text is encoded. Tiny models from conftest, no network."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat

import numpy as np
import pytest
from tests.conftest import make_topic_frame

import labelaudit
import labelaudit.training
from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.models import FinetuneScorer
from labelaudit.models import _encoder as hub
from labelaudit.models import _encoder as runtime
from labelaudit.models._tapt import tapt
from labelaudit.training import load_model


def _one_line_error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith(f"labelaudit {command}: error:"), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "data.csv"
    make_topic_frame(6).to_csv(path, index=False)
    return path


@pytest.fixture
def not_a_model(tmp_path):
    folder = tmp_path / "somefolder"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a model")
    return folder


# 1. --model naming a local folder that holds no model


def test_a_folder_without_a_model_is_refused_naming_what_is_missing(not_a_model):
    with pytest.raises(InvalidParameterError, match="somefolder.*no config.json"):
        hub.resolve_model_path(not_a_model)
    with pytest.raises(InvalidParameterError, match="is a file, not a model folder"):
        hub.resolve_model_path(not_a_model / "notes.txt")


def test_every_command_refuses_a_folder_without_a_model_in_one_line(csv, not_a_model, tmp_path,
                                                                     capsys):
    for command, extra in (("scan", ["--text", "text", "--label", "label", "--scorers",
                                     "embed", "--out", str(tmp_path / "a.csv")]),
                           ("scan", ["--scorers", "finetune", "--out", str(tmp_path / "b.csv")]),
                           ("train", ["--backbone", "finetune", "--out", str(tmp_path / "m1")]),
                           ("train", ["--out", str(tmp_path / "m2")]),
                           ("tapt", ["--out", str(tmp_path / "t")])):
        code = main([command, str(csv), "--model", str(not_a_model), *extra])
        err = _one_line_error(capsys, command)
        assert code == 1 and str(not_a_model) in err and "config.json" in err, err
    assert not any((tmp_path / name).exists() for name in ("a.csv", "b.csv", "m1", "m2", "t"))


# 2. --device naming a GPU the machine does not have


@pytest.fixture
def no_cuda(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


def test_a_missing_gpu_is_one_line_listing_the_devices_there_are(no_cuda):
    for device in ("cuda", "cuda:1"):
        with pytest.raises(InvalidParameterError,
                           match=r"no GPU here \(CUDA not available.*this machine has: cpu"):
            runtime.resolve_device(device)
    with pytest.raises(InvalidParameterError, match="'gpu0' is not a torch device.*: cpu"):
        runtime.resolve_device("gpu0")
    assert str(runtime.resolve_device(None)) == "cpu" and runtime.available_devices()[0] == "cpu"
    with pytest.raises(InvalidParameterError, match="no GPU here"):
        FinetuneScorer(devices=["cuda:0", "cuda:1"]).fold_devices()


def test_every_command_with_a_device_option_refuses_a_missing_gpu(no_cuda, csv, tiny_bert_dir,
                                                                  tiny_st_dir, tmp_path,
                                                                  monkeypatch, capsys):
    import labelaudit.models._embed as embed

    def never(*args, **kwargs):
        raise AssertionError("texts were encoded before the device was checked")

    monkeypatch.setattr(embed, "encode_texts", never)
    runs = (("tapt", ["--model", str(tiny_bert_dir), "--device", "cuda",
                      "--out", str(tmp_path / "t")]),
            ("train", ["--model", str(tiny_st_dir), "--device", "cuda",
                       "--out", str(tmp_path / "m")]),
            ("scan", ["--scorers", "embed,finetune", "--model", str(tiny_bert_dir),
                      "--device", "cuda:0,cuda:1", "--out", str(tmp_path / "s.csv")]))
    for command, extra in runs:
        code = main([command, str(csv), *extra])
        err = _one_line_error(capsys, command)
        assert code == 1 and "no GPU here" in err and "cpu" in err, err


# 3. a hub model without network


def _counting_loader():
    calls: list[str] = []

    class Loader:
        @staticmethod
        def from_pretrained(path, **options):
            calls.append(path)
            raise AssertionError("transformers was asked to download")

    return Loader, calls


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_an_uncached_hub_model_offline_fails_at_once_without_probing(variable, monkeypatch):
    from labelaudit.models._encoder import load_pretrained

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "1")
    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: pytest.fail("probed the hub"))
    loader, calls = _counting_loader()
    with pytest.raises(InvalidParameterError,
                       match="'someone/not-a-model'.*not .*in the Hugging Face cache.*OFFLINE"):
        load_pretrained(loader, "someone/not-a-model")
    assert calls == []


def test_an_unreachable_hub_is_found_before_transformers_retries(monkeypatch):
    from labelaudit.models._encoder import load_pretrained

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the connection is refused at once
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    loader, calls = _counting_loader()
    with pytest.raises(InvalidParameterError, match="did not answer within 2 s"):
        load_pretrained(loader, "someone/not-a-model")
    assert calls == [] and hub.hub_reachable(f"http://127.0.0.1:{port}") is False


def test_the_cli_fails_in_one_line_for_a_hub_model_offline(csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = main(["scan", str(csv), "--scorers", "embed", "--model", "someone/not-a-model",
                 "--out", str(tmp_path / "out.csv")])
    err = _one_line_error(capsys, "scan")
    assert code == 1 and "someone/not-a-model" in err and "HF_HUB_OFFLINE" in err


def test_a_cached_hub_model_loads_from_the_cache_alone_when_offline(tiny_bert_dir, tmp_path,
                                                                     monkeypatch):
    from huggingface_hub import constants
    from transformers import AutoConfig

    from labelaudit.models._encoder import load_pretrained

    repo = tmp_path / "hub" / "models--someone--cached-model"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    shutil.copy(tiny_bert_dir / "config.json", snapshot / "config.json")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub.resolve_model_path("someone/cached-model") == "someone/cached-model"
    assert hub.local_files_only("someone/cached-model")
    config = load_pretrained(AutoConfig, "someone/cached-model", cache_dir=str(tmp_path / "hub"))
    assert config.hidden_size == 32


# 4. threads from the cores actually free


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """Set the cores, the cgroup limit and the load the thread count is chosen from."""
    cpu_max = tmp_path / "cpu.max"
    monkeypatch.setattr(runtime, "_CPU_MAX", cpu_max)
    monkeypatch.setattr(runtime, "_CFS", tmp_path / "no-cgroup-v1")
    monkeypatch.delenv("LABELAUDIT_THREADS", raising=False)

    def setup(cores: int, load: float, limit: str = "max 100000") -> int:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)),
                            raising=False)
        monkeypatch.setattr(os, "getloadavg", lambda: (load, 0.0, 0.0))
        cpu_max.write_text(limit + "\n")
        return runtime.default_threads()

    return setup


def test_threads_are_the_free_cores(machine):
    assert machine(16, 0.0) == runtime.MAX_THREADS  # capped
    assert machine(8, 5.2) == 3  # 8 cores, 5.2 busy
    assert machine(2, 0.3) == 2
    assert machine(2, 8.7) == 1  # a busy machine: one thread, never 0
    assert machine(16, 0.0, "200000 100000") == 2  # a container limited to 2 cores
    assert machine(16, 1.0, "150000 100000") == 1  # 1.5 cores (2), one busy


def test_labelaudit_threads_overrides_and_is_checked(machine, monkeypatch):
    import torch

    machine(2, 8.7)
    monkeypatch.setenv("LABELAUDIT_THREADS", "3")
    assert runtime.torch_threads() == 3
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("LABELAUDIT_THREADS", "1")
        runtime.torch_setup()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    for bad in ("0", "two"):
        monkeypatch.setenv("LABELAUDIT_THREADS", bad)
        with pytest.raises(InvalidParameterError, match="LABELAUDIT_THREADS"):
            runtime.torch_threads()


@pytest.mark.parametrize("command", ["scan", "train", "tapt", "scan-tokens"])
def test_the_torch_commands_document_labelaudit_threads(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "LABELAUDIT_THREADS" in capsys.readouterr().out


# 5 and 6. tapt: the user's file modes, and the losses of each epoch


@pytest.fixture(scope="module")
def adapted(tiny_bert_dir, tmp_path_factory):
    """Two epochs of tapt, three batches each, under umask 022."""
    out = tmp_path_factory.mktemp("tapt") / "adapted"
    before = os.umask(0o022)
    try:
        result = tapt(make_topic_frame(8, seed=3), model=str(tiny_bert_dir), out=out,
                      epochs=2, batch_size=8, max_length=16)
    finally:
        os.umask(before)
    return result


def test_tapt_files_get_the_users_umask(adapted):
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in adapted.out.iterdir()}
    assert modes["model.safetensors"] == 0o644, modes
    assert set(modes.values()) == {0o644}, modes
    assert stat.S_IMODE(adapted.out.stat().st_mode) == 0o755


def test_tapt_prints_the_first_and_last_loss_of_each_epoch(adapted):
    assert adapted.n_batches == [3, 3]
    for first, last in zip(adapted.first_losses, adapted.last_losses, strict=True):
        assert first != last  # two batches, two measurements
    lines = adapted.summary().splitlines()
    assert lines[0].startswith("adapted on 24 texts for 2 epochs")
    for epoch in (1, 2):
        first, last = adapted.first_losses[epoch - 1], adapted.last_losses[epoch - 1]
        assert f"epoch {epoch}: MLM loss {first:.3f} -> {last:.3f}" in lines[epoch]
    frame = adapted.to_frame()
    assert frame["first_loss"].tolist() == adapted.first_losses


def test_an_epoch_of_one_batch_says_so(tiny_bert_dir, tmp_path):
    result = tapt(make_topic_frame(2), model=str(tiny_bert_dir), out=tmp_path / "one",
                  epochs=1, batch_size=64, max_length=16)
    assert result.n_batches == [1] and "(one batch)" in result.summary()


# 7. predict on a damaged model folder


@pytest.fixture(scope="module")
def saved_head(tiny_st_dir, tmp_path_factory):
    model = labelaudit.training.train(make_topic_frame(8), model=str(tiny_st_dir), epochs=2)
    return model.save(tmp_path_factory.mktemp("model") / "head")


def _damaged(saved, tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(saved, folder)
    return folder


def _edit_meta(folder, change):
    path = folder / "labelaudit-model.json"
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta))


def test_a_damaged_model_folder_names_the_file_and_what_is_wrong(saved_head, tmp_path):
    truncated = _damaged(saved_head, tmp_path, "truncated")
    weights = (truncated / "head.pt").read_bytes()
    (truncated / "head.pt").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(InvalidInputError, match=r"head.pt cannot be read as torch weights.*"
                                                "truncated or damaged"):
        load_model(truncated)
    broken = _damaged(saved_head, tmp_path, "broken")
    (broken / "labelaudit-model.json").write_text('{"format": "labelaudit-model", "clas')
    with pytest.raises(InvalidInputError, match="labelaudit-model.json is not valid JSON"):
        load_model(broken)
    lacking = _damaged(saved_head, tmp_path, "lacking")
    _edit_meta(lacking, lambda meta: meta.pop("settings"))
    with pytest.raises(InvalidInputError, match="labelaudit-model.json lacks 'settings'"):
        load_model(lacking)
    missing = _damaged(saved_head, tmp_path, "missing")
    (missing / "head.pt").unlink()
    with pytest.raises(InvalidInputError, match="head.pt is missing"):
        load_model(missing)


def test_a_class_list_that_no_longer_matches_the_head_is_named(saved_head, tmp_path):
    more = _damaged(saved_head, tmp_path, "more")
    _edit_meta(more, lambda meta: meta["classes"].append("extra"))
    with pytest.raises(InvalidInputError,
                       match="lists 4 classes but head.pt has an output layer for 3"):
        load_model(more)
    fewer = _damaged(saved_head, tmp_path, "fewer")
    _edit_meta(fewer, lambda meta: meta["classes"].pop())
    with pytest.raises(InvalidInputError, match="lists 2 classes .* output layer for 3"):
        load_model(fewer)


def test_predict_on_a_damaged_folder_is_one_line(saved_head, csv, tmp_path, capsys):
    folder = _damaged(saved_head, tmp_path, "cut")
    (folder / "head.pt").write_bytes(b"")
    code = main(["predict", str(folder), str(csv)])
    err = _one_line_error(capsys, "predict")
    assert code == 1 and "head.pt" in err


def test_a_finetuned_model_keeps_modes_and_names_an_edited_class_list(tiny_bert_dir, tmp_path):
    before = os.umask(0o022)
    try:
        model = labelaudit.training.train(make_topic_frame(4), backbone="finetune",
                                 model=str(tiny_bert_dir), epochs=1, batch_size=8)
        folder = model.save(tmp_path / "ft")
    finally:
        os.umask(before)
    weights = folder / "backbone" / "model.safetensors"
    assert stat.S_IMODE(weights.stat().st_mode) == 0o644
    _edit_meta(folder, lambda meta: meta["classes"].append("extra"))
    with pytest.raises(InvalidInputError, match="lists 4 classes but classifier.pt has an "
                                                "output layer for 3"):
        load_model(folder)
    (folder / "backbone" / "model.safetensors").write_bytes(weights.read_bytes()[:100])
    with pytest.raises(InvalidParameterError, match="cannot load the model folder .*backbone"):
        load_model(folder)


# 8. a class of one item, found before any text is encoded


def test_a_class_of_one_item_is_refused_before_any_text_is_encoded(monkeypatch, tmp_path):
    import labelaudit.models._embed as embed

    encoded = []
    monkeypatch.setattr(embed, "encode_texts",
                        lambda texts, **options: encoded.append(len(texts)) or np.ones(
                            (len(texts), 4)))
    frame = make_topic_frame(5)
    frame.loc[0, "label"] = "lonely"
    with pytest.raises(InvalidInputError, match=r"\['lonely'\] has a single item"):
        labelaudit.scan(frame, scorers=["embed"], cache_dir=tmp_path)
    assert encoded == []
    with pytest.raises(InvalidInputError, match="single item"):
        labelaudit.scan(frame, scorers=["tfidf", "embed"], cache_dir=tmp_path)
    assert encoded == []
