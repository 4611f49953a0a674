"""Content of the chapters: what each page must show, checked in its source and
in the built book.

Source checks read ``chapters/*.md`` and run in a fraction of a second. Checks
on the rendered pages use the ``built_book`` fixture (tests/conftest.py) and
are marked ``book``.
"""

from __future__ import annotations

import json
import re

import jupytext
import pytest
from bs4 import BeautifulSoup

from conftest import ROOT

CHAPTERS = ROOT / "chapters"


def chapter_text(name: str) -> str:
    return (CHAPTERS / f"{name}.md").read_text(encoding="utf-8")


def code_sources(name: str) -> list[str]:
    notebook = jupytext.read(CHAPTERS / f"{name}.md")
    return [c.source for c in notebook.cells if c.cell_type == "code"]


def page_soup(built_book, name: str) -> BeautifulSoup:
    path = built_book / "chapters" / f"{name}.html"
    assert path.is_file(), f"chapters/{name}.html tidak dibangun"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def main_text(soup: BeautifulSoup) -> str:
    main = soup.select_one("main") or soup
    return " ".join(main.get_text(" ").split())


# ===========================================================================
# Helper F: matriks_skor, skala_akar_dk, mask_kausal
# ===========================================================================

F_CHAPTERS = {
    "matriks_skor": ("matriks-skor", "Matriks Skor", "scores.cu"),
    "skala_akar_dk": ("skala-akar-dk", "Mengapa Membagi dengan √d_k", "scores.cu"),
    "mask_kausal": ("mask-kausal", "Mask Kausal", "causal_mask.cu"),
    "posisi": ("posisi", "Posisi", "rope.cu"),
}


def _rng(seed=0):
    import numpy as np

    return np.random.default_rng(seed)


# --- The chapters' sources ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(F_CHAPTERS))
def test_f_label_title_sections_and_exercises(name):
    label, title, _ = F_CHAPTERS[name]
    text = chapter_text(name)
    assert f"({label})=\n# {title}\n" in text
    for heading in ("## Mengapa langkah ini ada", "## Matematika", "## Ringkasan", "## Latihan"):
        assert any(line.startswith(heading) for line in text.splitlines()), (
            f"{name}: bagian '{heading}' tidak ada"
        )
    exercises = re.findall(r"```\{exercise\}\n:label: (\S+)", text)
    solutions = re.findall(r"```\{solution\} (\S+)\n:class: dropdown", text)
    assert len(exercises) >= 3 and sorted(exercises) == sorted(solutions)
    answers = re.findall(r"\{solution\}.*?\n`{3,4}\n", text, re.S)
    assert any("{glue:text}" in a for a in answers), f"{name}: tidak ada latihan numerik"
    assert re.search(r"^\$\$ \(eq-[\w-]+\)$", text, re.M), f"{name}: tidak ada persamaan berlabel"


@pytest.mark.parametrize("name", sorted(F_CHAPTERS))
def test_f_every_glued_number_is_computed_in_the_chapter(name):
    text = chapter_text(name)
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    code = "\n".join(code_sources(name))
    defined = set(re.findall(r"glue\(\s*f?\"([^\"{]+)\"", code))
    # glue(f"akar_{d}", ...) inside a loop over d_k = 64, 256, 4096
    for prefix in re.findall(r"glue\(\s*f\"([^\"{]+)\{d\}\"", code):
        defined |= {f"{prefix}{d}" for d in (64, 256, 4096)}
    assert used, f"{name}: tidak ada angka dari sel yang dijalankan"
    assert used <= defined, f"{name}: angka di prosa tanpa sel yang menghitungnya: {used - defined}"


@pytest.mark.parametrize("name", sorted(F_CHAPTERS))
def test_f_chapters_use_library_kernels_and_figures(name):
    code = "\n".join(code_sources(name))
    assert "np.random.default_rng(0)" in code and "np.random.seed" not in code
    assert "loops." in code
    assert "plots." in code, f"{name}: tidak ada gambar dari atensi.plots"
    text = chapter_text(name)
    cu_file = F_CHAPTERS[name][2]
    blocks = re.findall(rf"```\{{literalinclude\}} \.\./kernels/{re.escape(cu_file)}\n((?::.*\n)*)", text)
    assert blocks, f"{name}: kernels/{cu_file} tidak ditampilkan"
    source = (ROOT / "kernels" / cu_file).read_text(encoding="utf-8")
    for options in blocks:
        markers = re.findall(r":(?:start-at|end-before|start-after|end-at): \"(.*)\"", options)
        # Excerpts are highlighted; a whole file may be plain text (page weight).
        assert ":language: cuda" in options or (not markers and ":language: text" in options)
        for marker in markers:
            assert marker in source, f"{name}: penanda {marker!r} tidak ada di kernels/{cu_file}"


