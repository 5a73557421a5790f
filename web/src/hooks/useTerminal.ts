/**
 * The live console's terminal: an xterm.js terminal with its fit and search addons, made when its
 * element is attached and disposed when it goes, in the panel's dark theme. Only the Console page
 * imports it, and that page is loaded on its own (React.lazy): so the terminal's code is fetched
 * only when a server page opens.
 */
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useCallback, useState } from 'react';
import { installAdoptedStyles } from '../console/adoptedStyles';
import type { TerminalLike } from './useConsole';

/**
 * The terminal is dark in both themes. Every ANSI colour reads at 4.5:1 or more against its
 * background (WCAG AA; the e2e journeys check it with axe-core): xterm's own red and blue do not.
 */
const THEME = {
  background: '#111412',
  foreground: '#dfe5e0',
  cursor: '#dfe5e0',
  selectionBackground: '#3c5a48',
  black: '#7c827e',
  red: '#f0524f',
  green: '#5cc46a',
  yellow: '#e5c04b',
  blue: '#5c9cf5',
  magenta: '#d67ce8',
  cyan: '#3fc5c5',
  white: '#d0d5d2',
  brightBlack: '#9aa09c',
  brightRed: '#ff7a74',
  brightGreen: '#85e08e',
  brightYellow: '#f5dc7a',
  brightBlue: '#8ab8ff',
  brightMagenta: '#eaa2f7',
  brightCyan: '#7ee0e0',
  brightWhite: '#ffffff',
} as const;

export interface SearchableTerminal extends TerminalLike {
  /** Selects and shows the next or previous match; false when there is none. */
  find(text: string, direction: 'next' | 'previous'): boolean;
}

/**
 * The terminal, made when its element is attached and disposed when it goes (a ref callback with
 * its cleanup): the element to attach it to, and the terminal once it exists.
 */
export function useTerminal(): [
  (host: HTMLDivElement | null) => (() => void) | undefined,
  SearchableTerminal | null,
] {
  const [terminal, setTerminal] = useState<SearchableTerminal | null>(null);
  const attach = useCallback((host: HTMLDivElement | null) => {
    if (host === null) return undefined;
    const uninstall = installAdoptedStyles(document);
    const created = new Terminal({
      convertEol: false,
      disableStdin: true,
      cursorBlink: false,
      cursorInactiveStyle: 'none',
      scrollback: 5000,
      fontFamily: "ui-monospace, 'SFMono-Regular', 'DejaVu Sans Mono', Menlo, Consolas, monospace",
      fontSize: 13,
      theme: THEME,
    });
    const fit = new FitAddon();
    const search = new SearchAddon();
    created.loadAddon(fit);
    created.loadAddon(search);
    created.open(host);
    const refit = () => {
      // Hidden or not laid out yet: nothing to fit to.
      if (host.clientWidth > 0 && host.clientHeight > 0) fit.fit();
    };
    refit();
    const observer = new ResizeObserver(refit);
    observer.observe(host);
    setTerminal({
      reset: () => {
        created.reset();
      },
      write: (data) => {
        created.write(data);
      },
      find: (text, direction) =>
        direction === 'next' ? search.findNext(text) : search.findPrevious(text),
    });
    return () => {
      observer.disconnect();
      created.dispose();
      uninstall();
      setTerminal(null);
    };
  }, []);
  return [attach, terminal];
}
