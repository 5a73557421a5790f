/**
 * xterm's DOM renderer writes its theme and layout into `<style>` elements it makes, and the
 * colour of 24-bit text into `style` attributes (`setAttribute('style', …)`). The UI's policy
 * (`style-src 'self'`, no `'unsafe-inline'`) blocks both. What the policy does not govern is the
 * CSSOM, so while a terminal lives, the document's `createElement` makes:
 *
 * - for `style`: an inert `<template>` whose `textContent` goes into a constructed stylesheet
 *   adopted by the document (`document.adoptedStyleSheets`), removed with the element;
 * - for `span` (xterm's cells): a span whose `setAttribute('style', …)` sets `style.cssText`.
 *
 * Nothing else in the UI creates `<style>` elements or sets style attributes, so the policy stays
 * as strict as it was. `install` returns the undo; nested installs are counted.
 */
type CreateElement = (
  this: Document,
  tagName: string,
  options?: ElementCreationOptions,
) => HTMLElement;

interface Installed {
  count: number;
  readonly original: CreateElement;
  readonly sheets: Set<CSSStyleSheet>;
}

const installed = new WeakMap<Document, Installed>();

function setAttributeViaCssom(this: HTMLElement, name: string, value: string): void {
  if (name.toLowerCase() === 'style') this.style.cssText = value;
  else Element.prototype.setAttribute.call(this, name, value);
}

function styleStandIn(doc: Document, original: CreateElement, sheets: Set<CSSStyleSheet>) {
  const element = original.call(doc, 'template');
  const view = doc.defaultView;
  if (view === null) return element;
  const sheet = new view.CSSStyleSheet();
  let text = '';
  sheets.add(sheet);
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  const drop = () => {
    sheets.delete(sheet);
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((adopted) => adopted !== sheet);
  };
  Object.defineProperty(element, 'textContent', {
    configurable: true,
    get: () => text,
    set: (value: string | null) => {
      text = value ?? '';
      sheet.replaceSync(text);
    },
  });
  Object.defineProperty(element, 'remove', {
    configurable: true,
    value: () => {
      drop();
      Element.prototype.remove.call(element);
    },
  });
  return element;
}

export function installAdoptedStyles(doc: Document): () => void {
  const existing = installed.get(doc);
  if (existing !== undefined) {
    existing.count += 1;
  } else {
    // The document's own method, from its prototype: an own property is this module's patch.
    const original = Reflect.get(
      Object.getPrototypeOf(doc) as object,
      'createElement',
    ) as CreateElement;
    const sheets = new Set<CSSStyleSheet>();
    const patched: CreateElement = function (this: Document, tagName, options) {
      const tag = tagName.toLowerCase();
      if (tag === 'style') return styleStandIn(doc, original, sheets);
      const element = original.call(this, tagName, options);
      if (tag === 'span') element.setAttribute = setAttributeViaCssom;
      return element;
    };
    Object.defineProperty(doc, 'createElement', {
      configurable: true,
      writable: true,
      value: patched,
    });
    installed.set(doc, { count: 1, original, sheets });
  }
  let undone = false;
  return () => {
    if (undone) return;
    undone = true;
    const current = installed.get(doc);
    if (current === undefined) return;
    current.count -= 1;
    if (current.count > 0) return;
    installed.delete(doc);
    delete (doc as { createElement?: unknown }).createElement;
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((sheet) => !current.sheets.has(sheet));
  };
}
