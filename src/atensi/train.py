"""Melatih model kecil (``atensi.model``) pada prosa buku ini, dan perintah
``python -m atensi.train`` untuk setiap tugas latih terdaftar (``atensi.tasks``).

    python -m atensi.train                     pelatihan penuh -> results/model_kecil.npz
    python -m atensi.train --quick             beberapa puluh langkah, tanpa menulis berkas
    python -m atensi.train --experiment skala  eksperimen √d_k -> results/eksperimen_skala.json
    python -m atensi.train --task ingat        model kata (atensi.tasks.ingat)
    python -m atensi.train --task rujukan      model rujukan *dia* (atensi.tasks.rujukan)

Pilihan ``--task`` dan ``--experiment`` dibuat dari ``atensi.tasks.REGISTERED``;
deskripsi tugas ini ada di ``atensi.tasks.teks``.

Semuanya deterministik dari ``seed``: bobot awal dari ``Config.seed``, urutan
batch dari ``seed`` pelatihan. Data dibaca dari salinan beku
``results/korpus.txt`` (``atensi.corpus``), bukan dari bab yang sedang disunting.

Di akhir pelatihan penuh skrip mencetak tiga angka pada teks validasi yang
sama: cross-entropy model, model bigram karakter (dengan smoothing terbaik
untuk validasi, jadi pembanding yang keras), dan entropi unigram, lalu
memeriksa target: model < bigram dan model ≤ 0,7 × unigram.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from . import corpus as corpus_mod
from . import files, model_checks, result_checks, tasks, training_loop
from . import validation as _val
from .arguments import Parser
from .formatting import id_float, id_int
from .model import Config, TinyGPT
from .tasks import runner
from .training_loop import RESULTS, cpu_load

WEIGHTS = RESULTS / "model_kecil.npz"
EXPERIMENT = RESULTS / "eksperimen_skala.json"

MODEL = dict(T=64, d_model=64, n_head=4, n_layer=2, d_mlp=256, scale=True, seed=0)
TRAINING = dict(steps=1000, batch=32, lr=4e-3, warmup=50, eval_every=100, clip=1.0, seed=0)
QUICK = dict(TRAINING, steps=40, eval_every=20)
# √d_k experiment: one head of width 64 per layer (d_k = 64, ANDREA's), with
# and without scaling, same seeds.
SKALA_MODEL = dict(MODEL, n_head=1)
SKALA_TRAINING = dict(TRAINING, steps=500, eval_every=25)


def data_ids(model: TinyGPT, corpus):
    return model.encode(corpus.train), model.encode(corpus.val)


def batch(ids, T, B, rng):
    """B potongan acak sepanjang T: masukan x dan target y (x digeser satu)."""
    T = _val.check_int(T, "T")
    B = _val.check_int(B, "B")
    _val.check_instance(rng, np.random.Generator, "rng", "np.random.Generator",
                        "Buat dengan np.random.default_rng(seed).")
    ids = model_checks.check_token_ids(ids, np.iinfo(np.int64).max, "ids")
    if ids.ndim != 1:
        raise ValueError(f"Argumen 'ids' harus array satu dimensi berisi token teks, tetapi "
                         f"bentuknya {ids.shape}. Buat dengan model.encode(teks).")
    model_checks.check_window_text(len(ids), T, "ids")
    starts = rng.integers(0, len(ids) - T - 1, B)
    rows = starts[:, None] + np.arange(T)
    return ids[rows], ids[rows + 1]


def windows(ids, T):
    """Potongan berurutan yang tidak tumpang tindih: seluruh teks validasi sekali."""
    n = (len(ids) - 1) // T
    rows = np.arange(n)[:, None] * T + np.arange(T)
    return ids[rows], ids[rows + 1]


def evaluate(model: TinyGPT, x, y, chunk=32) -> float:
    """Cross-entropy rata-rata (nat) atas semua posisi ``(x, y)``."""
    _val.check_instance(model, TinyGPT, "model", "atensi.model.TinyGPT",
                        "Buat dengan TinyGPT(config, chars) atau TinyGPT.load(path).")
    T, vocab = model.config.T, model.config.vocab
    x = model_checks.check_token_batch(x, T, vocab, "x", min_rows=1)
    y = model_checks.check_token_batch(y, T, vocab, "y", min_rows=1)
    _val.check_same_shape(y, "y", x, "x")
    chunk = _val.check_int(chunk, "chunk")
    total = 0.0
    for a in range(0, len(x), chunk):
        total += model.loss(x[a:a + chunk], y[a:a + chunk]) * len(x[a:a + chunk])
    return total / len(x)


def baselines(train_ids, x_val, y_val, vocab):
    """Cross-entropy unigram dan bigram karakter pada target validasi yang sama (nat).

    Bigram: p(y | x) dari hitungan pasangan di teks latih dengan tambahan α;
    α dipilih dari beberapa nilai yang memberi cross-entropy validasi terkecil
    (pembanding terkuat yang jujur untuk model). Unigram: entropi sebaran
    karakter teks latih, dan cross-entropy-nya pada validasi.
    """
    vocab = _val.check_int(vocab, "vocab")
    train_ids = model_checks.check_token_ids(train_ids, vocab, "train_ids")
    x_val = model_checks.check_token_ids(x_val, vocab, "x_val")
    y_val = model_checks.check_token_ids(y_val, vocab, "y_val")
    if train_ids.ndim != 1 or len(train_ids) < 2:
        raise ValueError(f"Argumen 'train_ids' harus array satu dimensi berisi paling sedikit dua "
                         f"token (satu pasangan bigram), tetapi bentuknya {train_ids.shape}. Buat "
                         "dengan model.encode(corpus.train).")
    if x_val.size == 0:
        raise ValueError("Argumen 'x_val' kosong: tidak ada target validasi untuk diukur. Buat "
                         "dengan atensi.train.windows(ids, T).")
    _val.check_same_shape(y_val, "y_val", x_val, "x_val")
    uni = np.bincount(train_ids, minlength=vocab).astype(np.float64)
    p_uni = uni / uni.sum()
    nz = p_uni[p_uni > 0]
    entropy = float(-(nz * np.log(nz)).sum())
    p_uni_s = (uni + 1) / (uni.sum() + vocab)
    uni_ce = float(-np.log(p_uni_s[y_val]).mean())
    pairs = np.zeros((vocab, vocab))
    np.add.at(pairs, (train_ids[:-1], train_ids[1:]), 1)
    best = None
    for alpha in (0.01, 0.03, 0.1, 0.3, 1.0):
        p = (pairs + alpha) / (pairs.sum(axis=1, keepdims=True) + alpha * vocab)
        ce = float(-np.log(p[x_val, y_val]).mean())
        if best is None or ce < best[0]:
            best = (ce, alpha)
    return {"unigram_entropy": entropy, "unigram_ce": uni_ce,
            "bigram_ce": best[0], "bigram_alpha": best[1]}


def train(model: TinyGPT, corpus, *, steps, batch_size=16, lr=3e-3, warmup=50,
          eval_every=100, clip=1.0, seed=0, log=print, entropy=False, attention=None,
          attention_backward=None):
    """Latih ``model`` di tempat pada potongan acak ``corpus.train``; mengembalikan
    kurva (dict array, ``atensi.training_loop.fit``).

    Kurva: ``step``, ``train`` (loss batch setiap langkah), ``val_step``,
    ``val`` (cross-entropy validasi), ``grad_norm``, dan bila ``entropy``:
    ``entropy`` (entropi atensi rata-rata per layer, pada potongan validasi).
    ``log``: fungsi cetak (``None`` = diam).
    """
    settings = dict(steps=steps, batch_size=batch_size, lr=lr, warmup=warmup,
                    eval_every=eval_every, clip=clip, seed=seed, log=log)
    training_loop.check_settings(model, **settings)  # before the corpus is encoded
    _val.check_instance(corpus, corpus_mod.Corpus, "corpus", "atensi.corpus.Corpus",
                        "Baca dengan atensi.corpus.load().")
    entropy = _val.check_flag(entropy, "entropy")
    train_ids, val_ids = data_ids(model, corpus)
    T = model.config.T
    for name, ids in (("corpus.train", train_ids), ("corpus.val", val_ids)):
        model_checks.check_window_text(len(ids), T, name)
    x_val, y_val = windows(val_ids, T)

    def measure():
        values = {"val": evaluate(model, x_val, y_val)}
        if entropy:
            values["entropy"] = model.attention_entropy(x_val[:8])
        return values, f"loss validasi {id_float(values['val'], 3)}"

    return training_loop.fit(model, lambda rng, B: batch(train_ids, T, B, rng), measure,
                             **settings, attention=attention,
                             attention_backward=attention_backward)


def targets(info) -> list:
    """Target model karakter dari ``info`` sebuah lari: [(nama, tercapai?)]."""
    val = info["val_ce"]
    uni = min(info["unigram_entropy"], info["unigram_ce"])
    return [("model < bigram", val < info["bigram_ce"]),
            (f"model ≤ 0,7 × unigram = {id_float(0.7 * uni, 3)}", val <= 0.7 * uni)]


def check_model(model, name: str = "model") -> TinyGPT:
    """``model``, bila model karakter (setiap token satu karakter); selain itu ditolak."""
    _val.check_instance(model, TinyGPT, name, "atensi.model.TinyGPT",
                        "Muat dengan tasks.load_weights(\"teks\").")
    if not all(isinstance(c, str) and len(c) == 1 for c in model.chars):
        raise ValueError(f"'{name}' bukan model karakter: tokennya kata, misalnya "
                         f"{list(model.chars)[:4]!r}. Model itu dilatih untuk tugas lain; muat "
                         "model karakter dengan tasks.load_weights(\"teks\").")
    return model


def run_training(*, quick=False, log=print, corpus=None, steps=None):
    """Pelatihan penuh (atau ``quick``): mencetak kemajuan dan target; tidak menulis
    berkas (itu tugas ``atensi.tasks.runner``). Mengembalikan
    ``(model, curve, info, checks)``."""
    corpus = corpus or corpus_mod.load()
    settings = dict(QUICK if quick else TRAINING)
    if steps is not None:
        settings["steps"] = steps
    config = Config(vocab=len(corpus.chars), **MODEL)
    model = TinyGPT(config, corpus.chars)
    log(f"Korpus {corpus.path.name}: latih {id_int(len(corpus.train))} karakter, validasi "
        f"{id_int(len(corpus.val))}, kosakata {config.vocab}.")
    log(f"Model: {config.n_layer} layer, d_model {config.d_model}, {config.n_head} head "
        f"(d_k {config.d_k}), T {config.T}; {id_int(model.n_params)} parameter. "
        f"{settings['steps']} langkah, batch {settings['batch']}. Beban CPU saat mulai "
        f"(rata-rata 1 menit): {cpu_load()}.")
    curve = train(model, corpus, steps=settings["steps"], batch_size=settings["batch"],
                  lr=settings["lr"], warmup=settings["warmup"],
                  eval_every=settings["eval_every"], clip=settings["clip"],
                  seed=settings["seed"], log=log)
    train_ids, val_ids = data_ids(model, corpus)
    x_val, y_val = windows(val_ids, config.T)
    base = baselines(train_ids, x_val, y_val, config.vocab)
    val = float(curve["val"][-1])
    info = dict(base, val_ce=val, seconds=float(curve["seconds"]),
                cpu_seconds=float(curve["cpu_seconds"]), load=cpu_load(),
                training={k: v for k, v in settings.items()}, corpus=corpus.path.name,
                corpus_chars=len(corpus.train) + len(corpus.val))
    training_loop.report_time(log, info)
    log(f"Cross-entropy validasi (nat per karakter): model {id_float(val, 3)}, "
        f"bigram {id_float(base['bigram_ce'], 3)} (α = {id_float(base['bigram_alpha'], 2)}), "
        f"unigram {id_float(base['unigram_ce'], 3)} (entropi unigram "
        f"{id_float(base['unigram_entropy'], 3)}).")
    checks = training_loop.time_checks(info) + targets(info)
    training_loop.report_targets(log, checks, info)
    return model, curve, info, checks


def run_experiment(*, log=print, corpus=None, steps=None):
    """Eksperimen √d_k: model yang sama, dengan dan tanpa pembagian, seed yang sama.
    Mengembalikan dict hasil (ditulis oleh ``atensi.tasks.runner``)."""
    corpus = corpus or corpus_mod.load()
    settings = dict(SKALA_TRAINING)
    if steps is not None:
        settings["steps"] = steps
        settings["eval_every"] = max(1, min(settings["eval_every"], steps))
    runs = {}
    for scale in (True, False):
        config = Config(vocab=len(corpus.chars), **dict(SKALA_MODEL, scale=scale))
        model = TinyGPT(config, corpus.chars)
        log(f"--- {'dengan' if scale else 'tanpa'} pembagian √d_k (d_k = {config.d_k}) ---")
        curve = train(model, corpus, steps=settings["steps"], batch_size=settings["batch"],
                      lr=settings["lr"], warmup=settings["warmup"],
                      eval_every=settings["eval_every"], clip=settings["clip"],
                      seed=settings["seed"], log=log, entropy=True)
        runs["dengan" if scale else "tanpa"] = {
            k: (v.tolist() if isinstance(v, np.ndarray) else float(v)) for k, v in curve.items()}
    result = {"model": SKALA_MODEL, "training": settings, "d_k": SKALA_MODEL["d_model"]
              // SKALA_MODEL["n_head"], "corpus": corpus.path.name, "runs": runs,
              "load": cpu_load()}
    a, b = runs["dengan"]["val"][-1], runs["tanpa"]["val"][-1]
    log(f"Loss validasi akhir: dengan √d_k {id_float(a, 3)}, tanpa {id_float(b, 3)}.")
    return result


def check_experiment_file(result, path, remake):
    """Hasil ``--experiment skala`` yang dibaca dari ``path``: kurva setiap lari dan
    isinya diperiksa; selain itu ``ValueError`` yang menyebut berkasnya."""
    try:
        checked = result_checks.check_experiment(result, "result")
        return result_checks.check_skala_experiment(checked, None)
    except (TypeError, ValueError) as err:
        detail = str(err).split(" Buat dengan:")[0]
        raise ValueError(f"Berkas eksperimen '{path}' berisi JSON yang bukan hasil eksperimen "
                         f"√d_k: {detail} Buat ulang dengan: {remake}") from None


def main(argv=None) -> int:
    """Perintah ``python -m atensi.train``, dibuat dari daftar ``atensi.tasks``: setiap
    tugas terdaftar adalah satu pilihan ``--task``, setiap eksperimennya satu pilihan
    ``--experiment``. Aturan berkas buku: ``atensi.tasks.runner``."""
    registered = tasks.all_tasks()
    default = registered[0]
    experiments = [t for t in registered if t.experiment]
    parser = Parser(
        prog=tasks.COMMAND,
        description="Latih model kecil buku ini (deterministik dari seed).",
        usage_line=f"{tasks.COMMAND} [--quick] [--task {'|'.join(t.name for t in registered)}] "
                   f"[--experiment {'|'.join(t.experiment for t in experiments)}] [--steps N] "
                   "[--out BERKAS]")
    parser.add_argument("--quick", action="store_true",
                        help=f"hanya {default.quick['steps']} langkah (bawaan tugas "
                        f"{default.name}); tidak menulis berkas kecuali --out")
    parser.add_argument("--experiment", choices=[t.experiment for t in experiments],
                        help="; ".join(f"{t.experiment}: {t.experiment_summary}"
                                       for t in experiments))
    parser.add_argument("--task", choices=[t.name for t in registered], default=None,
                        help="; ".join(f"{t.name}: {t.summary} -> results/{t.weights.name}"
                                       + (" (bawaan)" if t is default else "")
                                       for t in registered))
    parser.add_argument("--out", help="berkas tujuan, bukan berkas buku (bawaan: berkas buku "
                        "untuk pelatihan penuh; berkas bertanggal di results/ untuk --steps)")
    parser.add_argument("--steps", type=int, help="jumlah langkah (mengganti bawaan)")
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        parser.fail(f"--steps harus bilangan bulat >= 1, tetapi yang diterima {args.steps}")
    if args.quick and args.experiment:
        parser.fail("--quick tidak berlaku untuk --experiment; pakai --steps N")
    if args.experiment is not None:
        owner = tasks.by_experiment(args.experiment).name
        if args.task is not None and args.task != owner:
            parser.fail(f"--task {args.task} dan --experiment {args.experiment} saling "
                        f"bertentangan: eksperimen {args.experiment} melatih model tugas "
                        f"{owner}. Pilih salah satu, misalnya --experiment {args.experiment} saja")
        args.task = owner
    args.task = args.task or default.name
    suffix = ".json" if args.experiment else ".npz"
    if args.out is not None:
        args.out = str(Path(args.out).expanduser())  # '~/q.npz' is the home folder
        try:
            runner.refuse_shipped(args.out)
            files.check_output_path(args.out, "--out", suffix)
        except ValueError as err:
            parser.fail(str(err))
    try:
        runner.run(args.task, experiment=args.experiment is not None, quick=args.quick,
                   steps=args.steps, out=args.out)
    except (ValueError, TypeError, OSError, MemoryError) as err:
        training_loop.release_reservations()
        print(f"{tasks.COMMAND}: {err}", file=sys.stderr)
        return 1
    except BaseException:
        training_loop.release_reservations()
        raise
    return 0


if __name__ == "__main__":
    from .arguments import run_command

    run_command(main, tasks.COMMAND)
