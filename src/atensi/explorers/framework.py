"""Kerangka penjelajah: satu deklarasi kontrol, dua wajah.

Sebuah penjelajah menyatakan kontrolnya **sekali** (``Range``, ``Choice``,
``Toggle``: nama argumen, rentang, langkah, label) dan satu fungsi
``render(**nilai) -> (Figure, angka, html bacaan)``. Dari deklarasi itu
``Explorer`` membuat:

* ``live(**awal)``: ``ipywidgets.VBox`` yang menggambar ulang setiap kali
  kontrol digeser (butuh kernel: Jupyter, Colab, VS Code). Atribut untuk
  diuji atau dipakai dari kode: ``.controls`` (nama -> widget), ``.image``,
  ``.readout``, ``.values`` (angka bacaan terakhir), ``.render_ms``;
* ``static(**awal)``: ``StaticExplorer``, kembaran tanpa kernel untuk buku:
  setiap kombinasi nilai ``book`` sudah digambar, dipilih di halaman oleh
  ``static.js`` (berkas paket, bukan string Python);
* ``show(mode, **awal)``: salah satunya. ``mode=None`` membaca variabel
  lingkungan ``ATENSI_BOOK`` (disetel oleh build buku): ada -> statis.

Penjelajah yang wajahnya tidak bisa diturunkan dari kontrol (``playground``:
*anywidget* dan kembaran JavaScript yang menghitung di halaman) memberi
``live_face`` dan ``static_face`` sendiri; argumennya tetap diperiksa di sini,
dari deklarasi kontrol yang sama. ``faces(EXPLORER)`` membuat tiga fungsi
modulnya: ``explorer, live, static = faces(EXPLORER)``.

HTML kembaran statis: akar ``<div class="atensi-explorer" data-explorer=...>``,
kontrol ``input[data-control]`` (penggeser, kotak centang) atau
``fieldset[data-control]`` berisi tombol radio (``Choice(buttons=True)``), nilai tampil ``output[data-value-for]``,
gambar ``img.atensi-frame`` (``data-frame`` = kunci bingkai), bacaan
``.atensi-readout``, data ``script.atensi-data`` (JSON). Di buku, ekstensi
``_ext/atensi_book/explorers.py`` memindahkan bingkai ke berkas terpisah yang
baru dimuat saat pembaca pertama kali menyentuh penjelajah.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gc
import hashlib
import html
import itertools
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import style
from .. import validation as _val

ENV_VAR = "ATENSI_BOOK"
ASSETS = Path(__file__).parent
LIVE_DPI = 110
STATIC_PALETTE = 64  # colours per frame; the figures are flat, 64 is indistinguishable


def resolve_mode(mode):
    """``"live"`` or ``"static"``; ``None`` reads ``ATENSI_BOOK`` (set: static)."""
    if mode is None:
        book = os.environ.get(ENV_VAR, "").strip().lower() not in ("", "0", "false", "no")
        return "static" if book else "live"
    if mode not in ("live", "static"):
        raise ValueError(
            f"Argumen 'mode' harus 'live', 'static' atau None, tetapi yang diterima {mode!r}.")
    return mode


def asset(name):
    """Text of a package file next to this module (``static.js``, ``playground.css``...).

    It is inlined into a page, so it must not close the element it sits in."""
    text = (ASSETS / name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise ValueError(f"{name} tidak boleh berisi '</script' atau '</style'.")
    return text


def json_for_script(data):
    """JSON that can sit inside ``<script>``: no ``</`` and no ``<!--``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


# ------------------------------------------------------------------ controls


def _shown(fmt, value):
    return fmt(value) if callable(fmt) else fmt.format(value)


