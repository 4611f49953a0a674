"""Gaya gambar buku: warna, huruf, ukuran, Figure baru, dan ekspor PNG.

Setiap modul gambar (``plots``, ``example_plots``, ``cuda_plots``,
``position_plots``, ``tensorcore_plots``, dan gambar penjelajah) mengambil
gayanya dari sini; modul ini sendiri tidak mengimpor modul gambar mana pun.

Aturan ukuran: gambar di ponsel mendapat sekitar ``PHONE_FIGURE_PX`` = 330
piksel CSS. Teks p poin pada gambar selebar w inci tampil p / 72 · 330 / w
px, jadi teks ``SMALL`` = 9 poin pada gambar selebar ``MAX_WIDTH`` = 4,5 inci
tetap 9 px. Gambar yang lebih lebar perlu huruf yang sebanding lebih besar
(``phone_text_px`` menghitungnya; ``tests/test_phone.py`` mengukur buku).

    new_figure(w, h)       Figure kosong yang tampil sendiri di Jupyter
    to_png(fig)            Figure -> bytes PNG (dengan teks alternatif dan MinFontPx)
    phone_text_px(fig)     tinggi teks terkecil di layar ponsel, piksel CSS
    format_number(x)       angka gaya Indonesia untuk gambar: 0,25, −1,5, −∞
    style_axes(ax, ...)    judul, label, dan sumbu bersih
"""

import base64
import contextlib
import io
import math
import os

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter

from .formatting import id_float

# Text sizes (points) and widths (inches); see the size rule above.
FONT = 10.0
SMALL = 9.0
MAX_WIDTH = 4.5
PHONE_FIGURE_PX = 330
DPI = 100  # screen figures in notebooks; the static explorers use STATIC_DPI
STATIC_DPI = 130
EXPLORER_WIDTH = 4.2  # inches: 546 px at STATIC_DPI, shrunk to ~330 px on a phone
# Notebook figures are sent at this many pixels per screen pixel, so that
# they stay sharp on phones (device pixel ratio 2-3); the book also serves a
# 1x copy to ordinary screens (see _ext/atensi_book/figures.py).
PIXEL_RATIO = 2
# Colours kept in those PNGs: a figure's flat colours and anti-aliased edges fit
# in 256, and the file is about half as large (a colour bar shows no banding).
PNG_COLORS = 256

HIGHLIGHT = "#e6550d"
MASKED = "#cfcfcf"
BAR = "#3b75af"
GREEN = "#4c9a6a"
GRID = "#e5e5e5"
# The dark variant of every figure (``dark_palette``): pydata-sphinx-theme's
# dark background and text; hues lightened to at least this HLS lightness.
DARK_BACKGROUND = "#14181e"
DARK_TEXT = "#ced6dd"
DARK_MIN_LIGHTNESS = 0.6
DARK_CHUNK = "DarkPNG"  # the PNG text chunk that carries it (base64) to the build
BOOK_ENV_VAR = "ATENSI_BOOK"  # set while the book is built (atensi.explorers.framework.ENV_VAR)
# Line plots with several series: one colour and marker each, in this order.
SERIES_COLORS = (HIGHLIGHT, BAR, GREEN, "#7b4ea3")
SERIES_MARKERS = ("o", "s", "^", "D")


