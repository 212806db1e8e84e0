// The modeler page (webapp/templates/admin/modeler.html): bpmn-js Modeler, its properties panel with
// the spiffworkflow groups, bpmnlint in the browser, the forms editor, and the server's verdict shown
// on the diagram. Data and URLs come from the data- attributes of #modeler-app; every POST carries
// the CSRF token in the X-CSRFToken header. No inline script, no CDN.

import BpmnModeler from 'bpmn-js/lib/Modeler';
import { BpmnPropertiesPanelModule, BpmnPropertiesProviderModule } from 'bpmn-js-properties-panel';
import lintModule from 'bpmn-js-bpmnlint';

import bpmnlintConfig from './packed-config.js';
import spiffworkflowDescriptor from './spiffworkflow.json';
import { SpiffPropertiesModule } from './spiff-properties.js';

const FORM_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,98}\.json$/;
const NEW_FORM = '{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n  "type": "object",\n'
  + '  "properties": {},\n  "required": []\n}\n';

const app = document.getElementById('modeler-app');
const $ = (id) => document.getElementById(id);
// The page's texts in its language (data-texts of #modeler-app, from webapp/web/modeler.py), with %(name)s fields.
const TEXTS = JSON.parse(app.dataset.texts || '{}');
const t = (key, params = {}) => (TEXTS[key] || key).replace(/%\((\w+)\)s/g, (match, name) => String(params[name] ?? ''));
const state = { revision: null, forms: {}, selected: null, dirty: false, problemOverlays: [], marked: [] };

const modeler = new BpmnModeler({
  container: '#modeler-canvas',
  propertiesPanel: { parent: '#modeler-properties' },
  additionalModules: [ BpmnPropertiesPanelModule, BpmnPropertiesProviderModule, SpiffPropertiesModule, lintModule ],
  moddleExtensions: { spiffworkflow: spiffworkflowDescriptor },
  linting: { bpmnlint: bpmnlintConfig, active: true }
});

function status(message, kind) {
  const line = $('modeler-status');
  line.textContent = message;
  line.className = `modeler-status ${kind || ''}`;
}

async function request(url, body) {
  const options = body === undefined
    ? { credentials: 'same-origin', headers: { Accept: 'application/json' } }
    : {
      method: 'POST', credentials: 'same-origin', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': app.dataset.csrfToken }
    };
  const response = await fetch(url, options);
  let data = null;
  try {
    data = await response.json();
  } catch (error) {
    data = { error: { message: t('server_answered', { status: `${response.status} ${response.statusText}` }) } };
  }
  return { status: response.status, data };
}

function errorMessage(data) {
  return (data && data.error && data.error.message) || t('refused');
}

// -- problems on the diagram -----------------------------------------------------------------------------------

function clearProblems() {
  const overlays = modeler.get('overlays');
  const canvas = modeler.get('canvas');
  state.problemOverlays.forEach((id) => overlays.remove(id));
  state.marked.forEach(([ id, marker ]) => canvas.removeMarker(id, marker));
  state.problemOverlays = [];
  state.marked = [];
}