def test_cuda_on_ramp_covers_what_the_first_kernel_needs():
    """Bab "CUDA dalam 10 Menit" datang sebelum kernel pertama."""
    text = chapter_text("cuda_10_menit")
    code = "\n".join(code_sources("cuda_10_menit"))
    assert "(cuda-10-menit)=\n# CUDA dalam 10 Menit\n" in text
    for needed in ("blockIdx.x * blockDim.x + threadIdx.x", "if (i >= T || j >= T) return;",
                   "__global__", 'extern "C"', "(size_t)", "gridDim.z", "__shfl_down_sync",
                   "__syncwarp()", "__syncthreads()", "__shared__", "Volta"):
        assert needed in text, f"cuda_10_menit: {needed!r} tidak dibahas"
    assert "cuda_plots.thread_grid(" in code and "cudacpu.RawModule(" in code
    # A short readable launcher (file, grid, block, np.int32 arguments), run against the library.
    assert "def luncurkan_skor(" in code and "kernels.kernel_path(" in code
    assert "ravel_multi_index" in code
    assert "tebak dulu" in text.lower() and "assert " in text
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert toc.index("chapters/cuda_10_menit") < toc.index("chapters/matriks_skor")
    skor = chapter_text("matriks_skor")
    assert "cuda_plots.tiling(" in "\n".join(code_sources("matriks_skor"))
    assert "score_grid(" in skor and "filled=" in skor and "bank" in skor


def test_f_explorers_are_in_their_chapters():
    assert "widgets.sharpness()" in "\n".join(code_sources("skala_akar_dk"))
    assert "widgets.mask()" in "\n".join(code_sources("mask_kausal"))


def test_posisi_chapter_shows_the_three_families_and_rope_as_a_step():
    text = chapter_text("posisi")
    code = "\n".join(code_sources("posisi"))
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8").split()
    assert toc.index("chapters/posisi") == toc.index("chapters/mask_kausal") + 3  # "- file:" between
    # Why: permutation equivariance shown, and what the mask leaks.
    assert "causal=False" in code and "Q[acak], K[acak], V[acak]" in code
    assert "reference.causal_mask(np.zeros(" in code
    # The three families, each computed with the library, and ALiBi cited.
    assert 'model.params["wpe"]' in code and "reference.sinusoidal_positions(" in code
    assert "reference.rope(" in code and "offset=" in code
    for citation in ("Vaswani dkk. (2017)", "Su dkk.", "Press dkk. (2022)"):
        assert citation in " ".join(text.split()), citation
    assert "ALiBi" in text and "KV cache" in text
    # RoPE as a step: NumPy source, the thread loop, the kernel run and the explorer.
    for used in ("inspect.getsource(reference._rope)", "inspect.getsource(loops.rope)",
                 "kernels.rope(", "rope_explorer.rope()", "position_plots."):
        assert used in code, used
    # Predict-then-run, a coding task with an assert, and a bug hunt.
    lowered = text.lower()
    assert "tebak dulu" in lowered and "cari *bug*-nya" in lowered
    answers = re.findall(r"\{solution\}.*?\n`{4}\n", text, re.S)
    assert any("assert " in a for a in answers)
    # Comparisons glued into the prose have an assert in their hidden cell.
    hidden = [c for c in jupytext.read(CHAPTERS / "posisi.md").cells
              if c.cell_type == "code" and "remove-cell" in c.metadata.get("tags", [])]
    assert sum("assert " in c.source for c in hidden) >= 6


# --- Matriks Skor: the numbers, from the library --------------------------------


def test_f_scores_per_head_and_memory_of_12_heads():
    import numpy as np

    from atensi import reference
    from atensi.formatting import id_bytes, id_int

    rng = _rng()
    Q, K = rng.standard_normal((2, 12, 1024, 64), dtype=np.float32)
    S = reference.scores(Q, K)
    assert S.shape == (12, 1024, 1024) and S.dtype == np.float32
    assert id_int(S[0].size) == "1.048.576"
    assert id_bytes(S[0].nbytes) == "4 MiB" and id_bytes(S.nbytes) == "48 MiB"
    # scores[i, j] is the dot product of query i with key j, scaled.
    assert np.isclose(S[3, 10, 700], Q[3, 10] @ K[3, 700] / 8, rtol=1e-5, atol=1e-5)


# --- √d_k: spread, sharpness, vanishing gradient ----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("d_k, root", [(64, 8), (256, 16), (4096, 64)])
def test_f_dot_product_spread_is_sqrt_d_k(d_k, root):
    import numpy as np

    from atensi import measures

    spread = measures.dot_product_spread(d_k, n=4000, seed=0)
    assert abs(spread / root - 1) < 0.05
    assert abs(measures.dot_product_spread(d_k, n=4000, seed=0, scale=True) - 1) < 0.05
    # Unit vectors shrink instead: 1/√d_k (the correction the chapter makes).
    u, v = _rng(1).standard_normal((2, 4000, d_k))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert abs(np.std(np.sum(u * v, axis=1)) * root - 1) < 0.05


def _sharpness(d_k, scale, rows=200, keys=64):
    import numpy as np

    from atensi import measures, reference

    rng = _rng(d_k)
    Q = rng.standard_normal((rows, d_k), dtype=np.float32)
    K = rng.standard_normal((keys, d_k), dtype=np.float32)
    A = reference.softmax(reference.scores(Q, K, scale=scale))
    return A.max(axis=1).mean(), measures.entropy(A).mean(), measures.jacobian_norm(A).mean()


