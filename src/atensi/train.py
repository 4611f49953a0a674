"""Melatih model kecil (``atensi.model``) pada prosa buku ini.

    python -m atensi.train                     pelatihan penuh -> results/model_kecil.npz
    python -m atensi.train --quick             beberapa puluh langkah, tanpa menulis berkas
    python -m atensi.train --experiment skala  eksperimen √d_k -> results/eksperimen_skala.json

Semuanya deterministik dari ``seed``: bobot awal dari ``Config.seed``, urutan
batch dari ``seed`` pelatihan. Data dibaca dari salinan beku
``results/korpus.txt`` (``atensi.corpus``), bukan dari bab yang sedang disunting.

Di akhir pelatihan penuh skrip mencetak tiga angka pada teks validasi yang
sama: cross-entropy model, model bigram karakter (dengan smoothing terbaik
untuk validasi, jadi pembanding yang keras), dan entropi unigram, lalu
memeriksa target: model < bigram dan model ≤ 0,7 × unigram.
"""

from __future__ import annotations

import os
import sys

if "numpy" not in sys.modules:
    # Small matrices: one BLAS thread is as fast on a quiet 2-core machine and
    # much faster on a busy one (threads that wait for each other spin).
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import contextlib
import ctypes
import glob
import json
import math
import time
from pathlib import Path

import numpy as np

from . import corpus as corpus_mod
from . import files
from . import validation as _val
from .arguments import Parser
from .formatting import id_float, id_int
from .model import Adam, Config, TinyGPT

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "results" / "model_kecil.npz"
EXPERIMENT = ROOT / "results" / "eksperimen_skala.json"

MODEL = dict(T=64, d_model=64, n_head=4, n_layer=2, d_mlp=256, scale=True, seed=0)
TRAINING = dict(steps=1000, batch=32, lr=4e-3, warmup=50, eval_every=100, clip=1.0, seed=0)
QUICK = dict(TRAINING, steps=40, eval_every=20)
# √d_k experiment: one head of width 64 per layer (d_k = 64, ANDREA's), with
# and without scaling, same seeds.
SKALA_MODEL = dict(MODEL, n_head=1)
SKALA_TRAINING = dict(TRAINING, steps=500, eval_every=25)


def _openblas_threads():
    """(get, set) of the OpenBLAS bundled with NumPy, or None when not found."""
    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get, set_ in (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                          ("openblas_get_num_threads", "openblas_set_num_threads")):
            if hasattr(lib, get) and hasattr(lib, set_):
                return getattr(lib, get), getattr(lib, set_)
    return None


@contextlib.contextmanager
def one_blas_thread():
    """Satu thread BLAS selama blok ini (matriks model kecil: lebih cepat, tidak
    berebut CPU). Tidak berbuat apa-apa bila OpenBLAS NumPy tidak ditemukan."""
    found = _openblas_threads()
    before = found[0]() if found else None
    if found:
        found[1](1)
    try:
        yield
    finally:
        if found and before:
            found[1](before)


def data_ids(model: TinyGPT, corpus):
    return model.encode(corpus.train), model.encode(corpus.val)


def batch(ids, T, B, rng):
    """B potongan acak sepanjang T: masukan x dan target y (x digeser satu)."""
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


def learning_rate(step, steps, lr, warmup):
    """Naik linear selama ``warmup`` langkah, lalu turun kosinus ke 0,1 × lr."""
    step = _val.check_int(step, "step", low=0)
    steps = _val.check_int(steps, "steps", low=1)
    lr = _val.check_positive(lr, "lr")
    warmup = _val.check_int(warmup, "warmup", low=0)
    if step <= warmup and warmup > 0:  # warmup = 0: the cosine starts at once
        return lr * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _clip(grads, limit):
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if norm > limit:
        factor = np.float32(limit / norm)
        for g in grads.values():
            g *= factor
    return norm


