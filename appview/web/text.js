// A bullet's text with its facets, as the pieces the page shows: plain runs
// and styled runs (classes, a link's address, a date's title). Byte offsets
// are over the text's UTF-8. Pure: no DOM, so it is tested on its own.

const highlights = ['red', 'orange', 'yellow', 'green', 'blue', 'purple', 'pink'];

// What one facet's features make of its run.
function styleOf(features) {
  const style = { classes: [] };
  for (const feature of features ?? []) {
    const kind = String(feature.$type ?? '').split('#')[1];
    if (kind === 'link') {
      const uri = String(feature.uri ?? '');
      if (/^(https?:|mailto:)/i.test(uri)) style.href = uri;  // other schemes stay text
    } else if (kind === 'highlight') {
      const color = String(feature.color ?? '').toLowerCase();
      style.classes.push(highlights.includes(color) ? `hl-${color}` : 'hl-other');
    } else if (kind === 'date') {
      style.classes.push('f-date');
      style.title = String(feature.start ?? '');
    } else if (['bold', 'italic', 'underline', 'code'].includes(kind)) {
      style.classes.push(`f-${kind}`);
    } else if (kind === 'strikethrough') {
      style.classes.push('f-strike');
    }
  }
  return style;
}

// [{text, styled, classes?, href?, title?}] covering the whole text in
// order. Facets out of range or empty are ignored; of overlapping facets
// the first (by start) wins.
export function textPieces(text, facets) {
  const bytes = new TextEncoder().encode(text);
  const decode = (from, to) => new TextDecoder().decode(bytes.subarray(from, to));
  const usable = (facets ?? [])
    .filter((f) => f.index && f.index.byteStart < f.index.byteEnd && f.index.byteEnd <= bytes.length)
    .sort((a, b) => a.index.byteStart - b.index.byteStart);
  const pieces = [];
  let at = 0;
  for (const facet of usable) {
    const { byteStart, byteEnd } = facet.index;
    if (byteStart < at) continue;
    if (byteStart > at) pieces.push({ text: decode(at, byteStart), styled: false });
    pieces.push({ text: decode(byteStart, byteEnd), styled: true, ...styleOf(facet.features) });
    at = byteEnd;
  }
  if (at < bytes.length) pieces.push({ text: decode(at, bytes.length), styled: false });
  return pieces;
}