def test_f_softmax_sharpens_and_gradient_vanishes_without_scaling():
    dims = (16, 256, 4096)
    raw = [_sharpness(d, False) for d in dims]
    scaled = [_sharpness(d, True) for d in dims]
    p_raw, h_raw, j_raw = zip(*raw)
    p_scaled, h_scaled, j_scaled = zip(*scaled)
    assert p_raw[0] < p_raw[1] < p_raw[2] and p_raw[2] > 0.9
    assert h_raw[0] > h_raw[1] > h_raw[2] and h_raw[2] < 0.2
    assert j_raw[0] > j_raw[1] > j_raw[2]
    # With scaling nothing depends on d_k.
    assert max(p_scaled) - min(p_scaled) < 0.03 and max(h_scaled) - min(h_scaled) < 0.1
    assert max(j_scaled) / min(j_scaled) < 1.1
    assert j_scaled[2] > 3 * j_raw[2]


def test_f_skala_running_example_gradient_to_q_and_references():
    """÷√2 by hand, ∂L/∂Q measured, the √d_k admonition, fixed answers."""
    code = "\n".join(code_sources("skala_akar_dk"))
    text = chapter_text("skala_akar_dk")
    assert "example.qkv()" in code and "plots.score_grid(" in code
    assert "reference.attention_backward(" in code
    assert "{ref}`gradien`" in text and "{ref}`melatih`" in text
    assert "Raffel dkk., 2020" in text and "Yang dkk., 2022" in text and "suspect" in text
    assert "Tebak dulu, lalu jalankan" in text and "sqrt(d_model)" in text
    answer = text.split("{solution} ex-skala-lipat", 1)[1].split("\n````\n", 1)[0]
    assert "```python" in answer and "\nassert " in answer
    # The "divide by d_k" answer builds its own d_k = 64 data.
    answer = text.split("{solution} ex-skala-dk", 1)[1].split("\n````\n", 1)[0]
    assert "standard_normal((200, 64)" in answer


def test_f_gradient_to_q_saturates_without_scaling():
    """Without √d_k most rows get almost no gradient at large d_k; with it, none."""
    import numpy as np

    from atensi import reference

    rng = _rng(3)
    stats = {}
    for d_k in (16, 4096):
        Q, K, V, dO = rng.standard_normal((4, 2, 64, d_k), dtype=np.float32)
        dO /= np.float32(np.sqrt(d_k))
        for scale in (False, True):
            dQ = reference.attention_backward(Q, K, V, dO, causal=False, scale=scale)[0]
            norms = np.linalg.norm(dQ, axis=-1)
            stats[d_k, scale] = (np.median(norms), (norms < 0.01).mean())
    assert stats[16, False][0] > stats[16, True][0]           # small d_k: larger, not smaller
    assert stats[4096, False][0] < 0.01 and stats[4096, False][1] > 0.5
    assert stats[4096, True][1] == 0
    assert 0.5 < stats[4096, True][0] / stats[16, True][0] < 2


def test_f_scaling_by_eight_is_exact_for_d_k_64():
    import numpy as np

    from atensi import loops, reference

    Q, K = _rng().standard_normal((2, 32, 64), dtype=np.float32)
    assert np.array_equal(reference.scores(Q, K, scale=False) / np.float32(8), reference.scores(Q, K))
    small = loops.scores(Q[:4], K[:4], scale=False) / loops.scores(Q[:4], K[:4])
    assert np.all(small == 8.0)


# --- Mask Kausal: the claims, checked by code --------------------------------------


def _leak(attention, causal, T=8, d_model=16, d_k=8):
    """max |Δ output[i]| when token j is replaced, as a (T, T) table D[i, j]."""
    import numpy as np

    rng = _rng()
    X = rng.standard_normal((T, d_model), dtype=np.float32)
    W = rng.standard_normal((3, d_model, d_k), dtype=np.float32) / 4
    other = rng.standard_normal((T, d_model), dtype=np.float32)

    def out(X):
        return np.asarray(attention(*(np.ascontiguousarray(X @ w) for w in W), causal=causal))

    base = out(X)
    D = np.zeros((T, T))
    for j in range(T):
        Xj = X.copy()
        Xj[j] = other[j]
        D[:, j] = np.abs(out(Xj) - base).max(axis=1)
    return D


@pytest.mark.parametrize("path", ["reference", "loops", "kernels"])
def test_f_leak_future_tokens_change_output_only_without_mask(path):
    import numpy as np

    from atensi import kernels, loops, reference

    attention = {
        "reference": reference.attention,
        "loops": loops.attention,
        "kernels": lambda Q, K, V, causal: kernels.attention(Q, K, V, causal=causal, backend="cpu"),
    }[path]
    future = np.triu(np.ones((8, 8), dtype=bool), k=1)
    assert (_leak(attention, causal=False)[future] > 1e-4).all()
    with_mask = _leak(attention, causal=True)
    assert (with_mask[future] == 0).all()           # bit for bit: nothing leaks
    assert (np.diag(with_mask) > 0).all()           # a token still changes its own output