class AtensiFigure(Figure):
    """Figure yang tahu cara menampilkan dirinya di IPython tanpa pyplot.

    Di notebook ia dikirim sebagai PNG ``PIXEL_RATIO`` kali lebih rapat,
    dengan lebar tampilnya sebagai metadata: tajam di layar ponsel, ukuran
    di layar tetap sama.
    """

    def _repr_png_(self):
        return to_png(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        width, height = self.get_size_inches() * self.dpi
        # The book shows a dark variant under its dark theme; it travels inside
        # the PNG and the build takes it out (_ext/atensi_book/figures.py).
        dark = os.environ.get(BOOK_ENV_VAR) == "1"
        png = to_png(self, dpi=self.dpi * PIXEL_RATIO, palette=PNG_COLORS, with_dark=dark)
        size = {"width": int(round(width)), "height": int(round(height))}
        return {"image/png": png}, {"image/png": size}


def new_figure(width=MAX_WIDTH, height=3.6, dpi=DPI):
    """Figure kosong berukuran kecil (inci), cocok untuk layar ponsel."""
    return AtensiFigure(figsize=(width, height), dpi=dpi, facecolor="white")


def format_number(x, digits=2):
    """``formatting.id_float`` untuk gambar: juga ``−∞``/NaN, dan tanda minus tipografis."""
    x = float(x)
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if math.isnan(x):
        return "NaN"
    text = id_float(x, digits)
    if not text.strip("-0,."):
        return text.lstrip("-")  # -0.0001 rounds to "0,000", not "−0,000"
    return text.replace("-", "−")


def tick_decimals(values, most: int = 3) -> int:
    """The fewest decimals that write every tick of one axis exactly (at most ``most``)."""
    finite = [float(v) for v in values if math.isfinite(float(v))]
    for digits in range(most + 1):
        if all(abs(round(v, digits) - v) <= 1e-9 * max(1.0, abs(v)) for v in finite):
            return digits
    return most


class _IndonesianTicks(Formatter):
    """Axis ticks in Indonesian (decimal comma, true minus), all ticks of one axis
    with the same number of decimals: "0,0; 0,5; 1,0", never "0,50; 1; 1,50"."""

    def __call__(self, x, pos=None):
        return format_number(x, tick_decimals([x]))

    def format_ticks(self, values):
        digits = tick_decimals(values)
        return [format_number(v, digits) for v in values]


TICKS = _IndonesianTicks()


class _IndonesianLogTicks(Formatter):
    """Ticks of a log axis in Indonesian: each tick with the fewest decimals that
    write it exactly ("0,25; 1; 4; 1.024"). A log axis spans orders of magnitude,
    so one decimal count for all would print "1.024,000"."""

    def __call__(self, x, pos=None):
        return format_number(x, tick_decimals([x]))


LOG_TICKS = _IndonesianLogTicks()


def describe(fig):
    """Teks alternatif gambar: ``fig.alt`` bila ada, selain itu judul-judulnya."""
    alt = getattr(fig, "alt", None)
    if alt:
        return str(alt)
    titles = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) else []
    titles += [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")]
    titles = [" ".join(t.replace("$", "").split()) for t in titles if t.strip()]
    return "Gambar: " + "; ".join(titles) if titles else "Gambar"


def _hex(color) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color, keep_alpha=False)


def dark_color(color):
    """The dark theme's colour for one of the figure's colours: a grey turns
    over (white background to ``DARK_BACKGROUND``, black text to ``DARK_TEXT``),
    a hue keeps its hue and is lightened until it reads on the dark background.
    Transparent colours stay as they are."""
    import colorsys

    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(color)
    if a == 0:
        return (r, g, b, a)
    h, light, sat = colorsys.rgb_to_hls(r, g, b)
    if sat < 0.12 or max(r, g, b) - min(r, g, b) < 0.06:  # grey: turn over between the theme's two ends
        low, high = np.array(to_rgba(DARK_BACKGROUND)[:3]), np.array(to_rgba(DARK_TEXT)[:3])
        r, g, b = low + (1 - light) * (high - low)
    elif light < DARK_MIN_LIGHTNESS:
        r, g, b = colorsys.hls_to_rgb(h, DARK_MIN_LIGHTNESS, sat)
    return (r, g, b, a)


@contextlib.contextmanager
def dark_palette(fig):
    """The figure recoloured for the dark theme while the block runs, then as it was.

    Every colour the figure function chose (background, text, axes, lines,
    bars, markers, legends) goes through ``dark_color``. Pictures of data
    (``imshow``, ``pcolormesh``) keep their colour map, and so does the text
    written over them, whose colour was chosen against the cell beneath.
    """
    from matplotlib.collections import Collection, QuadMesh
    from matplotlib.image import AxesImage
    from matplotlib.legend import Legend
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    undo = []

    def swap(getter, setter):
        old = getter()
        undo.append((setter, old))
        if isinstance(old, np.ndarray):
            setter(np.array([dark_color(c) for c in old]) if len(old) else old)
        elif old is not None and not (isinstance(old, str) and old in ("none", "face", "auto")):
            setter(dark_color(old))

    over_pictures = set()
    for ax in fig.axes:
        if any(isinstance(a, (AxesImage, QuadMesh)) for a in ax.get_children()):
            over_pictures.update(id(t) for t in ax.texts)
    for artist in fig.findobj():
        if isinstance(artist, (AxesImage, QuadMesh)):
            continue
        if isinstance(artist, Text):
            if id(artist) not in over_pictures:
                swap(artist.get_color, artist.set_color)
        elif isinstance(artist, Line2D):
            swap(artist.get_color, artist.set_color)
            swap(artist.get_markerfacecolor, artist.set_markerfacecolor)
            swap(artist.get_markeredgecolor, artist.set_markeredgecolor)
        elif isinstance(artist, Patch):
            swap(artist.get_facecolor, artist.set_facecolor)
            swap(artist.get_edgecolor, artist.set_edgecolor)
        elif isinstance(artist, Collection):
            swap(artist.get_facecolor, artist.set_facecolor)
            swap(artist.get_edgecolor, artist.set_edgecolor)
        elif isinstance(artist, Legend):
            continue  # its frame is a Patch and its texts are Text: done above
    try:
        yield fig
    finally:
        for setter, old in reversed(undo):
            setter(old)
        fig.stale = True


