"""Melatih dan mengukur model kata pada tugas *associative recall* (``atensi.recall``).

    python -m atensi.train --task ingat          pelatihan penuh -> results/model_ingat.npz
    python -m atensi.train --task ingat --quick  beberapa langkah, tidak menulis berkas
    python -m atensi.train --experiment ingat    ablasi √d_k, mask, atensi seragam
                                                 -> results/eksperimen_ingat.json

Model, pengoptimal, jadwal laju belajar, dan perulangannya sama dengan model
karakter (``atensi.model``, ``atensi.training_loop``); bedanya kosakata kata, cerita yang
sejajar (satu cerita satu baris batch), dan hanya kata terakhir yang dinilai.
Deterministik dari seed: cerita dari ``recall.make_split(0)``, bobot awal dari
``Config.seed``, urutan batch dari seed pelatihan.
"""

from __future__ import annotations

import numpy as np

from . import recall, training_loop
from . import validation as _val
from .formatting import id_float, id_int
from .model import Config, TinyGPT
from .tasks import probes
from .training_loop import RESULTS, cpu_load

RECALL_WEIGHTS = RESULTS / "model_ingat.npz"
RECALL_EXPERIMENT = RESULTS / "eksperimen_ingat.json"
RECALL_MODEL = dict(T=recall.LENGTH - 1, d_model=32, n_head=4, n_layer=2, d_mlp=128,
                    scale=True, seed=0)
RECALL_TRAINING = dict(steps=1000, batch=64, lr=5e-3, warmup=50, eval_every=100, clip=1.0,
                       seed=0)
RECALL_QUICK = dict(RECALL_TRAINING, steps=30, eval_every=15)


def _recall_variant(name):
    """Model dan fungsi atensi setiap varian eksperimen: (config, attention, backward)."""
    if name == "tanpa_skala":
        return dict(RECALL_MODEL, scale=False), None, None
    if name == "tanpa_mask":
        return RECALL_MODEL, probes.unmasked_attention, probes.unmasked_attention_backward
    if name == "seragam":
        return RECALL_MODEL, probes.uniform_attention, probes.uniform_attention_backward
    return RECALL_MODEL, None, None


def train_recall(model: TinyGPT, split, *, steps, batch_size, lr, warmup, eval_every, clip,
                 seed, log=print, attention=None, attention_backward=None):
    """Latih model kata pada cerita latih ``split.train``; hanya tebakan kata terakhir
    (pemilik benda) yang dinilai. Kurva: ``step``, ``train`` (loss batch),
    ``val_step``, ``val`` (akurasi pada cerita uji)."""
    _val.check_instance(split, recall.Split, "split", "atensi.recall.Split",
                        "Buat dengan atensi.recall.make_split(0).")

    def draw(rng, B):
        return recall.inputs_targets(split.train[rng.integers(0, len(split.train), B)])

    def measure():
        value = recall.accuracy(model, split.test, attention=attention)
        return {"val": value}, f"akurasi uji {id_float(100 * value, 1)} %"

    return training_loop.fit(model, draw, measure, steps=steps, batch_size=batch_size, lr=lr,
                             warmup=warmup, eval_every=eval_every, clip=clip, seed=seed, log=log,
                             positions=[recall.ANSWER - 1], attention=attention,
                             attention_backward=attention_backward)


def measure_recall(model: TinyGPT, split) -> dict:
    """Angka bab model kata: akurasi, head pencari (bagian atensinya ke benda yang
    ditanyakan), akurasi bila setiap head dinolkan, atensi seragam, tanpa mask."""
    c = model.config
    share = recall.attention_share(model, split.test, split.test_query)
    layer, head = (int(i) for i in np.unravel_index(np.argmax(share), share.shape))
    ablated = [[recall.accuracy(model, split.test, attention=probes.HeadAblation(c.n_layer, l, h))
                for h in range(c.n_head)] for l in range(c.n_layer)]
    return {
        "test_accuracy": recall.accuracy(model, split.test),
        "train_accuracy": recall.accuracy(model, split.train[:len(split.test)]),
        "bigram_accuracy": recall.bigram_accuracy(split.train, split.test),
        "chance": 1 / recall.FACTS,
        "share": share.tolist(), "head": [layer, head],
        "head_share": float(share[layer, head]),
        "ablated_accuracy": ablated, "head_ablated_accuracy": ablated[layer][head],
        "uniform_accuracy": recall.accuracy(model, split.test,
                                            attention=probes.uniform_attention),
        "unmasked_accuracy": recall.accuracy(model, split.test,
                                             attention=probes.unmasked_attention),
    }


def targets(info) -> list:
    """Target model kata dari ``info`` sebuah lari: [(nama, tercapai?)]."""
    return [("akurasi uji ≥ 95 %", info["test_accuracy"] >= 0.95),
            ("bigram ≤ peluang acak", info["bigram_accuracy"] <= info["chance"])]


