// The form editor of the modeler: a user task's JSON Schema form edited as a form — its fields with
// their types, labels, help texts, limits and choices, in English and Hindi — with a JSON view for
// experts. The form is edited in place as the parsed JSON object, so every keyword the editor does not
// know (allOf, if/then, $defs, additionalProperties…) is kept exactly as it was when it saves.
// Hindi lives in the form itself: "translations": {"hi": {"title", "description", "enum": {value: label}}}
// on the schema node it translates (webapp/engine/forms/form_texts.py).

export const AMOUNT_PATTERN = '^[0-9]+(\\.[0-9]{1,2})?$';
const MULTILINE_LENGTH = 200;  // webapp/services/tasks/rules.py: a text longer than this is a text area
export const TYPES = [ 'text', 'long_text', 'amount', 'integer', 'number', 'choice' ];

// The editor's type of a field (JSON Schema property).
export function fieldType(prop) {
  if (Array.isArray(prop.enum)) return 'choice';
  if (prop.type === 'integer') return 'integer';
  if (prop.type === 'number') return 'number';
  if (prop.type === 'string' && typeof prop.pattern === 'string') return 'amount';
  if (prop.type === 'string' && Number(prop.maxLength ?? MULTILINE_LENGTH) > MULTILINE_LENGTH) return 'long_text';
  return 'text';
}

// Change a field's type: set the keywords of the new type, drop those of the old one that do not apply.
export function setFieldType(prop, type) {
  const numeric = type === 'integer' || type === 'number';
  if (type !== 'choice') delete prop.enum;
  if (type !== 'amount') delete prop.pattern;
  if (numeric) {
    prop.type = type;
    delete prop.minLength; delete prop.maxLength;
  } else {
    prop.type = 'string';
    delete prop.minimum; delete prop.maximum;
  }
  if (type === 'amount') { prop.pattern = AMOUNT_PATTERN; prop.maxLength = prop.maxLength || 15; }
  if (type === 'long_text') prop.maxLength = Math.max(Number(prop.maxLength) || 0, 2000);
  if (type === 'text' && Number(prop.maxLength) > MULTILINE_LENGTH) prop.maxLength = MULTILINE_LENGTH;
  if (type === 'choice' && !Array.isArray(prop.enum)) prop.enum = [ 'yes', 'no' ];
}

function hiOf(node, create) {
  if (create) {
    node.translations = node.translations && typeof node.translations === 'object' ? node.translations : {};
    node.translations.hi = node.translations.hi && typeof node.translations.hi === 'object' ? node.translations.hi : {};
  }
  return (node.translations && node.translations.hi) || {};
}

// The node's own Hindi of key (title, description), or ''.
export function hindiOf(node, key) {
  const value = hiOf(node, false)[key];
  return typeof value === 'string' ? value : '';
}

export function setHindi(node, key, value) {
  if (value) {
    hiOf(node, true)[key] = value;
    return;
  }
  delete hiOf(node, false)[key];
  tidy(node);
}

// Drop an empty "translations" (or its empty "hi") so that a form without Hindi stays as it was.
function tidy(node) {
  const hi = node.translations && node.translations.hi;
  if (hi && hi.enum && typeof hi.enum === 'object' && !Object.keys(hi.enum).length) delete hi.enum;
  if (hi && typeof hi === 'object' && !Object.keys(hi).length) delete node.translations.hi;
  if (node.translations && typeof node.translations === 'object' && !Object.keys(node.translations).length) {
    delete node.translations;
  }
}

function setText(node, key, value) {
  if (value) node[key] = value; else delete node[key];
}

function setNumber(node, key, value) {
  const text = String(value).trim();
  if (text === '' || !Number.isFinite(Number(text))) delete node[key]; else node[key] = Number(text);
}

// --- the DOM -------------------------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [ key, value ] of Object.entries(attrs)) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else if (value !== false && value !== undefined && value !== null) node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

function input(label, value, onchange, attrs = {}) {
  const field = el('input', { type: 'text', value: value ?? '', ...attrs });
  field.value = value ?? '';
  field.addEventListener('input', () => onchange(field.value));
  return el('label', { class: 'fe-input' }, el('span', {}, label), field);
}

