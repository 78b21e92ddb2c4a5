#!/usr/bin/env python3
"""Writes a WorkFlowy-style OPML outline of N nodes to stdout: up to five
levels, a few dozen children a node, some formatting, notes and completed
items, as a long-kept outline looks. Deterministic for a given N.
Usage: bench/make_opml.py N > outline.opml"""
import random
import sys
from xml.sax.saxutils import quoteattr

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
rng = random.Random(n)
words = ("plan call write read fix ship review draft idea meeting notes list budget "
         "garden trip book email design test deploy refactor").split()

def text(i):
    body = " ".join(rng.choice(words) for _ in range(rng.randint(2, 9)))
    kind = i % 10
    if kind == 0:
        return f"{body} <b>{rng.choice(words)}</b>"
    if kind == 1:
        return f'<a href="https://example.com/{i}">{body}</a>'
    if kind == 2:
        return f'{body} <span class="colored c-red">{rng.choice(words)}</span> &amp; more'
    return body

out = sys.stdout
out.write('<?xml version="1.0"?>\n<opml version="2.0">\n  <head>\n'
          '    <ownerEmail>bench@example.com</ownerEmail>\n  </head>\n  <body>\n')
written = 0
def emit(depth):
    global written
    children = rng.randint(3, 40) if depth < 4 else 0
    for _ in range(children):
        if written >= n:
            return
        written += 1
        attrs = f" text={quoteattr(text(written))}"
        if written % 7 == 0:
            attrs += " _note=" + quoteattr("a note\nwith two lines", {"\n": "&#10;"})
        if written % 5 == 0:
            attrs += ' _complete="true"'
        indent = "  " * (depth + 2)
        if depth < 3 and rng.random() < 0.4:
            out.write(f"{indent}<outline{attrs}>\n")
            emit(depth + 1)
            out.write(f"{indent}</outline>\n")
        else:
            out.write(f"{indent}<outline{attrs} />\n")
while written < n:
    emit(0)
out.write("  </body>\n</opml>\n")
