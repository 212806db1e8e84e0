// The modeler page (webapp/templates/admin/modeler.html): bpmn-js Modeler, its properties panel with
// the spiffworkflow groups, bpmnlint in the browser, the forms editor, and the server's verdict shown
// on the diagram. Data and URLs come from the data- attributes of #modeler-app; every POST carries
// the CSRF token in the X-CSRFToken header. No inline script, no CDN.

import BpmnModeler from 'bpmn-js/lib/Modeler';
import { BpmnPropertiesPanelModule, BpmnPropertiesProviderModule } from 'bpmn-js-properties-panel';
import { is } from 'bpmn-js/lib/util/ModelUtil';

import { renderFormEditor } from './form-editor.js';
import rule130Descriptor from './rule130-names.json';
import spiffworkflowDescriptor from './spiffworkflow.json';
import { HindiNamesModule, SpiffPropertiesModule, formFileOf, hindiName, setHindiCatalogue } from './spiff-properties.js';

const FORM_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,98}\.json$/;
const NEW_FORM = '{\n  "$schema": "https://json-schema.org/draft/2020-12/schema",\n  "type": "object",\n'
  + '  "properties": {},\n  "required": []\n}\n';
// Room kept around an element brought into view: the palette (top left) and the note below it stay clear.
const CLEAR_OF_PALETTE = { top: 60, left: 160, right: 60, bottom: 180 };
const CHECK_DELAY = 800;  // ms after the last change before the server is asked for its verdict
const PREVIEW_DELAY = 500;  // ms after the last edit of a form before its preview is rendered again

const app = document.getElementById('modeler-app');
const $ = (id) => document.getElementById(id);
// The page's texts in its language (data-texts of #modeler-app, from webapp/web/admin/modeler.py), with %(name)s fields.
const TEXTS = JSON.parse(app.dataset.texts || '{}');
const t = (key, params = {}) => (TEXTS[key] || key).replace(/%\((\w+)\)s/g, (match, name) => String(params[name] ?? ''));
const state = { revision: null, forms: {}, schemas: {}, selected: null, view: 'form', dirty: false, hindi: {},
  problemOverlays: [], marked: [], loading: false, checkTimer: null, previewTimer: null, checks: 0 };

// No linter in the browser: the badge shows the server's own verdict (the checks of rule130 deploy), asked
// for after every change, so the two can never disagree.
const modeler = new BpmnModeler({
  container: '#modeler-canvas',
  propertiesPanel: { parent: '#modeler-properties' },
  additionalModules: [ BpmnPropertiesPanelModule, BpmnPropertiesProviderModule, SpiffPropertiesModule, HindiNamesModule ],
  moddleExtensions: { spiffworkflow: spiffworkflowDescriptor, rule130: rule130Descriptor }
});

// The scale the diagram opens at: bpmn-js draws its labels at 12 px, so at 1 they are 12 px on screen
// (the whole Rule 130 diagram fitted into the box would make them about 3 px).
const READABLE = 1;
const PALETTE_GAP = 24;  // px left free between the palette's right edge and the diagram

// Fit the whole diagram to its box (the "Whole diagram" button); a box with no size yet (a hidden tab, a
// phone turned mid-load) would give bpmn-js a non-finite scale, so the diagram is then shown at 100 % instead.
function fitDiagram() {
  const canvas = modeler.get('canvas');
  const box = $('modeler-canvas').getBoundingClientRect();
  canvas.zoom(box.width > 0 && box.height > 0 ? 'fit-viewport' : 1);
}