// verdict: the server's facts about the file (well-formed XML, valid BPMN 2.0, its processes, whether the
// process this installation runs can run here), shown above the problems; the same words as rule130 deploy.
function showProblems(problems, heading, verdict) {
  clearProblems();
  const list = $('modeler-problems');
  list.replaceChildren();
  const registry = modeler.get('elementRegistry');
  const canvas = modeler.get('canvas');
  const overlays = modeler.get('overlays');
  if (heading) {
    const item = document.createElement('li');
    item.textContent = heading;
    item.className = 'heading';
    list.append(item);
  }
  if (verdict && verdict.summary) {
    const item = document.createElement('li');
    item.textContent = verdict.summary;
    item.className = 'verdict';
    list.append(item);
  }
  for (const problem of problems) {
    const item = document.createElement('li');
    item.className = `problem ${problem.severity}`;
    const where = [];
    if (problem.element_id) {
      where.push(problem.element_id);
    }
    if (problem.line) {
      where.push(t('line', { line: problem.line }));
    }
    if (problem.path) {  // the line alone does not find the element (a file written on one line)
      where.push(problem.path);
    }
    item.textContent = `${t(problem.severity)}: ${where.length ? where.join(', ') + ': ' : ''}${problem.message}`;
    const element = problem.element_id && registry.get(problem.element_id);
    if (element) {
      const marker = problem.severity === 'error' ? 'rule130-problem' : 'rule130-warning';
      canvas.addMarker(element.id, marker);
      state.marked.push([ element.id, marker ]);
      const note = document.createElement('div');
      note.className = `rule130-problem-note ${problem.severity}`;
      note.textContent = problem.message;
      note.title = problem.message;
      state.problemOverlays.push(overlays.add(element.id, 'rule130-problem', {
        position: { bottom: 4, left: 0 }, html: note
      }));
      item.classList.add('on-diagram');
      item.tabIndex = 0;
      const reveal = () => {
        modeler.get('selection').select(element);
        canvas.scrollToElement(element);
      };
      item.addEventListener('click', reveal);
      item.addEventListener('keydown', (event) => { if (event.key === 'Enter') reveal(); });
    }
    list.append(item);
  }
  const first = problems.map((p) => p.element_id && registry.get(p.element_id)).find(Boolean);
  if (first) {  // bring the first element with a problem into view at a readable size
    canvas.zoom(1);
    canvas.scrollToElement(first);
  }
  if (!problems.length && !heading) {
    const item = document.createElement('li');
    item.textContent = t('no_problems');
    list.append(item);
  }
}

// -- forms -----------------------------------------------------------------------------------------------------

function renderForms() {
  const select = $('modeler-form-list');
  select.replaceChildren();
  for (const name of Object.keys(state.forms).sort()) {
    const option = document.createElement('option');
    option.value = name;
    option.textContent = name;
    option.selected = name === state.selected;
    select.append(option);
  }
  const text = $('modeler-form-text');
  text.value = state.selected ? state.forms[state.selected] : '';
  text.disabled = !state.selected;
}

function bindForms() {
  $('modeler-form-list').addEventListener('change', (event) => {
    state.selected = event.target.value;
    renderForms();
  });
  $('modeler-form-text').addEventListener('input', (event) => {
    if (state.selected) {
      state.forms[state.selected] = event.target.value;
      state.dirty = true;
    }
  });
  $('modeler-form-add').addEventListener('click', () => {
    const name = $('modeler-form-name').value.trim();
    if (!FORM_NAME.test(name)) {
      status(t('bad_form_name'), 'error');
      return;
    }
    if (name in state.forms) {
      status(t('form_exists', { name }), 'error');
      return;
    }
    state.forms[name] = NEW_FORM;
    state.selected = name;
    state.dirty = true;
    $('modeler-form-name').value = '';
    renderForms();
  });
  $('modeler-form-remove').addEventListener('click', () => {
    if (state.selected && window.confirm(t('remove_form', { name: state.selected }))) {
      delete state.forms[state.selected];
      state.selected = Object.keys(state.forms).sort()[0] || null;
      state.dirty = true;
      renderForms();
    }
  });
}

// -- loading, saving, validating, deploying ---------------------------------------------------------------------

async function collect() {
  const { xml } = await modeler.saveXML({ format: true });
  return { bpmn: xml, forms: { ...state.forms } };
}

function describe(source) {
  const version = source.version;
  if (source.draft) {
    const draft = source.draft;
    return t('draft', { revision: draft.revision, when: draft.saved_at_text, who: draft.saved_by,
      base: draft.base_version, number: version.number });
  }
  return t(version.note ? 'version_note' : 'version', { number: version.number, when: version.deployed_at_text,
    who: version.deployed_by, note: version.note });
}

async function load() {
  const { status: code, data } = await request(app.dataset.sourceUrl);
  if (code !== 200) {
    status(errorMessage(data), 'error');
    return;
  }
  state.revision = data.draft ? data.draft.revision : null;
  state.forms = data.forms;
  state.selected = Object.keys(state.forms).sort()[0] || null;
  renderForms();
  try {
    const { warnings } = await modeler.importXML(data.bpmn);
    modeler.get('canvas').zoom('fit-viewport');
    status(describe(data) + (warnings.length ? ` ${t('import_warnings', { count: warnings.length })}` : ''), 'info');
  } catch (error) {
    status(t('not_drawn', { error: error.message }), 'error');
  }
  state.dirty = false;
  showProblems([], t('not_validated'));
}

