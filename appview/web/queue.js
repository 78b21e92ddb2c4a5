// The edits' queue. Structural edits (the keys') run one after another, in
// the order they were made; each reads the page when its turn comes. Until
// the last edit made in the page has reached the server, no group may be
// rebuilt from the server's answers (which do not have it yet): the groups
// to read are noted as stale and read once the edits are through. Pure: no
// DOM, so it is tested on its own.

export class EditQueue {
  constructor() {
    this.tail = Promise.resolve();
    this.unsent = 0;         // edits made in the page and not yet sent
    this.made = 0;           // edits made in the page, ever
    this.stale = new Set();  // groups (parent rkey, null for the top) to read again
  }

  // Runs `work` after everything queued before it, whether that failed or not.
  enqueue(work) {
    this.tail = this.tail.then(work, work);
    return this.tail;
  }

  // Runs `work` as an edit made in the page now: unsent until it has run,
  // then `after` (reading the stale groups).
  edit(work, after) {
    this.unsent++;
    this.made++;
    return this.enqueue(async () => {
      try {
        await work();
      } finally {
        this.unsent--;
      }
      if (after) await after();
    });
  }

  // The stale groups, taken (once no edit is unsent; none before).
  takeStale() {
    if (this.unsent > 0) return [];
    const groups = [...this.stale];
    this.stale.clear();
    return groups;
  }
}

// The page's queue.
export const edits = new EditQueue();
