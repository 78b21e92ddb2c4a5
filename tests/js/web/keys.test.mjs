// The web outliner's keys (appview/web/keys.js): each key with its
// modifiers to its command, first match first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandFor, keyCommands } from '../../../appview/web/keys.js';

const key = (name, mods = {}) => ({ key: name, shiftKey: false, altKey: false, ctrlKey: false, metaKey: false, ...mods });

test('every key of the outliner finds its command', () => {
  const cases = [
    [key('Enter', { ctrlKey: true }), 'toggleCompleted'],
    [key('Enter', { metaKey: true }), 'toggleCompleted'],
    [key('Enter'), 'newBullet'],
    [key('Tab'), 'indent'],
    [key('Tab', { shiftKey: true }), 'outdent'],
    [key('ArrowUp', { altKey: true }), 'moveUp'],
    [key('ArrowDown', { altKey: true }), 'moveDown'],
    [key('ArrowUp'), 'focusPrevious'],
    [key('ArrowDown'), 'focusNext'],
  ];
  for (const [event, command] of cases) assert.equal(commandFor(event), command, JSON.stringify(event));
});

test('keys the outliner leaves to the browser find none', () => {
  assert.equal(commandFor(key('Enter', { shiftKey: true })), null, 'a line break within a bullet');
  assert.equal(commandFor(key('Enter', { altKey: true })), null);
  assert.equal(commandFor(key('Backspace')), null, 'a bullet with text: the browser deletes a character');
  assert.equal(commandFor(key('a')), null);
});

test('Backspace deletes only an empty bullet', () => {
  assert.equal(commandFor(key('Backspace'), { empty: true }), 'deleteEmpty');
});

test('the table names each command once', () => {
  const names = keyCommands.map((row) => row.command);
  assert.equal(new Set(names).size, names.length);
});