async function validate() {
  status(t('validating'));
  const { status: code, data } = await request(app.dataset.validateUrl, await collect());
  if (code === 200) {
    showProblems(data.problems, data.problems.length ? null : t('valid_diagram'), data.verdict);
    status(t(data.problems.length ? 'valid_warnings' : 'valid_forms'), 'success');
    return true;
  }
  showProblems((data.error && data.error.problems) || [], null, data.error && data.error.verdict);
  status(t('not_valid', { error: errorMessage(data) }), 'error');
  return false;
}

async function save() {
  status(t('saving'));
  const body = await collect();
  body.revision = state.revision;
  const { status: code, data } = await request(app.dataset.saveUrl, body);
  if (code !== 200) {
    showProblems((data.error && data.error.problems) || []);
    status(t('not_saved', { error: errorMessage(data) }), 'error');
    return false;
  }
  state.revision = data.draft.revision;
  state.dirty = false;
  showProblems(data.problems, data.valid && !data.problems.length ? t('valid_draft') : null);
  status(t(data.valid ? 'saved_ok' : 'saved_bad', { revision: data.draft.revision, who: data.draft.saved_by }),
    data.valid ? 'success' : 'error');
  return data.valid;
}

async function deploy() {
  const note = $('modeler-note').value.trim();
  if (!note) {
    status(t('need_note'), 'error');
    $('modeler-note').focus();
    return;
  }
  if (!(await save())) {
    return;
  }
  status(t('deploying'));
  const { status: code, data } = await request(app.dataset.deployUrl, { revision: state.revision, note });
  if (code === 201 || code === 200) {
    await load();
    status(code === 201
      ? t('deployed', { number: data.version.number })
      : t('already_deployed', { number: data.version.number }), 'success');
    $('modeler-note').value = '';
    return;
  }
  showProblems((data.error && data.error.problems) || []);
  status(t('not_deployed', { error: errorMessage(data) }), 'error');
}

async function discard() {
  if (state.revision === null) {
    status(t('no_draft'));
    await load();
    return;
  }
  if (!window.confirm(t('confirm_discard'))) {
    return;
  }
  const { status: code, data } = await request(app.dataset.discardUrl, { revision: state.revision });
  if (code !== 200) {
    status(t('not_discarded', { error: errorMessage(data) }), 'error');
    return;
  }
  await load();
}

function openFile(event) {
  const file = event.target.files[0];
  if (!file) {
    return;
  }
  const reader = new FileReader();
  reader.onload = async () => {
    const text = String(reader.result);
    try {
      await modeler.importXML(text);
      modeler.get('canvas').zoom('fit-viewport');
      state.dirty = true;
      status(t('opened', { name: file.name }), 'info');
      await validate();
    } catch (error) {
      // bpmn-js could not read it: ask the server, whose message names the line.
      const { data } = await request(app.dataset.validateUrl, { bpmn: text, forms: state.forms });
      showProblems((data.error && data.error.problems) || []);
      status(t('cannot_open', { name: file.name, error: errorMessage(data) }), 'error');
    }
    event.target.value = '';
  };
  reader.readAsText(file);
}

async function download(event) {
  event.preventDefault();
  const { xml } = await modeler.saveXML({ format: true });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([ xml ], { type: 'application/xml' }));
  link.download = `${app.dataset.processId}.bpmn`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function guard(action) {
  return async () => {
    const buttons = app.querySelectorAll('.modeler-toolbar button');
    buttons.forEach((button) => { button.disabled = true; });
    try {
      await action();
    } catch (error) {
      status(t('went_wrong', { error: error.message }), 'error');
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
  };
}

modeler.on('commandStack.changed', () => { state.dirty = true; });
window.addEventListener('beforeunload', (event) => {
  if (state.dirty) {
    event.preventDefault();
    event.returnValue = '';
  }
});
$('modeler-save').addEventListener('click', guard(save));
$('modeler-validate').addEventListener('click', guard(validate));
$('modeler-deploy').addEventListener('click', guard(deploy));
$('modeler-discard').addEventListener('click', guard(discard));
$('modeler-open').addEventListener('change', openFile);
$('modeler-download').addEventListener('click', download);
bindForms();
guard(load)();
