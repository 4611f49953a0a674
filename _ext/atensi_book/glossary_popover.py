"""Glossary on tap: a glossary term opens its one-line definition in the page.

A ``{term}`` link leads to the glossary page, which takes the reader away
from what they were reading. Here each term's first sentence is collected
from the glossary when it is read (``collect_definitions``); a page that
links to terms gets those definitions, and only those, as one small JSON
block (``attach_definitions``), and ``static/glosarium.js`` turns a tap,
click or Enter on the link into a popover with the definition and a link
to the full entry. Escape, the close button, or a tap elsewhere closes it,
and focus returns to the term. Without scripts the link still leads to the
glossary.
"""

from __future__ import annotations

import json
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

DEFINITION_MAX_CHARS = 220
LATEX_WORDS = {r"\dots": "…", r"\ldots": "…", r"\infty": "∞", r"\sqrt": "√", r"\cdot": "·",
               r"\times": "×", r"\sum": "Σ", r"\top": "ᵀ", r"\approx": "≈", r"\le": "≤", r"\ge": "≥"}


def plain_math(latex: str) -> str:
    """Inline math as plain text good enough for a one-line definition."""
    text = re.sub(r"\\(?:text|mathrm|operatorname|mathbf)\{([^{}]*)\}", r"\1", latex)
    for command, symbol in LATEX_WORDS.items():
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, text)
    text = re.sub(r"\\[A-Za-z]+", "", text)
    return text.replace("{", "").replace("}", "").replace("_", "").strip()


def _text(node: nodes.Node) -> str:
    if isinstance(node, nodes.math):
        return plain_math(node.astext())
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_text(child) for child in node.children)


def first_sentence(definition: nodes.Node) -> str:
    """The definition's first sentence, without its "Bab: ..." line."""
    paragraph = next(definition.findall(nodes.paragraph), None)
    text = " ".join(_text(paragraph if paragraph is not None else definition).split())
    text = re.split(r"\s+Bab:\s", text)[0]
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z(*\"“])", text)
    if match:
        text = text[:match.start()]
    if len(text) > DEFINITION_MAX_CHARS:
        text = text[:DEFINITION_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def collect_definitions(app, doctree):
    """At read time: the glossary's terms, by their anchor, with their definition."""
    found = {}
    for glossary in doctree.findall(addnodes.glossary):
        for item in glossary.findall(nodes.definition_list_item):
            definition = next(iter(item.findall(nodes.definition)), None)
            if definition is None:
                continue
            sentence = first_sentence(definition)
            names = [term for term in item.findall(nodes.term)]
            for term in names:  # the first line is the book's word, the others its English
                for anchor in term["ids"]:
                    found[anchor] = {"istilah": names[0].astext(), "arti": sentence}
    if found:
        if not hasattr(app.env, "atensi_glossary"):
            app.env.atensi_glossary = {}
        app.env.atensi_glossary[app.env.docname] = found


def _purge(app, env, docname):
    getattr(env, "atensi_glossary", {}).pop(docname, None)


def _merge(app, env, docnames, other):
    if not hasattr(env, "atensi_glossary"):
        env.atensi_glossary = {}
    for docname in docnames:
        if docname in getattr(other, "atensi_glossary", {}):
            env.atensi_glossary[docname] = other.atensi_glossary[docname]


class AttachDefinitions(SphinxPostTransform):
    """After references are resolved: the definitions of the terms this page links to."""

    default_priority = 900
    formats = ("html",)

    def run(self):
        glossaries = getattr(self.env, "atensi_glossary", {})
        if not glossaries:
            return
        used = {}
        for reference in self.document.findall(nodes.reference):
            if not any("std-term" in child.get("classes", []) for child in reference.children
                       if isinstance(child, nodes.Element)):
                continue
            uri = reference.get("refuri", "")
            anchor = uri.rsplit("#", 1)[-1] if "#" in uri else reference.get("refid", "")
            for entries in glossaries.values():
                if anchor in entries:
                    used[anchor] = entries[anchor]
                    reference["classes"].append("glosarium-istilah")
        if used:
            data = json.dumps(used, ensure_ascii=True, sort_keys=True).replace("</", "<\\/")
            self.document += nodes.raw("", f'<script type="application/json" class="glosarium-data">'
                                           f"{data}</script>", format="html")


def setup(app):
    """Registers the collection, the transform, and the popover's stylesheet and script."""
    app.connect("doctree-read", collect_definitions)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.add_post_transform(AttachDefinitions)
    app.add_css_file("glosarium.css")
    app.add_js_file("glosarium.js", defer="defer")