def check_model(model, name: str = "model") -> TinyGPT:
    """``model``, bila model kata tugas ini (kosakata dan panjang cerita); selain itu ditolak."""
    _val.check_instance(model, TinyGPT, name, "atensi.model.TinyGPT",
                        "Muat dengan tasks.load_weights(\"ingat\").")
    if tuple(model.chars) != recall.VOCAB:
        raise ValueError(f"'{name}' bukan model kata tugas ingat: kosakatanya bukan kosakata "
                         f"cerita ({len(model.chars)} token, misalnya {list(model.chars)[:4]!r}). "
                         "Muat model buku dengan tasks.load_weights(\"ingat\").")
    if model.config.T < recall.LENGTH - 1:
        raise ValueError(f"'{name}' hanya membaca {model.config.T} token (config.T), padahal "
                         f"satu cerita berisi {recall.LENGTH - 1} token masukan. Muat model buku "
                         "dengan tasks.load_weights(\"ingat\").")
    return model


def run_recall(*, quick=False, log=print, steps=None, variant="dasar"):
    """Latih model kata pada tugas *associative recall* dan cetak target; tidak
    menulis berkas (itu tugas ``atensi.tasks.runner``). Mengembalikan
    ``(model, curve, info, checks)``.
    """
    split = recall.make_split(0)
    settings = dict(RECALL_QUICK if quick else RECALL_TRAINING)
    if steps is not None:
        settings["steps"] = steps
        settings["eval_every"] = max(1, min(settings["eval_every"], steps))
    model_settings, attention, backward = _recall_variant(variant)
    config = Config(vocab=len(recall.VOCAB), **model_settings)
    model = TinyGPT(config, recall.VOCAB)
    log(f"Cerita latih {id_int(len(split.train))}, cerita uji {id_int(len(split.test))} "
        f"(pasangan nama-benda yang tidak pernah ada di data latih), kosakata {config.vocab} "
        f"kata. Contoh: {recall.story(split.test[0])}")
    log(f"Model ({variant}): {config.n_layer} layer, d_model {config.d_model}, "
        f"{config.n_head} head (d_k {config.d_k}); {id_int(model.n_params)} parameter. "
        f"{settings['steps']} langkah, batch {settings['batch']}. Beban CPU saat mulai "
        f"(rata-rata 1 menit): {cpu_load()}.")
    curve = train_recall(model, split, steps=settings["steps"], batch_size=settings["batch"],
                         lr=settings["lr"], warmup=settings["warmup"],
                         eval_every=settings["eval_every"], clip=settings["clip"],
                         seed=settings["seed"], log=log, attention=attention,
                         attention_backward=backward)
    info = dict(measure_recall(model, split), seconds=float(curve["seconds"]),
                cpu_seconds=float(curve["cpu_seconds"]), load=cpu_load(), training=settings,
                variant=variant)
    f = lambda v: id_float(100 * v, 1) + " %"  # noqa: E731
    training_loop.report_time(log, info)
    log(f"Akurasi pada pasangan yang belum pernah dilihat: model {f(info['test_accuracy'])}, "
        f"bigram {f(info['bigram_accuracy'])}, menebak acak di antara {recall.FACTS} nama "
        f"{f(info['chance'])}.")
    l, h = info["head"]
    log(f"Head pencari: layer {l + 1}, head {h + 1}, {f(info['head_share'])} bobotnya ke benda "
        f"yang ditanyakan; bila head itu dinolkan akurasinya {f(info['head_ablated_accuracy'])}.")
    checks = targets(info) + training_loop.time_checks(info)
    training_loop.report_targets(log, checks, info)
    return model, curve, info, checks


def run_recall_experiment(*, log=print, steps=None):
    """Ablasi √d_k dan mask, dan pembanding atensi seragam: model kata yang sama,
    seed yang sama, masing-masing dilatih dari awal (model dasarnya adalah bobot
    ``RECALL_WEIGHTS``); ditulis oleh ``atensi.tasks.runner``."""
    runs = {}
    for variant in ("tanpa_skala", "tanpa_mask", "seragam"):
        log(f"--- {variant} ---")
        model, curve, info, _ = run_recall(log=log, steps=steps, variant=variant)
        info["curve"] = {k: (v.tolist() if isinstance(v, np.ndarray) and v.ndim else float(v))
                         for k, v in curve.items() if k in ("val_step", "val", "step", "train")}
        if variant == "tanpa_mask":
            # What a generator sees: the same weights, run with the mask.
            split = recall.make_split(0)
            info["masked_accuracy"] = recall.accuracy(model, split.test)
        runs[variant] = info
    result = {"model": RECALL_MODEL, "training": runs["seragam"]["training"], "runs": runs,
              "load": cpu_load()}
    return result