@dataclass(frozen=True)
class Range:
    """A number from ``low`` to ``high`` in steps of ``step`` (``log``: steps of log10).

    ``book``: the values the book prerenders (default: every step).
    ``limit``: upper bound from the other values, e.g. row i below T:
    ``limit=lambda v: v["T"] - 1``; a value above it is pulled back down.
    """

    name: str
    label: str
    low: float
    high: float
    step: float = 1
    log: bool = False
    book: tuple | None = None
    shown: str | Callable = "{}"
    limit: Callable | None = None

    @property
    def integer(self):
        return not self.log and all(float(x).is_integer() for x in (self.low, self.high, self.step))

    def book_values(self):
        if self.book is not None:
            return tuple(self.book)
        if not self.integer:
            raise ValueError(f"Kontrol '{self.name}' butuh daftar nilai 'book' untuk buku.")
        return tuple(range(int(self.low), int(self.high) + 1, int(self.step)))

    def high_for(self, values):
        return self.high if self.limit is None else min(self.high, self.limit(values))

    def check(self, value, values, static):
        high = self.high_for(values)
        if static:
            choices = tuple(v for v in self.book_values() if v <= high)
            return _val.check_choice(value, choices, self.name)
        if self.integer:
            return _val.check_int(value, self.name, low=int(self.low), high=int(high))
        return _val.check_number(value, self.name, low=self.low, high=high)

    def widget(self, value, W):
        if self.log:
            return W.FloatLogSlider(value=value, base=10, min=math.log10(self.low),
                                    max=math.log10(self.high), step=self.step,
                                    description=self.label, readout_format=".2f")
        if self.integer:
            return W.IntSlider(value=value, min=int(self.low), max=int(self.high),
                               step=int(self.step), description=self.label)
        return W.FloatSlider(value=value, min=self.low, max=self.high, step=self.step,
                             description=self.label)


@dataclass(frozen=True)
class Choice:
    """One of ``values``; ``shown`` gives each one's text (``"d_k = {}"`` or a function).

    Live: a slider over the values, a drop-down list when ``menu``, or a row of
    buttons when ``buttons``. Buttons suit a few named options with no order
    (the mask kind); a slider suits values in order (d_k), a list many (sentences).
    Static: a slider, or, when ``buttons``, a group of radio buttons drawn as
    buttons (one Tab stop, the arrow keys move between them).
    """

    name: str
    label: str
    values: tuple
    shown: str | Callable = "{}"
    menu: bool = False
    book: tuple | None = None
    hint: str = ""  # what the values mean, in the refusal: "Q3 = query dia, Kj = key ke-j"
    buttons: bool = False

    def __post_init__(self):
        if self.menu and self.buttons:
            raise ValueError(f"Kontrol '{self.name}': pilih salah satu, menu=True atau "
                             "buttons=True, tidak keduanya.")

    def book_values(self):
        return tuple(self.values if self.book is None else self.book)

    def check(self, value, values, static):
        choices = self.book_values() if static else tuple(self.values)
        if self.hint:
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"Argumen '{self.name}' harus salah satu dari {list(choices)} "
                                 f"({self.hint}), tetapi yang diterima {value!r}.")
            return value
        if (all(type(c) is int for c in choices)
                and choices == tuple(range(choices[0], choices[0] + len(choices)))):  # indices
            return _val.check_int(value, self.name, low=choices[0], high=choices[-1])
        return _val.check_choice(value, choices, self.name)

    def widget(self, value, W):
        options = [(_shown(self.shown, v), v) for v in self.values]
        if self.menu:
            return W.Dropdown(options=options, value=value, description=self.label)
        if self.buttons:
            return W.ToggleButtons(options=options, value=value, description=self.label,
                                   style={"button_width": "auto"})
        return W.SelectionSlider(options=options, value=value, description=self.label,
                                 continuous_update=True)


@dataclass(frozen=True)
class Toggle:
    """True or False: a checkbox in both faces."""

    name: str
    label: str

    def book_values(self):
        return (False, True)

    def check(self, value, values, static):
        return _val.check_flag(value, self.name)

    def widget(self, value, W):
        return W.Checkbox(value=value, description=self.label, indent=False)


# ------------------------------------------------------------------ guess first


@dataclass(frozen=True)
class Guess:
    """"Tebak dulu": before the explorer shows an outcome, the reader commits to one.

    Each part is a function of the start values, so the question, the right
    option and the explanation all come from the explorer's own numbers:
    ``question(values)`` text, ``choices`` the options' texts,
    ``answer(values)`` the index of the right option, ``why(values)`` the
    explanation shown after any answer, ``reveal(values)`` the control values
    the explorer then moves to (where the outcome is on show).
    """

    question: Callable
    choices: tuple
    answer: Callable
    why: Callable
    reveal: Callable

    def at(self, values):
        """The guess for these start values: question, options, right index, why, reveal."""
        right = self.answer(**values)
        if not (isinstance(right, int) and 0 <= right < len(self.choices)):
            raise ValueError(f"Jawaban tebakan harus indeks 0 sampai {len(self.choices) - 1}, "
                             f"tetapi yang diterima {right!r}.")
        return self.question(**values), right, self.why(**values), dict(self.reveal(**values))


