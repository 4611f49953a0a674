# make book: bangun buku ke _build/html.  make test: semua tes.
# Keduanya membuat .venv bila belum ada dan memasang paket bila requirements berubah.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.terpasang
DEV_STAMP := $(VENV)/.terpasang-dev
BUILD_FLAGS := --warningiserror --nitpick --keep-going

.PHONY: book test notebooks clean

# The execution cache sees only a chapter's own cells: when the library or a
# kernel changes, drop it so every chapter runs again against the new code.
LIB_SOURCES := $(shell find src kernels -name '*.py' -o -name '*.cu' -o -name '*.h' 2>/dev/null)
LIB_STAMP := _build/.pustaka-terakhir

book: $(STAMP) $(LIB_STAMP)
	$(VENV)/bin/jupyter-book build . $(BUILD_FLAGS)
	@echo
	@echo "Buku siap. Buka berkas ini di peramban:"
	@echo "  $(CURDIR)/_build/html/index.html"

test: $(DEV_STAMP)
	$(VENV)/bin/pytest

notebooks: $(STAMP)
	$(PY) scripts/sync_notebooks.py

clean:
	rm -rf _build _ext/locale/*/LC_MESSAGES/*.mo

$(LIB_STAMP): $(LIB_SOURCES)
	rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute
	mkdir -p _build && touch $@

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements.txt
	touch $@

$(DEV_STAMP): requirements-dev.txt $(STAMP)
	$(PY) -m pip install -r requirements-dev.txt
	touch $@
