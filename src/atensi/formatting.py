"""Angka untuk prosa berbahasa Indonesia: titik pemisah ribuan, koma desimal.

Bab-bab memakai fungsi ini bersama ``glue`` agar setiap angka di prosa
berasal dari sel yang dijalankan, tidak diketik tangan.
"""


# MyST-NB reads a glued value back from a display output whose MIME types
# carry this prefix (myst_nb.ext.glue.GLUE_PREFIX), with "scrapbook" metadata.
GLUE_PREFIX = "application/papermill.record/"


def glue(name, value, display=True):
    """Tempelkan ``value`` ke prosa bab dengan nama ``name``, seperti ``myst_nb.glue``.

    Keluarannya sama persis dengan milik MyST-NB, tetapi tanpa mengimpor
    ``myst_nb.ext.glue``: modul itu mengimpor nbformat dan jsonschema, yang di
    sini butuh beberapa detik pada ``glue`` pertama setiap bab. Di luar buku
    (Colab, Jupyter biasa) nilainya cukup ditampilkan bila ``display``.
    """
    try:
        from IPython.core.formatters import format_display_data
        from IPython.display import display as show
    except ImportError:
        if display:
            print(value)
        return
    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    show({prefix + kind: data for kind, data in bundle.items()}, raw=True, metadata=metadata)


def id_int(n):
    """1048576 → '1.048.576'."""
    return f"{int(n):,}".replace(",", ".")


def id_float(x, digits=2):
    """0.25 → '0,25'; 12345.678 → '12.345,68' (pembulatan ``digits`` desimal)."""
    text = f"{float(x):,.{digits}f}"
    return text.replace(",", "_").replace(".", ",").replace("_", ".")


def id_bytes(n_bytes):
    """Ukuran memori yang mudah dibaca: '4 MiB', '48 MiB', '1,5 GiB'."""
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    value = float(n_bytes)
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    digits = 0 if value == int(value) else 1
    return f"{id_float(value, digits)} {units[unit]}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def id_sci(x, digits=1):
    """Notasi ilmiah untuk galat kecil: 1.4e-07 → '1,4 × 10⁻⁷'; 0 → '0'."""
    x = float(x)
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa.replace('.', ',')} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
