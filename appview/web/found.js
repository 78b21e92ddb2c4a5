// What a search answer shows, without a DOM: a text cut into plain and
// matched runs by the answer's highlights (UTF-8 byte ranges, end
// exclusive), the word being typed (for tag completion), and which of
// several answers in flight may still be shown. Pure: tested on its own.

// [{text, hit}] covering the whole text in order. Ranges out of range,
// empty, overlapping an earlier one or not on character boundaries are
// ignored.
export function matchPieces(text, ranges) {
  const bytes = new TextEncoder().encode(text);
  const boundary = (at) => at === bytes.length || (bytes[at] & 0xc0) !== 0x80;
  const decode = (from, to) => new TextDecoder().decode(bytes.subarray(from, to));
  const usable = (ranges ?? [])
    .filter((r) => Number.isInteger(r.byteStart) && Number.isInteger(r.byteEnd))
    .filter((r) => r.byteStart >= 0 && r.byteStart < r.byteEnd && r.byteEnd <= bytes.length)
    .filter((r) => boundary(r.byteStart) && boundary(r.byteEnd))
    .sort((a, b) => a.byteStart - b.byteStart);
  const pieces = [];
  let at = 0;
  for (const { byteStart, byteEnd } of usable) {
    if (byteStart < at) continue;
    if (byteStart > at) pieces.push({ text: decode(at, byteStart), hit: false });
    pieces.push({ text: decode(byteStart, byteEnd), hit: true });
    at = byteEnd;
  }
  if (at < bytes.length || pieces.length === 0) pieces.push({ text: decode(at, bytes.length), hit: false });
  return pieces;
}

// The tag being typed at the end of a query ("#wo" of "plan #wo"), or null.
export function tagBeingTyped(q) {
  const match = /(?:^|\s)-?([#@][\p{L}\p{M}\p{N}_-]*)$/u.exec(q);
  return match ? match[1] : null;
}

// Numbers each search as it is sent; only the newest may be shown, so a
// late answer never overwrites a newer one.
export class Latest {
  #sent = 0;
  next() { return ++this.#sent; }
  isLatest(ticket) { return ticket === this.#sent; }
}
