// Read a BPMN file on stdin through bpmn-moddle with the modeler's spiffworkflow descriptor and
// write it back on stdout, as the modeler's "save" does (tests/test_modeler.py checks that the
// spiffworkflow extension elements survive and the result still passes the server's validation).
// Exit 1 with the reader's warnings on stderr when it could not read every element.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { BpmnModdle } from 'bpmn-moddle';

const here = dirname(fileURLToPath(import.meta.url));
const descriptor = JSON.parse(readFileSync(join(here, 'spiffworkflow.json'), 'utf8'));
const moddle = new BpmnModdle({ spiffworkflow: descriptor });
const { rootElement, warnings } = await moddle.fromXML(readFileSync(0, 'utf8'), 'bpmn:Definitions');
if (warnings.length) {
  process.stderr.write(warnings.map((warning) => warning.message).join('\n') + '\n');
  process.exit(1);
}
const { xml } = await moddle.toXML(rootElement, { format: true });
process.stdout.write(xml);