// The view the diagram opens with: at the readable scale, the start event in the middle of the box's
// height on the screen, and the leftmost element of that band (the pool with its lane names) just right of the palette:
// the diagram reads from the start event to the right, and the palette covers none of it.
function openView() {
  const canvas = modeler.get('canvas');
  const box = $('modeler-canvas').getBoundingClientRect();
  canvas.zoom(READABLE);
  const registry = modeler.get('elementRegistry');
  // the process's own start event (not one of a sub-process), where the case begins
  const start = registry.filter((e) => is(e, 'bpmn:StartEvent') && !e.labelTarget
    && is(e.businessObject.$parent, 'bpmn:Process'))[0];
  if (!start || !(box.width > 0 && box.height > 0)) {
    return;
  }
  const width = box.width / READABLE;
  const height = box.height / READABLE;
  // the middle of the part of the box on the screen (a canvas taller than what is left of the window)
  const shown = (Math.max(box.top, 0) + Math.min(box.bottom, window.innerHeight || box.bottom)) / 2 - box.top;
  const top = start.y + start.height / 2 - shown / READABLE;
  const root = canvas.getRootElement();
  // what is drawn in that band, the pool and its lanes with their names included
  const band = registry.filter((e) => e !== root && e.width !== undefined && e.y < top + height && e.y + e.height > top);
  const palette = document.querySelector('#modeler-canvas .djs-palette');
  const clear = ((palette ? palette.getBoundingClientRect().right - box.left : 0) + PALETTE_GAP) / READABLE;
  const leftmost = Math.min(start.x, ...band.map((e) => e.x));
  canvas.viewbox({ x: leftmost - clear, y: top, width, height });
}

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
function showProblems(problems, heading, verdict, reveal = true) {
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
      // the first clause on the diagram (the whole message in its title and in the list below)
      const clause = problem.message.split(/; /)[0];
      note.textContent = clause.length > 140 ? `${clause.slice(0, 139)}…` : clause;
      note.title = problem.message;
      state.problemOverlays.push(overlays.add(element.id, 'rule130-problem', {
        position: { bottom: 4, left: 0 }, html: note
      }));
      item.classList.add('on-diagram');
      item.tabIndex = 0;
      const reveal = () => {
        modeler.get('selection').select(element);
        canvas.scrollToElement(element, CLEAR_OF_PALETTE);
      };
      item.addEventListener('click', reveal);
      item.addEventListener('keydown', (event) => { if (event.key === 'Enter') reveal(); });
    }
    list.append(item);
  }
  const first = reveal && problems.map((p) => p.element_id && registry.get(p.element_id)).find(Boolean);
  if (first) {  // bring the first element with a problem into view at a readable size
    canvas.zoom(1);
    canvas.scrollToElement(first, CLEAR_OF_PALETTE);
  }
  if (!problems.length && !heading) {
    const item = document.createElement('li');
    item.textContent = t('no_problems');
    list.append(item);
  }
}

// -- forms -----------------------------------------------------------------------------------------------------

function parseForm(name) {
  try {
    const parsed = JSON.parse(state.forms[name]);
    state.schemas[name] = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  } catch (error) {
    state.schemas[name] = null;
    return error.message;
  }
  return state.schemas[name] ? null : 'not an object';
}

function formChanged() {
  state.forms[state.selected] = `${JSON.stringify(state.schemas[state.selected], null, 2)}\n`;
  $('modeler-form-text').value = state.forms[state.selected];
  changed();
  schedulePreview();
}

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
  const editor = $('modeler-form-editor');
  if (state.selected && state.view === 'form' && parseForm(state.selected)) {
    state.view = 'json';  // a form that is not JSON opens as its text, to be mended there
  }
  $('modeler-form-fields').hidden = state.view !== 'form';
  $('modeler-form-json').hidden = state.view !== 'json';
  $('modeler-form-view-form').setAttribute('aria-pressed', String(state.view === 'form'));
  $('modeler-form-view-json').setAttribute('aria-pressed', String(state.view === 'json'));
  if (!state.selected) {
    editor.replaceChildren(t('no_form'));
  } else if (state.view === 'form') {
    renderFormEditor(editor, state.schemas[state.selected], { t, catalogue: state.hindi, changed: formChanged });
  }
  schedulePreview(0);
}

// The name of the task that shows the form, in the preview's language: on a Hindi page its Hindi (its own,
// else the catalogue's), the English name only where it has none yet.
function taskNaming(form, language) {
  const task = modeler.get('elementRegistry').filter((e) => is(e, 'bpmn:UserTask') && formFileOf(e) === form)[0];
  if (!task) {
    return '';
  }
  return (language === 'hi' && hindiName(task)) || task.businessObject.name || '';
}

function schedulePreview(delay = PREVIEW_DELAY) {
  clearTimeout(state.previewTimer);
  state.previewTimer = setTimeout(() => { preview().catch(() => {}); }, delay);
}

async function preview() {
  const name = state.selected;
  const frames = { en: $('modeler-preview-en'), hi: $('modeler-preview-hi') };
  if (!name || !state.schemas[name]) {
    Object.values(frames).forEach((frame) => { frame.srcdoc = ''; });
    return;
  }
  const schema = state.schemas[name];
  await Promise.all(Object.entries(frames).map(async ([ language, frame ]) => {
    const task = taskNaming(name, language);
    const { status: code, data } = await request(app.dataset.previewUrl, { schema, language, task });
    if (state.selected !== name) return;
    frame.srcdoc = code === 200 ? data.html : `<p>${errorMessage(data).replace(/[<&]/g, '')}</p>`;
    frame.dataset.rendered = String(Number(frame.dataset.rendered || 0) + 1);
  }));
}

