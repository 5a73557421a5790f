/**
 * What Wings' configuration-file parsers do to a file's text, as pure functions: `editConfig`
 * takes the text (`''` for a file that does not exist yet) and answers the new text, or the very
 * same string when nothing changed. Nothing here touches the disk (config-files.ts does). This
 * front checks the rules and picks the parser; each parser is a file of config-formats/ (`file`
 * in lines.ts, `properties`, `ini`, `json` and `yaml` on the walk of tree.ts, `xml`), sharing
 * replacement.ts.
 *
 * What a `match` means, per parser (docs/templates-config-files.md has examples):
 * - `properties`: a key; a missing key is appended as `key=value`. Values are written escaped
 *   the way Java reads them (`\uXXXX` for anything beyond ASCII, as Wings does).
 * - `ini`: `section.key` (the first dot splits; `[a.b].key` names the section `a.b`), or a bare
 *   key for the lines before the first section. A missing key is added to its section, a missing
 *   section at the end.
 * - `file`: every line that starts with the match is replaced, whole, by the value; nothing is
 *   added when no line matches. An empty match starts every line (Wings' `bytes.HasPrefix`), so
 *   it replaces each of them: how an egg rewrites a one-line file.
 * - `json`, `yaml`: a dotted path; `*` stands for every entry of an object or list, `name[0]` or
 *   a number is a list index. Missing objects on the way are made; `[0]` of a missing list makes
 *   the list.
 * - `xml`: a dotted element path from the root element (`root.child.leaf`, `*` for any element);
 *   missing elements of a path without `*` are made. A value `[attr='v']` sets an attribute.
 *
 * A replacement with `ifValue` changes only a value that exists and equals it (for `file`, the
 * whole line); `regex:<pattern>` instead matches a Go (RE2) regular expression, run in linear time
 * (docs/security.md, "Patterns"), and replaces every match with the value, where `$1`, `${1}` and
 * `${name}` are its groups. Comments, order and
 * untouched lines stay as they were (YAML through the `yaml` Document API, XML through the DOM).
 * Every error is a ConfigFileError (or a RangeError past the stack), and the caller keeps the
 * file as it was.
 */
import type { ConfigParser } from '../../domain/template.js';
import { editIni } from './config-formats/ini.js';
import { editJson } from './config-formats/json.js';
import { editLines } from './config-formats/lines.js';
import { editProperties } from './config-formats/properties.js';
import { ConfigFileError, type Replacement } from './config-formats/replacement.js';
import { editXml } from './config-formats/xml.js';
import { editYaml } from './config-formats/yaml.js';

export { ConfigFileError, MAX_NESTING, type Replacement } from './config-formats/replacement.js';

/**
 * Largest YAML or XML file parsed. Their parsers take about a second and a half per MiB at
 * worst, on the event loop; real config files are a few KiB. Line-based files and JSON are read
 * up to the caller's limit (4 MiB: well under half a second).
 */
export const MAX_TREE_BYTES = 256 * 1024;

export function editConfig(
  parser: ConfigParser,
  content: string,
  replacements: readonly Replacement[],
): string {
  for (const replacement of replacements) {
    if (replacement.match === '' && parser !== 'file') {
      throw new ConfigFileError('A replacement has an empty "match"');
    }
  }
  switch (parser) {
    case 'properties':
      return editProperties(content, replacements);
    case 'ini':
      return editIni(content, replacements);
    case 'file':
      return editLines(content, replacements);
    case 'json':
      return editJson(content, replacements);
    case 'yaml':
      return editYaml(treeSized(content), replacements);
    case 'xml':
      return editXml(treeSized(content), replacements);
  }
}

function treeSized(content: string): string {
  if (Buffer.byteLength(content) > MAX_TREE_BYTES) {
    throw new ConfigFileError(`The file is larger than ${MAX_TREE_BYTES / 1024} KiB`);
  }
  return content;
}