def train(model: TinyGPT, corpus, *, steps, batch_size=16, lr=3e-3, warmup=50,
          eval_every=100, clip=1.0, seed=0, log=print, entropy=False, attention=None,
          attention_backward=None):
    """Latih ``model`` di tempat; mengembalikan kurva (dict array).

    Kurva: ``step``, ``train`` (loss batch setiap langkah), ``val_step``,
    ``val`` (cross-entropy validasi), ``grad_norm``, dan bila ``entropy``:
    ``entropy`` (entropi atensi rata-rata per layer, pada potongan validasi).
    ``log``: fungsi cetak (``None`` = diam).
    """
    for name, value in (("steps", steps), ("batch_size", batch_size), ("eval_every", eval_every)):
        _val.check_int(value, name, low=1)
    _val.check_int(warmup, "warmup", low=0)
    _val.check_positive(lr, "lr")
    _val.check_positive(clip, "clip")
    _val.check_int(seed, "seed", low=0)
    if log is not None and not callable(log):
        raise TypeError(f"Argumen 'log' harus fungsi cetak (misalnya print) atau None, tetapi "
                        f"yang diterima {log!r} ({type(log).__name__}).")
    if not isinstance(model, TinyGPT):
        raise TypeError(f"Argumen 'model' harus atensi.model.TinyGPT, tetapi yang diterima "
                        f"{type(model).__name__}.")
    _check_corpus(corpus)
    train_ids, val_ids = data_ids(model, corpus)
    T = model.config.T
    for name, ids in (("corpus.train", train_ids), ("corpus.val", val_ids)):
        if len(ids) < T + 2:
            raise ValueError(
                f"Teks '{name}' hanya {len(ids)} karakter, padahal satu potongan butuh T + 2 = "
                f"{T + 2} karakter (T = {T}). Pakai teks yang lebih panjang, atau model dengan "
                "T lebih kecil.")
    x_val, y_val = windows(val_ids, T)
    rng = np.random.default_rng(seed)
    opt = Adam(model.params, lr=lr)
    curve = {k: [] for k in ("step", "train", "grad_norm", "val_step", "val", "entropy")}
    start, cpu_start = time.perf_counter(), time.process_time()

    def checkpoint(step):
        curve["val_step"].append(step)
        curve["val"].append(evaluate(model, x_val, y_val))
        if entropy:
            curve["entropy"].append(model.attention_entropy(x_val[:8]))
        if log:
            last = id_float(curve["train"][-1], 3) if curve["train"] else "  –  "
            log(f"langkah {step:>5}/{steps}  loss latih {last}  "
                f"loss validasi {id_float(curve['val'][-1], 3)}  "
                f"({id_float(time.perf_counter() - start, 1)} s)")

    with one_blas_thread():
        _loop(model, train_ids, T, steps, batch_size, rng, opt, curve, checkpoint, lr, warmup,
              eval_every, clip, attention, attention_backward)
    out = {k: np.asarray(v, dtype=np.float64) for k, v in curve.items() if len(v)}
    out["seconds"] = np.float64(time.perf_counter() - start)
    out["cpu_seconds"] = np.float64(time.process_time() - cpu_start)
    return out


def _check_corpus(corpus) -> None:
    if not all(isinstance(getattr(corpus, name, None), str) for name in ("train", "val")):
        raise TypeError(
            f"Argumen 'corpus' harus atensi.corpus.Corpus (dengan teks .train dan .val), tetapi "
            f"yang diterima {type(corpus).__name__}. Baca dengan atensi.corpus.load().")


def _loop(model, train_ids, T, steps, batch_size, rng, opt, curve, checkpoint, lr, warmup,
          eval_every, clip, attention, attention_backward):
    checkpoint(0)
    for step in range(1, steps + 1):
        x, y = batch(train_ids, T, batch_size, rng)
        loss, grads = model.loss_and_grads(x, y, attention=attention,
                                           attention_backward=attention_backward)
        curve["grad_norm"].append(_clip(grads, clip))
        opt.step(grads, lr=learning_rate(step, steps, lr, warmup))
        curve["step"].append(step)
        curve["train"].append(loss)
        if step % eval_every == 0 or step == steps:
            checkpoint(step)


