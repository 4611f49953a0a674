"""The book's one Sphinx extension: what atensi adds to Jupyter Book.

One module per job:

    guard       a page missing from _toc.yml, or a broken internal link, fails the build
    indonesian  interface text in Indonesian (catalogs, exercise titles, labels, copy button)
    search      search that knows Indonesian affixes ("menghitung" finds "hitung")
    figures     Indonesian alt text for the figures that cells draw; 1x and 2x copies
    formulas    formulas turned into MathML by MathJax at build time, their font, wide equations on phones
    assets      what a page loads: light mode, favicon, no thebe, deferred scripts
    images      figures with their size, lazy after the first
    stylesheet  one stylesheet per page, its @imports inlined
    icons       the theme's icon fonts cut to the icons the pages show
    explorers   static explorers in every build; their frames as files
    folding     code folded on phones, a one-line summary each, one control for the page
    questions   "Cek pemahaman": questions answered in the page, answers hashed, progress on the device
    chapter_card the card below each title (what, how long, prerequisites, Bab n dari N), "Lanjutkan membaca"
    glossary_popover  a glossary term opens its one-line definition in the page
    site        the published site: address, social card, 404, sitemap, robots.txt, index.html
    downloads   the PDF and the zip: where their links point on the site, in the zip, in the PDF
    output      the build's own files written whole; a page torn by an earlier build is rebuilt
    repository  the repository the book is built from: launch buttons and each setup cell
    single_page the single page of `make pdf`: the site's writer for every custom node

Every hook is connected below, in one place and in the order it must run.
Once the pages are written, one pass (``finish``) reads every page once,
applies each rewrite in turn and writes it once; the stylesheets are joined
into one (``one_stylesheet``) and the link check (``check_links``) comes
last, when every other extension has written its files.
"""

from __future__ import annotations

from pathlib import Path

from . import assets, explorers, figures, formulas, guard, icons, images, indonesian, search, single_page
from . import site, stylesheet
from . import chapter_card, folding, glossary_popover, output, questions, repository


def finish(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    is_site = app.builder.name == "html"  # not the single page that `make pdf` prints
    if is_site:
        site.write_index_redirect(app)
    texts = {page: page.read_text(encoding="utf-8") for page in sorted(outdir.rglob("*.html"))}
    rewrites = []
    typeset = formulas.typeset_pages(app, texts)  # needs every formula of every page at once
    if typeset is not None:
        rewrites.append(typeset)
    if is_site:
        rewrites.append(lambda html, page: explorers.explorer_frames_to_files(html, page, outdir))
    # figures first: sized_images then reads the size of the 1x copy it points to
    rewrites += [figures.with_sharp_images, images.sized_images, assets.without_fontawesome_script,
                 indonesian.with_indonesian_labels]
    for page, text in texts.items():
        new = text
        for rewrite in rewrites:
            new = rewrite(new, page)
        if new != text:
            output.write_page(page, new)  # whole or not at all
    indonesian.copybutton_messages(outdir)
    search.write_roots(app)
    if is_site and app.config.html_baseurl:  # a local build without a repository has no address
        site.write_sitemap(outdir, app.config.html_baseurl, sorted(app.env.found_docs))
        site.write_robots(outdir, app.config.html_baseurl)


def one_stylesheet(app, exception):
    # Once myst-nb, sphinx-exercise and sphinx-design have written their
    # stylesheets (at build-finished too), which the joined one takes in.
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    rewrite = stylesheet.one_stylesheet(outdir)
    for page in sorted(outdir.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        new = rewrite(text, page)
        if new != text:
            output.write_page(page, new)  # whole or not at all


def cut_icon_fonts(app, exception):
    # After one_stylesheet: every stylesheet and script is written by then.
    if exception is None and app.builder.format == "html":
        icons.cut_icon_fonts(Path(app.outdir))


def check_links(app, exception):
    # Only the site: the single page for `make pdf` links from the root
    # (scripts/make_pdf.py moves it).
    if exception is None and app.builder.name == "html":
        guard.refuse_broken_links(Path(app.outdir))


def setup(app):
    explorers.book_mode()  # before the first notebook runs
    app.add_config_value("atensi_site_url", "", "html")
    for domain in indonesian.compile_catalogs():
        app.add_message_catalog(domain, str(indonesian.LOCALE_DIR))
    app.add_search_language(search.SearchIndonesian)
    app.add_post_transform(indonesian.SolutionTitleInIndonesian)
    app.add_post_transform(figures.FigureAltText)
    formulas.register_renderer(app)
    folding.setup(app)  # code folded on phones: its transform, head script, CSS and JS
    questions.setup(app)  # "Cek pemahaman": the directive, its CSS and JS
    chapter_card.setup(app)  # after folding: the card goes above the fold control
    glossary_popover.setup(app)  # a term's definition on tap, without leaving the page

    # config-inited. sphinx-external-toc adds the pages missing from the toc
    # to exclude_patterns, and sets root_doc, at priority 900.
    app.connect("config-inited", guard.remember_excludes, priority=100)
    app.connect("config-inited", indonesian.configure, priority=100)  # before the book theme reads its options
    app.connect("config-inited", assets.configure, priority=100)
    app.connect("config-inited", formulas.use_renderer, priority=100)
    app.connect("config-inited", repository.configure, priority=200)  # before site.configure reads repository_url
    app.connect("config-inited", site.configure, priority=950)  # after root_doc and repository_url are known
    app.connect("config-inited", guard.refuse_pages_missing_from_toc, priority=950)

    # builder-inited
    app.connect("builder-inited", output.remove_torn_pages)  # before Sphinx picks the pages to write
    app.connect("builder-inited", formulas.start)
    app.connect("builder-inited", search.load_roots)
    app.connect("builder-inited", single_page.share_site_writers)  # every extension has registered its nodes

    # env-updated
    app.connect("env-updated", site.skip_404_without_toc)

    app.connect("source-read", repository.write_setup_cell)

    # html-page-context: after the other extensions have added their scripts.
    app.connect("html-page-context", repository.say_when_there_is_no_repository)
    app.connect("html-page-context", site.link_downloads_to_the_site)
    app.connect("html-page-context", assets.drop_thebe_assets, priority=900)
    app.connect("html-page-context", assets.defer_scripts, priority=950)

    # build-finished: the one pass over the pages before sphinx-external-toc
    # (500), which writes its own index.html only when there is none; the link
    # check last, once myst-nb and sphinx-exercise have written their files.
    app.connect("build-finished", finish, priority=400)
    app.connect("build-finished", one_stylesheet, priority=900)
    app.connect("build-finished", cut_icon_fonts, priority=910)
    app.connect("build-finished", check_links, priority=950)

    app.add_js_file("wide-math.js", defer="defer")
    app.add_css_file("wide-tables.css")
    app.add_js_file("wide-tables.js", defer="defer")
    app.add_css_file("kontras.css")
    app.add_css_file("gambar-gelap.css")  # figures.py: the figure that matches the theme
    return {"parallel_read_safe": True, "parallel_write_safe": True}
