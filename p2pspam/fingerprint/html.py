"""HTML to plain text for fingerprinting (selectolax / lexbor)."""

# Elements whose content is not body text a reader sees.
_DROPPED = "head, script, style, noscript, template, object, embed, iframe, svg"
# Elements that start a new block: a line break (``br``) or a blank line (the others) is
# inserted before each, so that words of adjacent blocks do not run together and the
# text keeps the line structure that boilerplate stripping reads. Inline elements and
# comments add nothing, so `Vi<!-- -->agra` and `Vi<b></b>agra` both read `viagra`.
_BLOCKS = (
    "address, article, aside, blockquote, br, dd, div, dl, dt, fieldset, figcaption, "
    "figure, footer, form, h1, h2, h3, h4, h5, h6, header, hr, li, main, nav, ol, p, "
    "pre, section, table, tbody, thead, tfoot, td, th, tr, ul, option, caption"
)


def html_to_text(html: str) -> str:
    """Return the visible text of an HTML document: tags, comments, scripts and styles
    dropped, link text kept, a line break before ``<br>`` and a blank line before every
    other block element."""
    from selectolax.lexbor import LexborHTMLParser  # loaded only when mail has HTML

    tree = LexborHTMLParser(html)
    for node in tree.css(_DROPPED):
        node.decompose()
    for node in tree.css(_BLOCKS):
        node.insert_before("\n" if node.tag == "br" else "\n\n")
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    return root.text(separator="")