// Render the editor for `schema` into `container`. t(key, params): the page's texts; catalogue:
// {English: Hindi} (placeholders for Hindi the form does not hold); changed(): called after each edit;
// structural edits (a field added, removed, moved, its type changed) redraw the editor.
export function renderFormEditor(container, schema, { t, catalogue, changed }) {
  const redraw = () => renderFormEditor(container, schema, { t, catalogue, changed });
  const edit = (fn, again = false) => (value) => { fn(value); changed(); if (again) redraw(); };
  const hiPlaceholder = (english) => (catalogue[english] ? t('hindi_from_catalogue', { hindi: catalogue[english] }) : '');
  container.replaceChildren();
  if (!schema.properties || typeof schema.properties !== 'object') schema.properties = {};

  const head = el('div', { class: 'fe-form-head' },
    input(t('form_title_en'), schema.title, edit((v) => setText(schema, 'title', v)), { 'data-key': 'form-title-en' }),
    input(t('form_title_hi'), hindiOf(schema, 'title'), edit((v) => setHindi(schema, 'title', v)),
      { 'data-key': 'form-title-hi', lang: 'hi', placeholder: hiPlaceholder(schema.title) }));
  container.append(head);

  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const setRequired = (name, on) => {
    const list = Array.isArray(schema.required) ? schema.required.filter((n) => n !== name) : [];
    if (on) list.push(name);
    schema.required = list;
  };
  const names = Object.keys(schema.properties);
  const reorder = (order) => {
    const props = schema.properties;
    schema.properties = Object.fromEntries(order.map((n) => [ n, props[n] ]));
  };
  const known = new Set([ 'type', 'title', 'description', 'enum', 'pattern', 'minimum', 'maximum', 'minLength',
    'maxLength', 'translations', 'default' ]);

  names.forEach((name, index) => {
    const prop = schema.properties[name];
    if (!prop || typeof prop !== 'object') return;
    const type = fieldType(prop);
    const box = el('fieldset', { class: 'fe-field', 'data-field': name });
    box.append(el('legend', {}, `${t('field')} ${index + 1}: `, el('code', {}, name)));

    const rename = el('input', { type: 'text', value: name, 'data-key': 'name', pattern: '[A-Za-z_][A-Za-z0-9_]*' });
    rename.value = name;
    rename.addEventListener('change', () => {
      const to = rename.value.trim();
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(to) || to === name || to in schema.properties) { rename.value = name; return; }
      const order = Object.keys(schema.properties).map((n) => (n === name ? to : n));
      schema.properties[to] = prop;
      delete schema.properties[name];
      reorder(order);
      if (required.has(name)) { setRequired(name, false); setRequired(to, true); }
      changed(); redraw();
    });
    const typeSelect = el('select', { 'data-key': 'type' },
      ...TYPES.map((k) => el('option', { value: k, selected: k === type }, t(`type_${k}`))));
    typeSelect.addEventListener('change', () => edit((v) => setFieldType(prop, v), true)(typeSelect.value));
    box.append(el('div', { class: 'fe-row' },
      el('label', { class: 'fe-input' }, el('span', {}, t('field_name')), rename),
      el('label', { class: 'fe-input' }, el('span', {}, t('field_type')), typeSelect),
      (() => {
        const box2 = el('input', { type: 'checkbox', 'data-key': 'required', checked: required.has(name) });
        box2.checked = required.has(name);
        box2.addEventListener('change', () => edit((on) => setRequired(name, on))(box2.checked));
        return el('label', { class: 'fe-check' }, box2, ` ${t('required')}`);
      })()));

    box.append(el('div', { class: 'fe-row' },
      input(t('label_en'), prop.title, edit((v) => setText(prop, 'title', v)), { 'data-key': 'label-en' }),
      input(t('label_hi'), hindiOf(prop, 'title'), edit((v) => setHindi(prop, 'title', v)),
        { 'data-key': 'label-hi', lang: 'hi', placeholder: hiPlaceholder(prop.title) })));
    box.append(el('div', { class: 'fe-row' },
      input(t('help_en'), prop.description, edit((v) => setText(prop, 'description', v)), { 'data-key': 'help-en' }),
      input(t('help_hi'), hindiOf(prop, 'description'), edit((v) => setHindi(prop, 'description', v)),
        { 'data-key': 'help-hi', lang: 'hi', placeholder: hiPlaceholder(prop.description) })));

    const limits = el('div', { class: 'fe-row' });
    if (type === 'integer' || type === 'number') {
      limits.append(
        input(t('minimum'), prop.minimum, edit((v) => setNumber(prop, 'minimum', v)), { 'data-key': 'minimum', inputmode: 'decimal' }),
        input(t('maximum'), prop.maximum, edit((v) => setNumber(prop, 'maximum', v)), { 'data-key': 'maximum', inputmode: 'decimal' }));
    } else if (type !== 'choice') {
      limits.append(
        input(t('min_length'), prop.minLength, edit((v) => setNumber(prop, 'minLength', v)), { 'data-key': 'minLength', inputmode: 'numeric' }),
        input(t('max_length'), prop.maxLength, edit((v) => setNumber(prop, 'maxLength', v)), { 'data-key': 'maxLength', inputmode: 'numeric' }));
    }
    if (type === 'amount') limits.append(el('p', { class: 'help' }, t('amount'), ' ', el('code', {}, prop.pattern)));
    box.append(limits);

    if (type === 'choice') {
      const list = el('div', { class: 'fe-choices' }, el('strong', {}, t('choices')));
      prop.enum.forEach((value, at) => {
        const hi = (hiOf(prop, false).enum || {})[value] || '';
        const words = String(value).replace(/_/g, ' ');
        list.append(el('div', { class: 'fe-row fe-choice', 'data-choice': String(value) },
          input(t('choice_value'), value, (v) => {
            const labels = hiOf(prop, false).enum;
            if (labels && value in labels) { labels[v] = labels[value]; delete labels[value]; }
            prop.enum[at] = v; value = v; changed();
          }, { 'data-key': 'choice-value' }),
          input(t('choice_hi'), hi, edit((v) => {
            const labels = hiOf(prop, true);
            labels.enum = labels.enum && typeof labels.enum === 'object' ? labels.enum : {};
            if (v) labels.enum[value] = v; else delete labels.enum[value];
            tidy(prop);
          }), { 'data-key': 'choice-hi', lang: 'hi', placeholder: hiPlaceholder(words) }),
          el('button', { type: 'button', class: 'secondary', onclick: () => edit(() => prop.enum.splice(at, 1), true)() },
            t('remove'))));
      });
      list.append(el('button', { type: 'button', class: 'secondary', 'data-key': 'add-choice',
        onclick: () => edit(() => prop.enum.push(`choice_${prop.enum.length + 1}`), true)() }, t('add_choice')));
      box.append(list);
    }

    const kept = Object.keys(prop).filter((k) => !known.has(k));
    if (kept.length) box.append(el('p', { class: 'help' }, t('kept_keywords', { keywords: kept.join(', ') })));
    box.append(el('div', { class: 'fe-row fe-actions' },
      el('button', { type: 'button', class: 'secondary', disabled: index === 0,
        onclick: () => edit(() => { const o = [ ...names ]; [ o[index - 1], o[index] ] = [ o[index], o[index - 1] ]; reorder(o); }, true)() },
      t('move_up')),
      el('button', { type: 'button', class: 'secondary', disabled: index === names.length - 1,
        onclick: () => edit(() => { const o = [ ...names ]; [ o[index + 1], o[index] ] = [ o[index], o[index + 1] ]; reorder(o); }, true)() },
      t('move_down')),
      el('button', { type: 'button', class: 'secondary', 'data-key': 'remove-field',
        onclick: () => edit(() => { delete schema.properties[name]; setRequired(name, false); }, true)() }, t('remove'))));
    container.append(box);
  });

  const keptTop = Object.keys(schema).filter((k) => ![ '$schema', 'title', 'description', 'type', 'properties', 'required',
    'translations' ].includes(k));
  if (keptTop.length) container.append(el('p', { class: 'help' }, t('kept_keywords', { keywords: keptTop.join(', ') })));
  container.append(el('button', { type: 'button', 'data-key': 'add-field', onclick: () => edit(() => {
    let n = names.length + 1;
    while (`field_${n}` in schema.properties) n += 1;
    schema.properties[`field_${n}`] = { type: 'string', title: `Field ${n}`, maxLength: 200 };
  }, true)() }, t('add_field')));
}
