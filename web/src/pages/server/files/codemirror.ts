/**
 * The editor's CodeMirror set-up, no React. The editor lives in a shadow root: there CodeMirror's
 * style-mod puts its styles in a constructed, adopted stylesheet, which the panel's
 * Content-Security-Policy (`style-src 'self'`) allows; in the document itself it would add
 * `<style>` elements, which the policy blocks. Colours come from the page's tokens, which
 * custom properties carry into the shadow root.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';
import {
  HighlightStyle,
  StreamLanguage,
  syntaxHighlighting,
  type StreamParser,
} from '@codemirror/language';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { toml } from '@codemirror/legacy-modes/mode/toml';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { EditorState, type Extension } from '@codemirror/state';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { tags } from '@lezer/highlight';
import type { EditorLanguage } from './language';

/** Server logs: the level and the time stamp stand out, the rest is plain. */
const log: StreamParser<null> = {
  name: 'log',
  startState: () => null,
  token(stream) {
    if (stream.match(/^\[?\d{2,4}[-:/]\d{2}[-:/][\d:.\sT-]*\]?/)) return 'comment';
    if (stream.match(/^(ERROR|SEVERE|FATAL)\b/)) return 'invalid';
    if (stream.match(/^(WARN|WARNING)\b/)) return 'keyword';
    if (stream.match(/^(INFO|DEBUG|TRACE)\b/)) return 'atom';
    stream.next();
    stream.eatWhile(/[^\s[\dA-Z]/);
    return null;
  },
};

function language(kind: EditorLanguage): Extension {
  switch (kind) {
    case 'json':
      return json();
    case 'yaml':
      return yaml();
    case 'properties':
    case 'ini':
      // The properties mode reads INI sections (`[name]`) too.
      return StreamLanguage.define(properties);
    case 'toml':
      return StreamLanguage.define(toml);
    case 'shell':
      return StreamLanguage.define(shell);
    case 'log':
      return StreamLanguage.define(log);
    case 'text':
      return [];
  }
}

const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.heading], color: 'var(--syntax-keyword)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--syntax-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--syntax-number)' },
  { tag: [tags.comment, tags.meta], color: 'var(--syntax-comment)', fontStyle: 'italic' },
  {
    tag: [tags.propertyName, tags.definition(tags.propertyName), tags.variableName],
    color: 'var(--syntax-property)',
  },
  { tag: tags.invalid, color: 'var(--danger-text)', fontWeight: '600' },
]);

const theme = EditorView.theme({
  '&': {
    color: 'var(--text)',
    backgroundColor: 'var(--surface)',
    border: '1px solid var(--border-strong)',
    borderRadius: 'var(--radius)',
    height: '100%',
    fontSize: '0.92rem',
  },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': {
    backgroundColor: 'var(--surface-sunken)',
    color: 'var(--muted)',
    borderRight: '1px solid var(--border)',
  },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--editor-active-line)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': {
    backgroundColor: 'var(--editor-selection)',
  },
  '.cm-panels': { backgroundColor: 'var(--surface-sunken)', color: 'var(--text)' },
});

export interface EditorOptions {
  readonly parent: HTMLElement;
  readonly root: ShadowRoot;
  readonly content: string;
  readonly language: EditorLanguage;
  /** The accessible name of the text area. */
  readonly label: string;
  readonly onChange: (content: string) => void;
  /** Ctrl+S (Cmd+S on macOS). */
  readonly onSave: () => void;
  /** Shown, selectable and searchable, but not changed (the caller lacks `files.write`). */
  readonly readOnly?: boolean;
}

export function createEditor(options: EditorOptions): EditorView {
  return new EditorView({
    parent: options.parent,
    root: options.root,
    state: EditorState.create({
      doc: options.content,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        highlightSelectionMatches(),
        // Tab is left to move the focus on: the editor must not trap keyboard users.
        keymap.of([
          {
            key: 'Mod-s',
            preventDefault: true,
            run: () => {
              options.onSave();
              return true;
            },
          },
          ...defaultKeymap,
          ...historyKeymap,
          ...searchKeymap,
        ]),
        language(options.language),
        syntaxHighlighting(highlight),
        theme,
        EditorState.readOnly.of(options.readOnly === true),
        EditorView.contentAttributes.of({ 'aria-label': options.label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
}