def test_f_minus_1e9_overflows_in_float16_but_not_in_float32():
    import numpy as np

    from atensi import reference

    assert float(np.finfo(np.float16).max) == 65504.0
    with np.errstate(over="ignore"):
        assert np.isneginf(np.float16(-1e9))
        assert np.isfinite(np.float16(-1e4)) and np.isneginf(np.float16(-1e5))
    assert np.float32(-1e9) == -1e9
    # float32, a row with something visible: -1e9 and -inf give the same weights.
    S = _rng().standard_normal((6, 6)).astype(np.float32)
    future = np.triu(np.ones((6, 6), dtype=bool), k=1)
    assert np.array_equal(reference.softmax(np.where(future, np.float32(-1e9), S)),
                          reference.softmax(reference.causal_mask(S)))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_f_fully_masked_row_naive_nan_ours_zero(dtype):
    import numpy as np

    from atensi import reference

    row = np.full(4, -np.inf, dtype=dtype)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.exp(row) / np.exp(row).sum()).all()   # 0 / 0
        assert np.isnan(row - row.max()).all()                   # -inf - (-inf)
    assert (reference.softmax(row) == 0).all()
    # -1e9 in float32: no NaN, but a silent uniform weight on forbidden positions.
    assert np.allclose(reference.softmax(np.full(4, -1e9, dtype=np.float32)), 0.25)


def test_f_kernel_softmax_gives_zeros_for_a_fully_masked_row():
    import numpy as np

    from atensi import kernels

    S = np.full((3, 8), -np.inf, dtype=np.float32)
    S[1, :3] = [0.5, 1.0, -2.0]
    for version in ("v1", "v2"):
        A = kernels.softmax(S, version=version, backend="cpu")
        assert (A[0] == 0).all() and (A[2] == 0).all() and not np.isnan(A).any()
        assert np.isclose(A[1].sum(), 1.0)


def test_f_mask_is_lower_triangular_with_diagonal():
    import numpy as np

    from atensi import reference

    Q, K = _rng().standard_normal((2, 9, 8), dtype=np.float32)
    A = reference.softmax(reference.causal_mask(reference.scores(Q, K)))
    assert np.array_equal(A > 0, np.tril(np.ones((9, 9), dtype=bool)))
    assert np.array_equal(A[0], np.eye(9)[0])
    assert np.allclose(A.sum(axis=1), 1.0)


def test_f_one_masked_pass_equals_generation_prefix_by_prefix():
    import numpy as np

    from atensi import reference

    Q, K, V = _rng().standard_normal((3, 64, 16), dtype=np.float32)
    full = reference.attention(Q, K, V)
    steps = np.stack([reference.attention(Q[: i + 1], K[: i + 1], V[: i + 1])[-1] for i in range(64)])
    assert np.max(np.abs(full - steps)) < 1e-5


def test_f_mask_chapter_kinds_example_and_exercises():
    """Budi peeks at bilang, every kind of mask drawn and applied, bug hunts."""
    code = "\n".join(code_sources("mask_kausal"))
    text = chapter_text("mask_kausal")
    assert "example.qkv()" in code and "masked=True" in code
    for builder in ("masks.causal(", "masks.padding(", "masks.sliding_window(",
                    "masks.prefix_lm(", "masks.apply("):
        assert builder in code, f"mask_kausal: {builder} tidak dipakai"
    # -1e9 is the lesson's generic pseudocode, never attributed to the engine.
    for line in text.splitlines():
        assert not ("1e9" in line and "microgpt" in line), line
    assert "Tebak dulu, lalu jalankan" in text
    assert "np.triu(np.ones((T, T), dtype=bool))" in text and "softmax_sendiri" in text
    answer = text.split("{solution} ex-mask-kernel", 1)[1].split("\n````\n", 1)[0]
    # The reader's kernel runs in the sanitizer child process: a bug gives a report.
    assert "cudacpu.run_in_subprocess(" in answer and 'sanitize="address"' in answer
    assert "\nassert " in answer
    assert "reference.causal_mask(" in answer


def test_f_mask_kinds_from_the_library_give_zero_rows_not_nan():
    import numpy as np

    from atensi import example, masks, reference

    Q, K, _ = example.qkv()
    S = reference.scores(Q, K)
    T = example.T
    dia, budi, ani = example.PRONOUN, example.REFERENT, example.OTHER_NAME
    window = reference.softmax(masks.apply(S, masks.sliding_window(T, 2)))
    assert window[dia, ani] == 0 and window[dia, budi] > 0.5   # dia loses Ani, keeps Budi
    prefix = reference.softmax(masks.apply(S, masks.prefix_lm(T, 3)))
    assert prefix[ani, budi] > 0.5                             # Ani reads Budi
    pad = masks.combine(masks.padding([T, 2], T), masks.causal(T))
    A = reference.softmax(masks.apply(np.stack([S, S]), pad))
    assert not np.isnan(A).any() and (A[1, 2:] == 0).all()


def test_f_mask_kernel_and_fused_scores_mask_match_numpy():
    import numpy as np

    from atensi import kernels, reference

    Q, K = _rng().standard_normal((2, 2, 50, 24), dtype=np.float32)   # 50: not a multiple of 16
    expected = reference.causal_mask(reference.scores(Q, K))
    assert np.array_equal(kernels.causal_mask(reference.scores(Q, K), backend="cpu"), expected)
    fused = kernels.scores(Q, K, causal=True, backend="cpu")
    assert np.array_equal(np.isneginf(fused), np.isneginf(expected))
    visible = np.isfinite(expected)
    assert np.max(np.abs(fused[visible] - expected[visible])) < 1e-5


