// The outliner's keys: a table from key (with its modifiers, and whether
// the bullet is empty) to command, read first match first. Pure: edit.js
// runs the commands; tests read the table.

export const keyCommands = [
  { command: 'toggleCompleted', key: 'Enter', ctrlOrMeta: true },
  { command: 'newBullet', key: 'Enter', shift: false, alt: false },
  { command: 'indent', key: 'Tab', shift: false },
  { command: 'outdent', key: 'Tab', shift: true },
  { command: 'moveUp', key: 'ArrowUp', alt: true },
  { command: 'moveDown', key: 'ArrowDown', alt: true },
  { command: 'deleteEmpty', key: 'Backspace', empty: true },
  { command: 'focusPrevious', key: 'ArrowUp', alt: false },
  { command: 'focusNext', key: 'ArrowDown', alt: false },
];

// The command of a keydown (`empty`: the bullet's text is empty), or null.
export function commandFor(event, { empty = false } = {}) {
  const matches = (row) =>
    row.key === event.key &&
    (row.ctrlOrMeta === undefined || row.ctrlOrMeta === (!!event.ctrlKey || !!event.metaKey)) &&
    (row.shift === undefined || row.shift === !!event.shiftKey) &&
    (row.alt === undefined || row.alt === !!event.altKey) &&
    (row.empty === undefined || row.empty === empty);
  return keyCommands.find(matches)?.command ?? null;
}