function bindForms() {
  $('modeler-form-list').addEventListener('change', (event) => {
    state.selected = event.target.value;
    state.view = 'form';
    renderForms();
  });
  $('modeler-form-text').addEventListener('input', (event) => {
    if (state.selected) {
      state.forms[state.selected] = event.target.value;
      parseForm(state.selected);
      changed();
      schedulePreview();
    }
  });
  $('modeler-form-view-form').addEventListener('click', () => {
    const error = state.selected && parseForm(state.selected);
    if (error) {
      status(t('not_json', { error }), 'error');
      return;
    }
    state.view = 'form';
    renderForms();
  });
  $('modeler-form-view-json').addEventListener('click', () => {
    state.view = 'json';
    renderForms();
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
    state.view = 'form';
    $('modeler-form-name').value = '';
    changed();
    renderForms();
  });
  $('modeler-form-remove').addEventListener('click', () => {
    if (state.selected && window.confirm(t('remove_form', { name: state.selected }))) {
      delete state.forms[state.selected];
      delete state.schemas[state.selected];
      state.selected = Object.keys(state.forms).sort()[0] || null;
      changed();
      renderForms();
    }
  });
}

// -- the server's verdict after every change ------------------------------------------------------------------

function badge(text, kind) {
  const line = $('modeler-badge');
  line.textContent = text;
  line.className = `modeler-badge ${kind || ''}`;
}

function changed() {
  if (state.loading) return;
  state.dirty = true;
  scheduleCheck();
}

function scheduleCheck(delay = CHECK_DELAY) {
  clearTimeout(state.checkTimer);
  badge(t('checking'), 'pending');
  state.checkTimer = setTimeout(() => { check().catch((error) => badge(t('went_wrong', { error: error.message }), 'error')); }, delay);
}

// Ask the server for its verdict on what is on screen; a later check wins over an earlier one still under way.
async function check() {
  const asked = ++state.checks;
  const { status: code, data } = await request(app.dataset.validateUrl, await collect());
  if (asked !== state.checks) return null;
  const valid = code === 200;
  const problems = valid ? data.problems : (data.error && data.error.problems) || [];
  badge(data.badge || (valid ? t('valid_diagram') : errorMessage(data)), valid ? 'valid' : 'invalid');
  showProblems(problems, valid && !problems.length ? t('valid_diagram') : null,
    valid ? data.verdict : data.error && data.error.verdict, false);
  return valid;
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

function renderVersions(versions) {
  const list = $('modeler-versions');
  list.replaceChildren();
  for (const version of versions || []) {
    const item = document.createElement('li');
    item.dataset.version = String(version.number);
    item.textContent = t(version.note ? 'version_item_note' : 'version_item', { number: version.number,
      when: version.deployed_at_text, who: version.deployed_by, note: version.note_text || version.note });
    list.append(item);
  }
}

async function load() {
  const { status: code, data } = await request(app.dataset.sourceUrl);
  if (code !== 200) {
    status(errorMessage(data), 'error');
    return;
  }
  state.loading = true;
  try {
    state.revision = data.draft ? data.draft.revision : null;
    state.forms = data.forms;
    state.schemas = {};
    state.hindi = data.hindi || {};
    setHindiCatalogue(state.hindi, TEXTS);
    state.selected = state.selected in state.forms ? state.selected : Object.keys(state.forms).sort()[0] || null;
    $('modeler-current').textContent = t('current_version', { number: data.version.number });
    $('modeler-current').dataset.number = String(data.version.number);
    $('modeler-draft-state').textContent = describe(data);
    renderVersions(data.versions);
    try {
      const { warnings } = await modeler.importXML(data.bpmn);
      openView();
      // the version and draft are on the line below the status; the status line says only what is new
      status(warnings.length ? t('import_warnings', { count: warnings.length }) : '', 'info');
    } catch (error) {
      status(t('not_drawn', { error: error.message }), 'error');
    }
    renderForms();
  } finally {
    state.loading = false;
  }
  state.dirty = false;
  showProblems([], t('not_validated'));
  scheduleCheck(0);
}

async function validate() {
  status(t('validating'));
  const { status: code, data } = await request(app.dataset.validateUrl, await collect());
  badge(data.badge || '', code === 200 ? 'valid' : 'invalid');
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
  if (data.badge) badge(data.badge, data.valid ? 'valid' : 'invalid');
  $('modeler-draft-state').textContent = t('draft', { revision: data.draft.revision, when: data.draft.saved_at_text,
    who: data.draft.saved_by, base: data.draft.base_version, number: $('modeler-current').dataset.number || '' });
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
      openView();
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

modeler.on('commandStack.changed', changed);
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
$('modeler-fit').addEventListener('click', fitDiagram);
bindForms();
guard(load)();