# --- The built book --------------------------------------------------------------


def _table_rows(soup):
    return [[td.get_text(" ", strip=True) for td in tr.select("td")] for tr in soup.select("main table tr")]


@pytest.mark.book
def test_f_rendered_pages_show_the_seed_numbers(built_book):
    skor = page_soup(built_book, "matriks_skor")
    text = main_text(skor)
    assert "1.048.576" in text and "(12, 1024, 1024)" in text and "48 MiB" in text
    assert "12 head" in text
    assert "{glue" not in text and "glue:text" not in text
    assert skor.select("main img"), "matriks_skor: tidak ada gambar"

    skala = page_soup(built_book, "skala_akar_dk")
    rows = _table_rows(skala)
    for d_k, root in (("64", "8"), ("256", "16"), ("4.096", "64")):
        assert any(r[:2] == [d_k, root] for r in rows), f"baris d_k = {d_k}, √d_k = {root} tidak tampil"
    text = main_text(skala)
    assert "Attention Is All You Need" in text
    assert "{glue" not in text and len(skala.select("main img")) >= 3
    assert skala.select_one('[data-explorer="ketajaman"]') is not None

    mask = page_soup(built_book, "mask_kausal")
    text = main_text(mask)
    assert "np.float16(-1e9) : -inf" in text
    assert "softmax naif, baris -inf : (nan; nan; nan; nan)" in text
    assert "reference.softmax, baris -inf : (0,00; 0,00; 0,00; 0,00)" in text
    assert "0 (sama persis)" in text and "{glue" not in text
    assert mask.select_one('[data-explorer="mask"]') is not None


# ===========================================================================
# Helper G: softmax, jumlah_v, sintesis, Lanjutan (flash_v2, kinerja), glosarium
# ===========================================================================

G_CHAPTERS = {
    "softmax": ("softmax", "Softmax"),
    "jumlah_v": ("jumlah-v", "Jumlah Tertimbang Vektor *Value*"),
    "sintesis": ("sintesis", "Menyatukan Langkah: Satu *Forward Pass*"),
    "flash_v2": ("flash-v2", "Dari v1 ke v2: Cara FlashAttention-2"),
    "kinerja": ("kinerja", "Kinerja: Laporan Kompilator, *Roofline*, dan *Tensor Core*"),
}
# Every page's label, "(label)=" right above its title.
ALL_LABELS = sorted(
    label for path in CHAPTERS.glob("*.md")
    for label in re.findall(r"^\((\S+)\)=\n# ", path.read_text(encoding="utf-8"), re.M)
)
# The reference functions a chapter must import, never define again.
LIBRARY_NAMES = ("scores", "causal_mask", "softmax", "weighted_sum", "attention",
                 "attention_blocked")


@pytest.mark.parametrize("name", sorted(G_CHAPTERS))
def test_g_label_title_and_sections(name):
    label, title = G_CHAPTERS[name]
    text = chapter_text(name)
    assert f"({label})=\n# {title}\n" in text
    for heading in ("## Ringkasan", "## Latihan"):
        assert f"\n{heading}\n" in text, f"{name}: '{heading}' tidak ada"


@pytest.mark.parametrize("name", sorted(G_CHAPTERS))
def test_g_exercises_have_hidden_solutions(name):
    text = chapter_text(name)
    exercises = re.findall(r"```\{exercise\}\n:label: (\S+)", text)
    solutions = re.findall(r"```\{solution\} (\S+)\n:class: dropdown", text)
    assert len(exercises) >= 3, f"{name}: hanya {len(exercises)} latihan"
    assert sorted(exercises) == sorted(solutions), f"{name}: latihan tanpa jawaban tersembunyi"
    # At least one numerical exercise: its answer is computed by a hidden cell.
    answers = re.findall(r"\{solution\}.*?\n`{3,4}\n", text, re.S)
    assert any("{glue:text}" in a for a in answers), (
        f"{name}: tidak ada latihan numerik yang jawabannya dihitung kode"
    )


@pytest.mark.parametrize("name", sorted(G_CHAPTERS) + ["glosarium"])
def test_g_every_glued_name_is_computed_in_the_chapter(name):
    text = chapter_text(name)
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    defined = set(re.findall(r"glue\(\s*\"([^\"]+)\"", "\n".join(code_sources(name))))
    assert used <= defined, f"{name}: angka di prosa tanpa sel yang menghitungnya: {used - defined}"
    if name != "glosarium":
        assert used, f"{name}: tidak ada angka dari sel yang dijalankan"


@pytest.mark.parametrize("name", sorted(set(F_CHAPTERS) | set(G_CHAPTERS) - {"glosarium"}))
def test_chapters_import_the_library_and_never_redefine_it(name):
    code = "\n".join(code_sources(name))
    assert "from atensi import" in code
    for fn in LIBRARY_NAMES:
        assert not re.search(rf"^\s*def {fn}\(", code, re.M), f"{name} mendefinisikan ulang {fn}"
    # Kernels run through atensi.kernels, with the backend and the largest
    # difference from NumPy printed.
    assert "kernels." in code and "resolve_backend(None)" in code
    assert "selisih terbesar" in code


