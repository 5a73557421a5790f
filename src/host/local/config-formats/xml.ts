/**
 * The `xml` parser, through the DOM (@xmldom/xmldom): a match is a dotted element path from the
 * root element (`root.child.leaf`, `*` for any element); missing elements of a path without `*`
 * are made, indented like their siblings. A value `[attr='v']` sets an attribute, any other value
 * the element's leading text, as Wings' etree does. An empty file gets a root element when a rule
 * names one; deeper nesting than MAX_NESTING is refused before the file is parsed.
 */
import {
  DOMParser,
  XMLSerializer,
  onErrorStopParsing,
  type Document as XmlDocument,
  type Element,
  type Node as XmlNode,
} from '@xmldom/xmldom';
import { ConfigFileError, decide, MAX_NESTING, tooDeep, type Replacement } from './replacement.js';

/** Element nesting, counted from the tags (comments and CDATA skipped). */
function xmlNesting(content: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = content.indexOf('<'); i !== -1; i = content.indexOf('<', i + 1)) {
    const end = content.startsWith('<!--', i)
      ? content.indexOf('-->', i)
      : content.startsWith('<![CDATA[', i)
        ? content.indexOf(']]>', i)
        : content.indexOf('>', i);
    if (end < 0) break;
    const next = content[i + 1];
    if (next === '/') depth -= 1;
    else if (next !== '!' && next !== '?' && content[end - 1] !== '/') {
      deepest = Math.max(deepest, (depth += 1));
    }
    i = end;
  }
  return deepest;
}

const isBlank = (node: XmlNode | null | undefined): node is XmlNode =>
  node?.nodeType === node?.TEXT_NODE && (node?.nodeValue ?? '').trim() === '';

/**
 * Appends `child` to `parent` indented like its last element (`\n  <last/>\n` gets
 * `\n  <child/>` before the final line break); a parent without that layout gets it plainly.
 */
function appendIndented(doc: XmlDocument, parent: Element, child: Element): void {
  const nodes = Array.from(parent.childNodes);
  const lastElement = nodes.findLastIndex((node) => node.nodeType === node.ELEMENT_NODE);
  const indent = nodes[lastElement - 1];
  const closing = nodes.at(-1);
  if (lastElement > 0 && isBlank(indent) && isBlank(closing) && closing !== indent) {
    parent.insertBefore(doc.createTextNode(indent.nodeValue ?? ''), closing);
    parent.insertBefore(child, closing);
  } else parent.appendChild(child);
}

const XML_NAME = /^(?:\*|[A-Za-z_][\w:-]*)$/;
const XML_ATTRIBUTE = /^\[(\w+)='(.*)'\]$/;

const elementsOf = (parent: Element, name: string): Element[] =>
  Array.from(parent.childNodes).filter(
    (node): node is Element =>
      node.nodeType === node.ELEMENT_NODE && (name === '*' || (node as Element).tagName === name),
  );

export function editXml(content: string, replacements: readonly Replacement[]): string {
  if (xmlNesting(content) > MAX_NESTING) throw tooDeep();
  const parse = (text: string): XmlDocument => {
    try {
      return new DOMParser({
        onError: onErrorStopParsing,
        normalizeLineEndings: (source) => source,
      }).parseFromString(text, 'text/xml');
    } catch (error) {
      throw new ConfigFileError(`The file is not valid XML: ${(error as Error).message}`);
    }
  };
  const first = replacements.find((replacement) => replacement.ifValue === null);
  if (content.trim() === '' && !first) return content;
  const rootName = first?.match.split('.')[0] ?? '';
  if (content.trim() === '' && (!XML_NAME.test(rootName) || rootName === '*')) {
    throw new ConfigFileError(`${JSON.stringify(rootName)} is not an element name`);
  }
  const source =
    content.trim() === '' ? `<?xml version="1.0" encoding="utf-8"?>\n<${rootName}/>\n` : content;
  const doc = parse(source);
  const root = doc.documentElement;
  if (!root) throw new ConfigFileError('The file has no root element');
  const state = { changed: content.trim() === '' };
  for (const replacement of replacements) {
    const parts = replacement.match.split('.');
    if (!parts.every((part) => XML_NAME.test(part))) {
      throw new ConfigFileError(`${JSON.stringify(replacement.match)} is not an element path`);
    }
    const [top = '', ...below] = parts;
    if (top !== '*' && top !== root.tagName) {
      if (replacement.ifValue !== null) continue;
      throw new ConfigFileError(`The root element is <${root.tagName}>, not <${top}>`);
    }
    if (replacement.ifValue === null && !parts.includes('*')) {
      let element = root;
      for (const name of below) {
        const found = elementsOf(element, name)[0];
        if (found) element = found;
        else {
          const made = doc.createElement(name);
          appendIndented(doc, element, made);
          element = made;
          state.changed = true;
        }
      }
    }
    let elements = [root];
    for (const name of below) elements = elements.flatMap((element) => elementsOf(element, name));
    const attribute = XML_ATTRIBUTE.exec(replacement.value);
    for (const element of elements) {
      if (attribute) {
        const [, name = '', value = ''] = attribute;
        const current = element.hasAttribute(name) ? element.getAttribute(name) : null;
        const next = decide({ ...replacement, value }, current ?? undefined);
        if (next !== null && next !== current) {
          element.setAttribute(name, next);
          state.changed = true;
        }
        continue;
      }
      // The element's leading text, as Wings' etree reads and sets it; child elements stay.
      const leading: XmlNode[] = [];
      for (const node of Array.from(element.childNodes)) {
        if (node.nodeType !== node.TEXT_NODE && node.nodeType !== node.CDATA_SECTION_NODE) break;
        leading.push(node);
      }
      const current = leading.map((node) => node.nodeValue ?? '').join('');
      const next = decide(replacement, current);
      if (next === null || next === current) continue;
      for (const node of leading) element.removeChild(node);
      element.insertBefore(doc.createTextNode(next), element.firstChild);
      state.changed = true;
    }
  }
  if (!state.changed) return content;
  // The serializer drops what follows the root element; the file's own ending is kept.
  const ending = source.slice(source.trimEnd().length);
  return new XMLSerializer().serializeToString(doc).trimEnd() + ending;
}