def _load_text():
    try:
        return f"{id_float(os.getloadavg()[0], 1)}"
    except OSError:
        return "tidak diketahui"


def dated_path(path) -> Path:
    """``results/model_kecil.npz`` → ``results/model_kecil-20261201-091500.npz`` (UTC)."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return path.with_name(f"{path.stem}-{stamp}{path.suffix}")


def run_training(*, quick=False, out=None, log=print, corpus=None, steps=None, shipped=None):
    """Pelatihan penuh (atau ``quick``): mencetak kemajuan dan target, menulis bobot.

    ``out``: berkas bobot (``None`` = tidak ditulis). ``shipped``: berkas milik
    buku (``results/model_kecil.npz``); ditulis hanya bila semua target tercapai,
    bila tidak bobotnya masuk ke berkas bertanggal di sebelahnya.
    """
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
        f"(rata-rata 1 menit): {_load_text()}.")
    curve = train(model, corpus, steps=settings["steps"], batch_size=settings["batch"],
                  lr=settings["lr"], warmup=settings["warmup"],
                  eval_every=settings["eval_every"], clip=settings["clip"],
                  seed=settings["seed"], log=log)
    train_ids, val_ids = data_ids(model, corpus)
    x_val, y_val = windows(val_ids, config.T)
    base = baselines(train_ids, x_val, y_val, config.vocab)
    val = float(curve["val"][-1])
    uni = min(base["unigram_entropy"], base["unigram_ce"])
    info = dict(base, val_ce=val, seconds=float(curve["seconds"]),
                cpu_seconds=float(curve["cpu_seconds"]), load=_load_text(),
                training={k: v for k, v in settings.items()}, corpus=corpus.path.name,
                corpus_chars=len(corpus.train) + len(corpus.val))
    log("")
    log(f"Selesai dalam {id_float(info['seconds'], 1)} s; waktu CPU proses "
        f"{id_float(info['cpu_seconds'], 1)} s (beban CPU sekarang {info['load']}).")
    log(f"Cross-entropy validasi (nat per karakter): model {id_float(val, 3)}, "
        f"bigram {id_float(base['bigram_ce'], 3)} (α = {id_float(base['bigram_alpha'], 2)}), "
        f"unigram {id_float(base['unigram_ce'], 3)} (entropi unigram "
        f"{id_float(base['unigram_entropy'], 3)}).")
    checks = [
        ("waktu jam dinding ≤ 120 s", info["seconds"] <= 120),
        ("waktu CPU ≤ 120 s", info["cpu_seconds"] <= 120),
        ("model < bigram", val < base["bigram_ce"]),
        (f"model ≤ 0,7 × unigram = {id_float(0.7 * uni, 3)}", val <= 0.7 * uni),
    ]
    log("Target: " + "; ".join(f"{name}: {'ya' if ok else 'TIDAK'}" for name, ok in checks))
    if info["seconds"] > 120 >= info["cpu_seconds"]:
        log("Waktu jam dinding melebihi 120 s karena CPU sedang dipakai proses lain; "
            "pelatihan memakai satu thread, jadi di mesin yang tenang waktunya mendekati "
            "waktu CPU.")
    if shipped is not None:
        out = shipped
        if not all(ok for _, ok in checks):
            out = dated_path(shipped)
            log(f"Tidak semua target tercapai, jadi {shipped} milik buku tidak ditimpa.")
    if out is not None:
        model.save(out, curve=curve, info=info)
        log(f"Bobot ditulis ke {out}.")
    return model, curve, info


def run_experiment(*, out=None, log=print, corpus=None, steps=None):
    """Eksperimen √d_k: model yang sama, dengan dan tanpa pembagian, seed yang sama."""
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
              "load": _load_text()}
    a, b = runs["dengan"]["val"][-1], runs["tanpa"]["val"][-1]
    log(f"Loss validasi akhir: dengan √d_k {id_float(a, 3)}, tanpa {id_float(b, 3)}.")
    if out is not None:
        files.write_text(out, json.dumps(result, ensure_ascii=False, indent=1))
        log(f"Hasil ditulis ke {out}.")
    return result


def load_experiment(path=None):
    """Baca hasil eksperimen √d_k (JSON dari ``--experiment skala``)."""
    path = files.as_path(path) if path is not None else EXPERIMENT
    text = files.read_text(path, "eksperimen", "python -m atensi.train --experiment skala")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"Berkas eksperimen '{path}' rusak ({err}). Buat ulang dengan: "
            "python -m atensi.train --experiment skala"
        ) from err


def main(argv=None) -> int:
    """Hanya pelatihan penuh bawaan yang menulis berkas milik buku (dan hanya bila
    targetnya tercapai); ``--steps`` tanpa ``--out`` menulis berkas bertanggal."""
    parser = Parser(
        prog="python -m atensi.train",
        description="Latih model kecil pada prosa buku ini (deterministik dari seed).",
        usage_line="python -m atensi.train [--quick] [--task teks|ingat] "
                   "[--experiment skala|ingat] [--steps N] [--out BERKAS]")
    parser.add_argument("--quick", action="store_true",
                        help=f"hanya {QUICK['steps']} langkah; tidak menulis berkas kecuali --out")
    parser.add_argument("--experiment", choices=["skala", "ingat"],
                        help="skala: eksperimen √d_k model karakter; ingat: ablasi model kata")
    parser.add_argument("--task", choices=["teks", "ingat"], default="teks",
                        help="teks: model karakter pada prosa buku (bawaan); ingat: model kata "
                        "pada tugas associative recall -> results/model_ingat.npz")
    parser.add_argument("--out", help="berkas tujuan (bawaan: results/model_kecil.npz atau "
                        "results/eksperimen_skala.json untuk pelatihan penuh; berkas bertanggal "
                        "di results/ untuk --steps)")
    parser.add_argument("--steps", type=int, help="jumlah langkah (mengganti bawaan)")
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        parser.fail(f"--steps harus bilangan bulat >= 1, tetapi yang diterima {args.steps}")
    if args.quick and args.experiment:
        parser.fail("--quick tidak berlaku untuk --experiment; pakai --steps N")
    suffix = ".json" if args.experiment else ".npz"
    if args.out is not None:
        try:
            files.check_output_path(args.out, "--out", suffix)
        except ValueError as err:
            parser.fail(str(err))
    full = not args.quick and args.steps is None
    try:
        if args.experiment == "ingat" or args.task == "ingat":
            from .recall_train import (RECALL_EXPERIMENT, RECALL_WEIGHTS, run_recall,
                                       run_recall_experiment)

            if args.experiment == "ingat":
                out = args.out or (RECALL_EXPERIMENT if full else dated_path(RECALL_EXPERIMENT))
                run_recall_experiment(out=out, steps=args.steps)
            elif args.out or args.quick:
                run_recall(quick=args.quick, out=args.out, steps=args.steps)
            else:
                run_recall(out=RECALL_WEIGHTS if full else dated_path(RECALL_WEIGHTS),
                           steps=args.steps)
        elif args.experiment == "skala":
            out = args.out or (EXPERIMENT if full else dated_path(EXPERIMENT))
            run_experiment(out=out, steps=args.steps)
        elif args.out or args.quick:
            run_training(quick=args.quick, out=args.out, steps=args.steps)
        elif full:
            run_training(shipped=WEIGHTS)
        else:
            run_training(out=dated_path(WEIGHTS), steps=args.steps)
    except (ValueError, TypeError, FileNotFoundError, MemoryError) as err:
        print(f"python -m atensi.train: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