@pytest.mark.parametrize(
    "name, cu_file",
    [("softmax", "softmax.cu"), ("jumlah_v", "weighted_sum.cu"), ("sintesis", "attention_fused.cu"),
     ("flash_v2", "attention_fused.cu"), ("kinerja", "attention_fused.cu")],
)
def test_g_literalinclude_markers_exist_in_the_kernel(name, cu_file):
    text = chapter_text(name)
    blocks = re.findall(rf"```\{{literalinclude\}} \.\./kernels/{re.escape(cu_file)}\n((?::.*\n)*)", text)
    assert blocks, f"{name}: kernels/{cu_file} tidak ditampilkan"
    source = (ROOT / "kernels" / cu_file).read_text(encoding="utf-8")
    for options in blocks:
        markers = re.findall(r":(?:start-at|end-before|start-after|end-at): \"(.*)\"", options)
        # Excerpts are highlighted; a whole file may be plain text (page weight).
        assert ":language: cuda" in options or (not markers and ":language: text" in options)
        for marker in markers:
            marker = marker.replace('\\"', '"')
            assert marker in source, f"{name}: penanda {marker!r} tidak ada di kernels/{cu_file}"


def test_g_equation_references_resolve():
    defined = set()
    for path in CHAPTERS.glob("*.md"):
        defined |= set(re.findall(r"^\$\$ \((eq-[\w-]+)\)$", path.read_text(encoding="utf-8"), re.M))
    for name in list(G_CHAPTERS) + ["glosarium"]:
        used = set(re.findall(r"\{eq\}`(eq-[\w-]+)`", chapter_text(name)))
        assert used <= defined, f"{name}: persamaan tidak dikenal {used - defined}"


def test_g_softmax_shows_properties_overflow_kernels_and_temperature():
    text = chapter_text("softmax")
    code = "\n".join(code_sources("softmax"))
    # Three properties, checked by code on rows of a real (T, T) matrix.
    assert "Tidak negatif" in text and "berjumlah 1" in text and "Monoton" in text
    assert "galat_jumlah" in code and "pelanggaran" in code
    # Overflow of the naive formula, and the fix.
    assert "softmax_naif" in code and "np.isnan" in code
    assert "{eq}`eq-softmax-geser`" in text and "(eq-softmax-stabil)" in text
    # Both kernel versions, explained and run.
    for version in ('"v1"', '"v2"'):
        assert version in code
    for concept in ("__syncthreads()", "__shfl_xor_sync", "*shared memory*", "*warp shuffle*"):
        assert concept in text
    # √d_k as a temperature.
    assert "(eq-softmax-suhu)" in text and "plots.softmax_temperature" in code
    # The running example by hand, float16's sum overflow counted as
    # NaN rows and zero rows, bf16 and mixed precision, the cost counted, the
    # warp model since Volta, and the exercise kinds.
    assert "example.qkv()" in code and "plots.softmax_bars(" in code
    assert "batas_jumlah16" in code and "semua_nol" in code
    assert "bfloat16" in text and "Micikevicius dkk." in text
    assert "langkah_per_baris" in code and "sm_op_rasio" in code
    assert "Volta" in text and "__syncwarp()" in text and "cuda-10-menit" in text
    assert "Tebak dulu, lalu jalankan" in text and "reference.softmax(S, axis=0)" in text
    answer = text.split("{solution} latihan-softmax-kode", 1)[1].split("\n````\n", 1)[0]
    assert "```python" in answer and "\nassert " in answer


def test_g_jumlah_v_shows_shapes_heads_and_w_o():
    text = chapter_text("jumlah_v")
    code = "\n".join(code_sources("jumlah_v"))
    assert "(eq-jumlah-v-baris)" in text and "(eq-jumlah-v-matriks)" in text
    assert "n_head = 768, 12" in code and "W_O" in code
    assert "np.concatenate" in code  # concatenation of the heads, checked
    for topic in ("Atensi multi-*head*", "koneksi\n  residual", "layer norm", "MLP"):
        assert topic in text, f"jumlah_v: penunjuk ke topik berikutnya '{topic}' tidak ada"
    assert "widgets.row()" in code
    # The running example by hand and drawn; coding tasks with asserts.
    assert "example.qkv()" in code and "plots.weighted_sum_rows(" in code
    assert "Tebak dulu, lalu jalankan" in text
    for task in ("def jumlah_kausal(", "def pisah_head(", "def gabung_head("):
        assert task in text, f"jumlah_v: tugas kode '{task}' tidak ada"