def to_png(fig, dpi=None, palette=None, fast=False, with_dark=False):
    """Figure -> bytes PNG. ``palette=n`` mengecilkan berkas ke n warna (Pillow);
    ``fast=True`` memakai kompresi ringan (lebih cepat, berkas lebih besar).

    Tanpa ``bbox_inches="tight"``: posisi dalam pecahan Figure tetap berlaku
    pada gambar (dipakai penanda baris di versi statis).

    PNG membawa keterangan: ``Description`` (teks alternatif, dipakai buku),
    ``MinFontPx``, tinggi huruf terkecil di gambar dalam piksel PNG (dipakai
    uji ponsel untuk menghitung ukurannya di layar), dan ``PixelRatio``, piksel
    PNG per piksel layar (``dpi / fig.dpi``; buku membuat salinan 1x darinya).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image, PngImagePlugin

    if with_dark:  # drawn first: the light picture is what the figure keeps
        with dark_palette(fig):
            dark = to_png(fig, dpi=dpi, palette=palette, fast=fast)
    dpi = dpi or fig.dpi
    old_dpi = fig.dpi
    fig.set_dpi(dpi)
    try:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        image = Image.fromarray(np.asarray(canvas.buffer_rgba())).convert("RGB")
        min_font_px = smallest_text_pt(fig) * dpi / 72
    finally:
        fig.set_dpi(old_dpi)
    info = PngImagePlugin.PngInfo()
    # The description travels inside the PNG: the book uses it as alt text.
    info.add_text("Description", describe(fig))
    info.add_text("MinFontPx", f"{min_font_px:.2f}")
    ratio = dpi / old_dpi
    if ratio != 1:
        info.add_text("PixelRatio", f"{ratio:g}")
    if with_dark:
        info.add_text(DARK_CHUNK, base64.b64encode(dark).decode("ascii"), zip=False)
    if palette:
        image = image.quantize(colors=int(palette), method=Image.Quantize.MEDIANCUT,
                               dither=Image.Dither.NONE)
    out = io.BytesIO()
    if palette:
        image.save(out, format="PNG", optimize=True, pnginfo=info)
    else:
        image.save(out, format="PNG", compress_level=1 if fast else 6, pnginfo=info)
    return out.getvalue()


def smallest_text_pt(fig):
    """Ukuran (poin) teks terkecil yang tampak di Figure yang sudah digambar."""
    from matplotlib.text import Text

    box = fig.bbox
    sizes = []
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()) or text.get_alpha() == 0:
            continue
        extent = text.get_window_extent()
        if extent.x1 < box.x0 or extent.x0 > box.x1 or extent.y1 < box.y0 or extent.y0 > box.y1:
            continue
        sizes.append(text.get_fontsize())
    return min(sizes) if sizes else FONT


def phone_text_px(fig):
    """Tinggi (piksel CSS) teks terkecil ``fig`` bila gambar selebar ``PHONE_FIGURE_PX``.

    Gambar yang lebih sempit dari itu tidak diperbesar, jadi teksnya tetap
    seukuran aslinya (satu poin = dpi/72 piksel pada 1x).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    width_px = fig.get_figwidth() * fig.dpi
    shown = min(width_px, PHONE_FIGURE_PX)
    return smallest_text_pt(fig) * fig.dpi / 72 * shown / width_px


def labels(ax, title=None, xlabel=None, ylabel=None):
    """Judul (rata kiri, ``FONT``) dan label sumbu (``SMALL``)."""
    if title:
        ax.set_title(title, fontsize=FONT, loc="left", y=1.02)
    if xlabel:
        ax.set_xlabel(xlabel, fontsize=SMALL)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=SMALL)


def style_axes(ax, title=None, xlabel=None, ylabel=None):
    """``labels`` ditambah angka sumbu ``SMALL`` dan tanpa garis atas/kanan."""
    labels(ax, title, xlabel, ylabel)
    ax.tick_params(labelsize=SMALL)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def colormap(name):
    """Peta warna matplotlib bernama ``name`` (misalnya ``"viridis"``)."""
    from matplotlib import colormaps

    return colormaps[name]


def is_dark(cmap, level):
    """Apakah warna ``cmap(level)`` cukup gelap untuk teks putih di atasnya."""
    r, g, b, _ = cmap(float(np.clip(level, 0, 1)))
    return 0.299 * r + 0.587 * g + 0.114 * b < 0.5
