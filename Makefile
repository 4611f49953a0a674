# make book: bangun buku ke _build/html.  make test: semua tes.
# make check: tes cepat pustaka dan kernel (tanpa buku, peramban, sanitizer), untuk kontributor.
# Keduanya membuat .venv bila belum ada dan memasang paket bila requirements berubah.
# book, test, pdf dan zip lebih dulu memasang paket sistem yang belum ada
# (scripts/paket_sistem.sh, lewat sudo bila bukan root), atau berhenti dengan
# perintah yang perlu dijalankan, sebelum pekerjaan lain.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.terpasang
DEV_STAMP := $(VENV)/.terpasang-dev
BUILD_FLAGS := --warningiserror --nitpick --keep-going
# Where _build/ goes (site, single page, PDF, execution cache). The tests run
# `make book pdf zip` into a folder of their own with OUTPUT=...
OUTPUT ?= .
BUILD := $(OUTPUT)/_build

.PHONY: book test check notebooks clean train pdf zip lab paket-sistem

# The system packages of the goals at hand (make alone builds the book), checked
# before anything else: every step that does work waits for paket-sistem. Other
# goals (check, notebooks, lab, train) check nothing.
SYSTEM_GOALS := $(filter book test pdf zip,$(or $(MAKECMDGOALS),book))
paket-sistem:
	@$(if $(SYSTEM_GOALS),VENV=$(VENV) PYTHON=$(PYTHON) bash scripts/paket_sistem.sh $(SYSTEM_GOALS),:)

# The execution cache sees only a chapter's own cells: when the library or a
# kernel changes, drop it so every chapter runs again against the new code.
LIB_SOURCES := $(shell find src kernels -name '*.py' -o -name '*.cu' -o -name '*.h' 2>/dev/null)
LIB_STAMP := $(BUILD)/.pustaka-terakhir

# The whole output of jupyter-book goes to $(BUILD)/buku.log; a failed build
# ends with the cause in one Indonesian message, not its traceback.
book: paket-sistem $(STAMP) $(LIB_STAMP)
	$(PY) scripts/build_book.py --log $(BUILD)/buku.log -- \
	  $(VENV)/bin/jupyter-book build . --path-output $(OUTPUT) $(BUILD_FLAGS)
	@echo
	@echo "Buku siap. Buka berkas ini di peramban:"
	@echo "  $(abspath $(BUILD))/html/index.html"

# Every test, one worker per core. --dist loadgroup with the order of
# tests/scheduling.py: one worker builds the book while the others run the
# tests that do not need it. At the end: the 15 slowest tests, and the CPU
# time of each test file against its budget (tests/budgets.py).
# A browser test that cannot start fails here instead of skipping (tests/conftest.py).
test: export ATENSI_BROWSER_REQUIRED := 1
test: paket-sistem $(DEV_STAMP)
	$(VENV)/bin/pytest -n auto --dist loadgroup --durations=15

# The contributor's fast loop: the unit tier only (tests marked slow, book,
# browser or gpu are left to make test), one worker per core. --dist loadfile
# keeps each file on one worker, so a module's fixture is built once.
check: $(DEV_STAMP)
	$(VENV)/bin/pytest -q -n auto --dist loadfile -m "not slow and not book and not browser and not gpu"

# The whole book as one PDF, printed by Chromium (needs requirements-dev.txt).
pdf: paket-sistem $(DEV_STAMP) $(LIB_STAMP)
	$(PY) scripts/build_book.py --log $(BUILD)/pdf.log -- \
	  $(VENV)/bin/jupyter-book build . --path-output $(OUTPUT) --builder singlehtml $(BUILD_FLAGS)
	$(PY) scripts/make_pdf.py --build $(BUILD)

# The built site as one zip, for reading offline: _build/html/unduh/.
zip: paket-sistem $(STAMP)
	@test -f $(BUILD)/html/index.html || { echo "Bangun bukunya dulu: make book"; exit 1; }
	$(PY) scripts/make_zip.py --build $(BUILD)

# The chapters live, with sliders, in JupyterLab on this computer.
LAB_STAMP := $(VENV)/.terpasang-lab
lab: $(LAB_STAMP)
	$(PY) scripts/lab.py

$(LAB_STAMP): requirements-lab.txt $(STAMP)
	$(PY) -m pip install -r requirements-lab.txt
	$(PY) -m ipykernel install --sys-prefix --name atensi --display-name "Python (atensi)"
	touch $@

# Model kecil bab "Melatih Model Kecil": menulis ulang results/model_kecil.npz
# (hanya bila semua target tercapai; bila tidak, berkas bertanggal di results/)
# dan results/eksperimen_skala.json (deterministik dari seed, beberapa menit).
# model kata bab "Model Kata": results/model_ingat.npz, results/eksperimen_ingat.json.
train: $(STAMP)
	$(PY) -m atensi.train
	$(PY) -m atensi.train --experiment skala
	$(PY) -m atensi.train --task ingat && $(PY) -m atensi.train --experiment ingat
	$(PY) -m atensi.train --task rujukan && $(PY) -m atensi.train --experiment rujukan

notebooks: $(STAMP)
	$(PY) scripts/sync_notebooks.py

clean:
	rm -rf $(BUILD) _ext/atensi_book/locale/*/LC_MESSAGES/*.mo

$(LIB_STAMP): $(LIB_SOURCES) | paket-sistem
	rm -rf $(BUILD)/.jupyter_cache $(BUILD)/.doctrees $(BUILD)/jupyter_execute
	mkdir -p $(BUILD) && touch $@

$(PY): | paket-sistem
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install -r requirements.txt
	touch $@

$(DEV_STAMP): requirements-dev.txt requirements-lab.txt $(STAMP)
	$(PY) -m pip install -r requirements-dev.txt
	touch $@