def test_g_sintesis_compares_every_path_and_measures_memory():
    text = chapter_text("sintesis")
    code = "\n".join(code_sources("sintesis"))
    assert "(eq-sintesis-satu-baris)" in text and "(eq-sintesis-online)" in text
    for call in ("reference.attention(", "reference.attention_blocked(", "loops.attention(",
                 "kernels.attention(", "fused=True", "kernels.softmax(", "kernels.weighted_sum("):
        assert call in code, f"sintesis: {call} tidak dipakai"
    assert "assert selisih_terbesar < 1e-5" in code
    assert "tracemalloc" in code and "plots.memory_growth" in code
    # The student track ends with fused v1: FlashAttention-2 and performance
    # live in the optional part, which the chapter points to.
    assert "fused_version" not in code and "compile_report" not in code
    assert "bench.run(" not in code
    assert "{ref}`flash-v2`" in text and "{ref}`kinerja`" in text
    # The readout is computed with the book's vocabulary assumption, not called small.
    assert "flop_readout = 2 * T * d_model * kosakata_andrea" in code
    assert "assert 4 < readout_kali < 5" in code
    # The five-line exercise rejects a softmax that skips the max subtraction.
    answer = text.split("{solution} latihan-sintesis-lima-baris", 1)[1].split("\n````\n", 1)[0]
    assert "besar = (400 * Qu, Ku, Vu)" in answer


@pytest.mark.parametrize("name", sorted(G_CHAPTERS))
def test_g_glue_calls_sit_in_hidden_cells(name):
    notebook = jupytext.read(CHAPTERS / f"{name}.md")
    for cell in notebook.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "code" and "glue(" in cell.source and "atensi-setup" not in tags:
            assert tags & {"remove-cell", "remove-input"}, (
                f"{name}: glue() di sel yang terlihat pembaca: {cell.source.splitlines()[0]}"
            )


def test_g_flash_v2_explains_the_seven_ideas_and_runs_both_versions():
    text = chapter_text("flash_v2")
    code = "\n".join(code_sources("flash_v2"))
    assert "(eq-flash-v2-ubin)" in text and "{eq}`eq-sintesis-online`" in text
    for n in range(1, 8):
        assert f"### Gagasan {n}:" in text
    assert 'fused_version=versi' in code and "kernels.fused_splits(" in code
    assert "plots.work_map(peta" in code
    assert "Lanjutan" in text.split("## Mengapa v1 lambat di GPU", 1)[0]


def test_g_kinerja_covers_roofline_tensor_cores_tf32_io_and_the_measured_table():
    text = chapter_text("kinerja")
    code = "\n".join(code_sources("kinerja"))
    assert "(eq-kinerja-roofline)" in text and "(eq-kinerja-io)" in text
    assert "kernels.compile_report(" in code and "plots.roofline(" in code
    # Datasheet peaks (dense), and ridge points computed, not typed.
    assert "989e12 / 2" in code and "1979e12 / 2" in code and "H200.fp32_flops" in code
    assert "p / H200.bandwidth" in code
    assert "3xTF32" in text and "allow_tf32" in text
    assert "number_formats.to_tf32" in code and "for t in (1024, 4096)" in code
    assert "sram_bita = 228 * 1024" in code
    assert 'bench.run("book", device="cpu")' in code and "bench.load_results()" in code
    assert "python -m atensi.bench --quick" in text and "results/bench_gpu.json" in code
    assert "tabel-lebar" in code
    # With or without NVRTC, the compile-report prose is whole sentences, never a dash.
    report_cell = next(c for c in code_sources("kinerja") if "kin_laporan_kalimat" in c)
    assert "–" not in report_cell and "NVRTC tidak terpasang" in report_cell


def test_g_quick_bench_preset_stays_small():
    # The chapter measures while the book builds: the preset must stay small.
    from atensi import bench

    preset = bench.PRESETS["book"]
    assert max(preset.sweep) <= 1024 and max(preset.emulation_T) <= 256
    assert preset.max_seconds <= 3


# --- Glossary ----------------------------------------------------------------


def glossary_blocks() -> list[str]:
    """The text of every ``{glossary}`` block of the glossary page."""
    text = chapter_text("glosarium")
    return [part.split("\n```\n", 1)[0] for part in text.split("```{glossary}")[1:]]


def glossary_terms() -> list[str]:
    return [line.strip() for block in glossary_blocks() for line in block.splitlines()
            if line and not line.startswith((" ", ":")) and line.strip()]


def test_glossary_terms_cover_the_book_and_are_unique():
    terms = glossary_terms()
    lowered = [t.lower() for t in terms]
    assert len(lowered) == len(set(lowered)), "istilah ganda di glosarium"
    # Terms the style guide fixes, in Indonesian and English.
    for term in ("attention", "head", "query", "key", "value", "softmax", "dot product", "token",
                 "kernel", "thread", "block", "grid", "warp", "shared memory", "forward pass",
                 "decoder-only", "online softmax", "fused kernel", "warp shuffle",
                 "matriks skor", "scores matrix", "skor", "penskalaan", "mask kausal",
                 "causal mask", "bobot atensi", "attention weights", "jumlah tertimbang",
                 "weighted sum", "keluaran", "output", "entropi", "gradien", "pelatihan",
                 "training", "inferensi", "posisi", "masa depan", "proyeksi keluaran",
                 "layer norm", "koneksi residual", "MLP"):
        assert term.lower() in lowered, f"glosarium: istilah '{term}' tidak ada"


def test_glossary_entries_name_their_chapter():
    entries = [e for block in glossary_blocks() for e in re.split(r"\n\n(?=\S)", block.strip())]
    entries = [e for e in entries if not e.startswith(":")]
    assert len(entries) >= 60
    for entry in entries:
        chapters = re.findall(r"Bab: \{ref\}`([\w-]+)`", entry)
        assert chapters, f"entri tanpa bab: {entry.splitlines()[0]}"
        assert set(chapters) <= set(ALL_LABELS), entry.splitlines()[0]