def answer_hash(salt, index):
    """FNV-1a (32 bit) of ``salt:index``, as static.js computes it: the page carries
    this, not the right option, so the answer is not in its source."""
    h = 0x811C9DC5
    for byte in f"{salt}:{index}".encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


GUESS_TITLE = "Tebak dulu"
GUESS_SKIP = "lewati"


def verdict(right, chosen_text, right_text, why):
    """The feedback after an answer, in both faces (static.js builds the same text)."""
    head = "Tepat." if right else f"Belum tepat: jawabannya «{right_text}», bukan «{chosen_text}»."
    return f"{head} {why}"


# ------------------------------------------------------------------ drawing


@contextlib.contextmanager
def young_garbage_only():
    """No garbage collection while drawing, then collect only the young objects.

    A discarded Figure is a web of reference cycles. Left to the automatic
    collector, it is promoted and every few redraws a full collection adds
    100+ ms; collected young (a few ms) it never gets that far.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.collect(1)


def static_png(fig):
    return style.to_png(fig, dpi=style.STATIC_DPI, palette=STATIC_PALETTE)


_FRAMES = {}  # (explorer, cache key, book values) -> (frames, images): drawing takes seconds


@dataclass
class Explorer:
    """One explorer: its controls, declared once, and how to draw a state.

    ``render(**values) -> (Figure, numbers, readout html)`` serves both faces.
    ``frame(**values) -> (Figure | PNG bytes, readout html, boxes) | None``
    may replace it for the book (``None``: no frame for that combination);
    ``boxes`` are outlines drawn over the picture, as fractions of it.
    ``in_book(**values)``: whether the book prerenders that combination.
    ``live_face(**values)`` / ``static_face(**values)``: faces of the
    explorer's own, used instead of the ipywidgets face and the prerendered
    frames (``render`` is then not needed for that face).
    ``guess``: a ``Guess`` the reader may answer before the outcome is shown.
    """

    name: str
    title: str
    alt: str
    controls: tuple
    render: Callable | None = None
    frame: Callable | None = None
    in_book: Callable | None = None
    defaults: dict = field(default_factory=dict)
    live_face: Callable | None = None
    static_face: Callable | None = None
    guess: Guess | None = None

    def start(self, given, static):
        """The start values: defaults, then ``given``, each checked by name, in order."""
        unknown = sorted(set(given) - {c.name for c in self.controls})
        if unknown:
            names = ", ".join(c.name for c in self.controls)
            raise TypeError(f"Argumen tidak dikenal: {', '.join(unknown)}. Yang ada: {names}.")
        values = {}
        for control in self.controls:
            value = given.get(control.name, self.defaults[control.name])
            values[control.name] = control.check(value, values, static)
        return values

    def show(self, mode=None, **start):
        return self.live(**start) if resolve_mode(mode) == "live" else self.static(**start)

    # -------------------------------------------------------------- live

    def live(self, **start):
        values = self.start(start, static=False)
        if self.live_face is not None:
            return mark_live(self.live_face(**values), self.name)
        import ipywidgets as W

        widgets = {c.name: c.widget(values[c.name], W) for c in self.controls}
        ranges = [c for c in self.controls if isinstance(c, Range) and c.limit is not None]

        def current():
            return {name: w.value for name, w in widgets.items()}

        def clamp(_change=None):
            for control in ranges:  # the slider pulls its value back itself
                widgets[control.name].max = control.high_for(current())

        # Registered before the redraw, so that a redraw sees the pulled-back value.
        if ranges:
            for w in widgets.values():
                w.observe(clamp, names="value")
            clamp()
        box = _build_live(self.name, self.title, widgets, self.render)
        if self.guess is not None:
            _live_guess(box, self.guess, values)
        return box

    # -------------------------------------------------------------- static

    def static(self, cache_key=None, **start):
        """``cache_key``: what else the frames depend on (a model, say)."""
        values = self.start(start, static=True)
        if self.static_face is not None:
            return self.static_face(**values)
        controls = []
        for c in self.controls:
            book = c.book_values()
            if isinstance(c, Toggle):
                controls.append(Control(c.name, c.label, "checkbox", book, ("tidak", "ya"),
                                        int(values[c.name])))
            else:
                kind = "choice" if isinstance(c, Choice) and c.buttons else "range"
                controls.append(Control(c.name, c.label, kind, book,
                                        tuple(_shown(c.shown, v) for v in book),
                                        book.index(values[c.name])))
        frames, images = self._frames(controls, cache_key)
        guess = None
        if self.guess is not None:
            question, right, why, reveal = self.guess.at(values)
            state = [c.start for c in controls]
            for n, c in enumerate(controls):
                if c.key in reveal:
                    state[n] = c.values.index(reveal[c.key])
            guess = {"question": question, "choices": list(self.guess.choices), "right": right,
                     "why": why, "reveal": state}
        return StaticExplorer(self.name, self.title, controls, frames, images, alt=self.alt,
                              guess=guess)

    def _book_frame(self, values):
        for c in self.controls:
            if isinstance(c, Range) and values[c.name] > c.high_for(values):
                return None
        if self.in_book is not None and not self.in_book(**values):
            return None
        if self.frame is not None:
            return self.frame(**values)
        fig, _numbers, text = self.render(**values)
        return fig, text, []

    def _frames(self, controls, cache_key):
        """Draw every combination of book values; identical images are stored once."""
        # The drawing functions are part of the key: two explorers may share a
        # name (a page and its test, say) and must never share their pictures.
        drawers = tuple(f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', repr(f))}"
                        for f in (self.frame, self.render) if f is not None)
        key = (self.name, drawers, cache_key, tuple(c.values for c in controls))
        if key in _FRAMES:
            return _FRAMES[key]
        frames, images, index = {}, [], {}
        for combination in itertools.product(*(range(len(c.values)) for c in controls)):
            values = {c.key: c.values[k] for c, k in zip(controls, combination)}
            with young_garbage_only():
                result = self._book_frame(values)
            if result is None:
                continue
            picture, text, boxes = result
            png = picture if isinstance(picture, bytes) else static_png(picture)
            if png not in index:
                index[png] = len(images)
                images.append(png)
            frames[combination] = (index[png], text, boxes)
        _FRAMES[key] = frames, images
        return frames, images


def faces(declaration):
    """The three functions of an explorer module, from its declaration:
    ``explorer, live, static = faces(EXPLORER)``."""
    names = ", ".join(c.name for c in declaration.controls)
    own = [f for f in (declaration.render, declaration.live_face, declaration.static_face) if f]
    module = own[0].__module__ if own else None  # help() names the explorer's module

    def explorer(mode=None, **start):
        return declaration.show(mode, **start)

    def live(**start):
        return declaration.live(**start)

    def static(**start):
        return declaration.static(**start)

    explorer.__doc__ = (f"{declaration.title}: hidup di Jupyter, statis bila ``ATENSI_BOOK`` "
                        f"diset (``mode``: ``\"live\"``, ``\"static\"`` atau None); "
                        f"nilai awal: {names}.")
    live.__doc__ = f"{declaration.title}, wajah hidup (butuh kernel); nilai awal: {names}."
    static.__doc__ = (f"{declaration.title}, kembaran statis untuk buku (tanpa kernel); "
                      f"nilai awal: {names}.")
    for function in (explorer, live, static):
        function.__module__ = module or function.__module__
        function.__qualname__ = function.__name__
    return explorer, live, static


def mark_live(face, name):
    """Every live face carries ``atensi-live`` and ``atensi-live-NAME`` (tests find a face by them)."""
    if hasattr(face, "add_class"):
        face.add_class("atensi-live")
        face.add_class(f"atensi-live-{name}")
    return face


def _live_guess(box, guess, values):
    """The live face's "tebak dulu": a row of option buttons above the controls;
    an answer shows the verdict and moves the controls to where the outcome is."""
    import ipywidgets as W

    question, right, why, reveal = guess.at(values)
    buttons = [W.Button(description=text, layout=W.Layout(width="auto", min_height="36px"))
               for text in guess.choices]
    skip = W.Button(description=GUESS_SKIP, layout=W.Layout(width="auto", min_height="36px"))
    result = W.HTML()

    def answered(chosen):
        for b in buttons + [skip]:
            b.disabled = True
        if chosen is not None:
            result.value = (f"<p class='atensi-verdict'>"
                            f"{html.escape(verdict(chosen == right, guess.choices[chosen], guess.choices[right], why))}</p>")
        for name, value in reveal.items():
            box.controls[name].value = value
        box.guessed = chosen

    for n, b in enumerate(buttons):
        b.on_click(lambda _b, n=n: answered(n))
    skip.on_click(lambda _b: answered(None))
    panel = W.VBox([W.HTML(f"<b>{GUESS_TITLE}:</b> {html.escape(question)}"),
                    W.HBox(buttons + [skip], layout=W.Layout(flex_flow="row wrap")), result])
    box.children = (box.children[0], panel) + tuple(box.children[1:])
    box.guess_panel, box.guess_buttons, box.guessed = panel, buttons, None


def _build_live(name, title, controls, render):
    """VBox: title, controls, PNG picture, readout."""
    import ipywidgets as W

    class LiveExplorer(W.VBox):
        pass

    image = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
    readout = W.HTML()
    box = LiveExplorer([W.HTML(f"<b>{html.escape(title)}</b>"),
                        W.HBox(list(controls.values()), layout=W.Layout(flex_flow="row wrap")),
                        image, readout])
    mark_live(box, name)
    box.name, box.controls, box.image, box.readout = name, controls, image, readout
    box.values, box.render_ms = {}, None

    @functools.lru_cache(maxsize=128)
    def draw(state):
        fig, values, text = render(**dict(state))
        return style.to_png(fig, dpi=LIVE_DPI, fast=True), values, text

    def redraw(_change=None):
        start = time.perf_counter()
        with young_garbage_only():
            png, values, text = draw(tuple((k, c.value) for k, c in controls.items()))
        image.value = png
        readout.value = f"<div class='atensi-readout'>{text}</div>"
        box.values = values
        box.render_ms = 1000 * (time.perf_counter() - start)

    for control in controls.values():
        control.observe(redraw, names="value")
    box.redraw, box.cache = redraw, draw  # box.cache.cache_clear() to time a cold redraw
    redraw()
    return box


# ------------------------------------------------------------------ static twin


@dataclass
class Control:
    """One control of the static twin: ``range`` over a list of values, ``choice``
    (one radio button per value), or ``checkbox``."""

    key: str
    label: str
    kind: str  # "range" | "choice" | "checkbox"
    values: tuple
    shown: tuple  # text shown for each value, e.g. "d_k = 256"
    start: int = 0


_instances = itertools.count(1)


class StaticExplorer:
    """Penjelajah tanpa kernel: bingkai yang sudah digambar, dipilih oleh kontrol HTML.

    ``frames``: dict ``kunci -> (indeks gambar, html bacaan, kotak penanda)``, kunci
    berupa tuple indeks nilai tiap kontrol. ``images``: bytes PNG. ``to_html()``
    membawa semua bingkai (berdiri sendiri di keluaran notebook).
    """

    def __init__(self, name, title, controls, frames, images, alt, mime="image/png", guess=None):
        self.name, self.title, self.controls = name, title, list(controls)
        self.guess = guess  # question, choices, right index, why, reveal state (indices)
        self.frames, self.images, self.alt, self.mime = frames, images, alt, mime
        start = tuple(c.start for c in self.controls)
        if start not in frames:
            raise ValueError(f"Bingkai awal {start} tidak ada di penjelajah '{name}'.")
        digest = hashlib.sha1(b"".join(images)).hexdigest()[:8]
        self.element_id = f"atensi-{name}-{digest}-{next(_instances)}"
        self._html = None

    def options(self, state, n):
        """Values of control ``n`` with a frame, given the controls before it (as in static.js)."""
        prefixes = {k[:n + 1] for k in self.frames}
        return [v for v in range(len(self.controls[n].values))
                if tuple(state[:n]) + (v,) in prefixes]

    def _controls_html(self, start):
        parts = []
        for n, c in enumerate(self.controls):
            if c.kind == "checkbox":
                checked = " checked" if c.values[c.start] else ""
                parts.append(f'<label class="atensi-control atensi-check"><input type="checkbox" '
                             f'data-control="{c.key}"{checked}> {html.escape(c.label)}</label>')
            elif c.kind == "choice":
                # One radio group per control (its own name): one Tab stop, arrows
                # between the values; a value without a frame here is switched off.
                offered = self.options(start, n)
                group = f"{self.element_id}-{c.key}"
                radios = "".join(
                    f'<label class="atensi-option"><input type="radio" name="{group}" '
                    f'value="{v}"{" checked" if v == c.start else ""}'
                    f'{"" if v in offered else " disabled"}><span>{html.escape(text)}</span></label>'
                    for v, text in enumerate(c.shown))
                parts.append(f'<fieldset class="atensi-control atensi-choice" data-control="{c.key}">'
                             f"<legend>{html.escape(c.label)}</legend>{radios}</fieldset>")
            else:
                offered = self.options(start, n)
                parts.append(f'<label class="atensi-control"><span>{html.escape(c.label)}</span>'
                             f'<input type="range" min="0" max="{len(offered) - 1}" step="1" '
                             f'value="{offered.index(c.start)}" data-control="{c.key}" '
                             f'aria-label="{html.escape(c.label)}">'
                             f'<output data-value-for="{c.key}">{html.escape(c.shown[c.start])}'
                             "</output></label>")
        return "".join(parts)

    def data(self):
        """What static.js reads: controls, the values each range offers at the start,
        frames (readouts, boxes) and images (base64)."""
        start = [c.start for c in self.controls]
        return {
            "options": [self.options(start, n) if c.kind != "checkbox" else [0, 1]
                        for n, c in enumerate(self.controls)],
            "mime": self.mime,
            # What the page expects of its frame table (a file in the book): a
            # table cut short or from another build does not fit it.
            "count": [len(self.frames), len(self.images)],
            "images": [base64.b64encode(b).decode("ascii") for b in self.images],
            "controls": [{"key": c.key, "kind": c.kind, "values": len(c.values),
                          "shown": list(c.shown), "start": c.start} for c in self.controls],
            "frames": {",".join(map(str, k)): [f[0], f[1], [[round(x, 5) for x in box]
                                                            for box in f[2]]]
                       for k, f in self.frames.items()},
            **({"guess": self._guess_data()} if self.guess else {}),
        }

    def _guess_data(self):
        """The guess as the page holds it: the right option as a hash of each
        option's index, the explanation encoded, so neither is in the page source."""
        g, salt = self.guess, self.element_id
        return {"choices": g["choices"], "salt": salt, "hash": answer_hash(salt, g["right"]),
                "why": base64.b64encode(g["why"].encode("utf-8")).decode("ascii"),
                "reveal": g["reveal"]}

    def _guess_html(self):
        if not self.guess:
            return ""
        buttons = "".join(f'<button type="button" data-guess="{n}">{html.escape(text)}</button>'
                          for n, text in enumerate(self.guess["choices"]))
        return (f'<div class="atensi-guess" role="group" aria-label="{GUESS_TITLE}">'
                f'<p><b>{GUESS_TITLE}:</b> {html.escape(self.guess["question"])}</p>'
                f'<div class="atensi-guess-options">{buttons}'
                f'<button type="button" data-guess="skip">{GUESS_SKIP}</button></div>'
                '<p class="atensi-verdict" aria-live="polite" hidden></p></div>')

    def to_html(self):
        if self._html is not None:
            return self._html
        start = tuple(c.start for c in self.controls)
        first = self.frames[start]
        data = self.data()
        marks = "".join(
            f'<div class="atensi-mark" style="left:{100 * b[0]:.3f}%;top:{100 * b[1]:.3f}%;'
            f'width:{100 * b[2]:.3f}%;height:{100 * b[3]:.3f}%"></div>' for b in first[2])
        self._html = (
            f'<div class="atensi-explorer" id="{self.element_id}" data-explorer="{self.name}">'
            f"<style>{asset('static.css')}</style>"
            f'<div class="atensi-title">{html.escape(self.title)}</div>'
            f"{self._guess_html()}"
            f'<div class="atensi-controls">{self._controls_html(start)}</div>'
            f'<div class="atensi-figure"><img class="atensi-frame" alt="{html.escape(self.alt)}" '
            f'data-frame="{",".join(map(str, start))}" '
            f'src="data:{self.mime};base64,{data["images"][first[0]]}">{marks}</div>'
            f'<div class="atensi-readout" aria-live="polite">{first[1]}</div>'
            f'<script type="application/json" class="atensi-data">{json_for_script(data)}</script>'
            f"<script>{asset('static.js')}</script></div>"
        )
        return self._html

    def _repr_html_(self):
        return self.to_html()

    @property
    def nbytes(self):
        """Ukuran HTML penjelajah dalam byte (UTF-8)."""
        return len(self.to_html().encode("utf-8"))

    def __repr__(self):
        return (f"<StaticExplorer {self.name!r}: {len(self.frames)} bingkai, "
                f"{len(self.images)} gambar, {self.nbytes / 1e6:.2f} MB>")