def test_every_term_role_in_the_book_is_defined():
    lowered = {t.lower() for t in glossary_terms()}
    for path in CHAPTERS.glob("*.md"):
        for ref in re.findall(r"\{term\}`([^`]+)`", path.read_text(encoding="utf-8")):
            target = " ".join(re.sub(r"^.*<(.+)>$", r"\1", ref, flags=re.S).split()).lower()
            assert target in lowered, f"{path.name}: {{term}}`{ref}` tidak ada di glosarium"


def test_every_citation_in_the_book_is_in_the_reference_list():
    references = chapter_text("glosarium").split("(referensi)=", 1)[1]
    assert "Vaswani" in references and "arXiv:1706.03762" in references
    cited = set()
    for path in CHAPTERS.glob("*.md"):
        if path.stem == "glosarium":
            continue
        text = " ".join(path.read_text(encoding="utf-8").split())
        cited |= {(a, y) for a, y in re.findall(r"([A-Z][a-zA-Z]+) dkk\.,? \(?(\d{4})", text)}
        cited |= {(a, y) for a, y in re.findall(r"([A-Z][a-zA-Z]+) dan [A-Z][a-zA-Z]+ \((\d{4})\)", text)}
    assert ("Vaswani", "2017") in cited
    flat = " ".join(references.split())
    for author, year in sorted(cited):
        assert re.search(rf"{author}, [^()]*\({year}\)", flat), (
            f"rujukan {author} ({year}) dipakai di bab tetapi tidak ada di daftar pustaka"
        )


# --- Rendered pages ------------------------------------------------------------


@pytest.mark.book
def test_g_softmax_page(built_book):
    soup = page_soup(built_book, "softmax")
    text = main_text(soup)
    assert "urutan terbalik: 0" in text
    assert "[ nan nan nan]" in text  # the naive softmax overflows, shown by code
    assert "stabil : [ 0,090 0,245 0,665]" in text  # Indonesian number format
    # float16: rows that silently became zeros are counted beside the NaN rows.
    assert "NaN nol NaN nol" in text
    assert "{glue" not in text and "glue:text" not in text
    assert len(soup.select("main img")) >= 1
    assert soup.select("details.dropdown, .dropdown") or soup.select("div.solution")


@pytest.mark.book
def test_g_jumlah_v_page_has_the_seed_shapes(built_book):
    text = main_text(page_soup(built_book, "jumlah_v"))
    for shape in ("(1024, 64)", "(1024, 768)", "(768, 768)", "(12, 1024, 64)"):
        assert shape in text, f"jumlah_v: bentuk {shape} tidak tampil"
    assert "12 head" in text or "12 *head*" in text or "dua belas" in text
    assert "komponen O di luar rentang V yang terlihat: 0" in text
    soup = page_soup(built_book, "jumlah_v")
    assert soup.select_one('[data-explorer="baris"]') is not None


@pytest.mark.book
def test_g_sintesis_page_tables(built_book):
    soup = page_soup(built_book, "sintesis")
    text = main_text(soup)
    assert "(12, 1024, 1024)" in text and "(12, 1024, 64)" in text
    assert "{glue" not in text and "GFLOP" in text
    assert len(soup.select("main img")) >= 1


@pytest.mark.book
def test_g_kinerja_page_tables_compile_report_and_gpu_note(built_book):
    soup = page_soup(built_book, "kinerja")
    text = main_text(soup)
    headers = [th.get_text(" ", strip=True) for th in soup.select("main table th")]
    assert "waktu median" in headers, "tabel biaya CPU tidak tampil"
    wide = soup.select("main div.tabel-lebar table")
    assert wide, "tabel biaya lebar tanpa wadah geser"
    # The book build has NVRTC: the compiler table holds numbers, the prose no dash.
    assert "register" in headers and "okupansi" in headers
    assert "register lebih" in text or "register sama banyak" in text
    assert "( – " not in text and "(– " not in text and "{glue" not in text
    gpu_file = ROOT / "results" / "bench_gpu.json"
    if gpu_file.is_file():
        results = json.loads(gpu_file.read_text(encoding="utf-8"))
        assert results["date"][:10] in text
        assert results["machine"]["gpu"]["name"] in text
    else:
        assert "belum ada angka GPU" in text and "python -m atensi.bench --quick" in text
    assert len(soup.select("main img")) >= 1


@pytest.mark.book
def test_g_glossary_page(built_book):
    soup = page_soup(built_book, "glosarium")
    terms = soup.select("main dl.glossary dt")
    assert len(terms) >= 80
    links = {a["href"].split("#")[0] for a in soup.select("main dl.glossary a.reference.internal")}
    for page in ("pendahuluan", "matriks_skor", "skala_akar_dk", "mask_kausal", "softmax",
                 "jumlah_v", "sintesis"):
        assert f"{page}.html" in links, f"glosarium tidak menautkan {page}"
    text = main_text(soup)
    assert "Attention Is All You Need" in text and "arXiv:1706.03762" in text
