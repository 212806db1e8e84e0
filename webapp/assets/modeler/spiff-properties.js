// Properties-panel groups for what the rule130 engine reads from a diagram beyond plain BPMN
// (webapp/engine/diagrams/parser.py and runtime.py):
//   - user task: the JSON Schema form file, spiffworkflow:property name="formJsonSchemaFilename";
//   - service task: spiffworkflow:serviceTaskOperator id (the registered handler's name),
//     resultVariable, and its spiffworkflow:parameter list (id, type, value: a Python expression);
//   - sequence flow: its condition expression (bpmn:conditionExpression, a sandboxed Python expression).
// Every edit is one command on bpmn-js's command stack, so undo/redo work as for any other change.

import {
  ListGroup,
  TextAreaEntry,
  TextFieldEntry,
  isTextAreaEntryEdited,
  isTextFieldEntryEdited
} from '@bpmn-io/properties-panel';
import { jsx } from '@bpmn-io/properties-panel/preact/jsx-runtime';
import { useService } from 'bpmn-js-properties-panel';
import { getBusinessObject, is } from 'bpmn-js/lib/util/ModelUtil';

export const FORM_PROPERTY = 'formJsonSchemaFilename';
const MULTI = 'properties-panel.multi-command-executor';

function extensionsOf(bo, type) {
  const values = (bo.get('extensionElements') && bo.get('extensionElements').get('values')) || [];
  return values.filter((value) => is(value, type));
}

function update(element, moddleElement, properties) {
  return { cmd: 'element.updateModdleProperties', context: { element, moddleElement, properties } };
}

// Commands that make sure `bo` has extension elements holding one element of `type`;
// returns [commands, the extension element].
function ensureExtension(element, bo, type, bpmnFactory) {
  const commands = [];
  let extensionElements = bo.get('extensionElements');
  if (!extensionElements) {
    extensionElements = bpmnFactory.create('bpmn:ExtensionElements', { values: [] });
    extensionElements.$parent = bo;
    commands.push(update(element, bo, { extensionElements }));
  }
  let extension = extensionsOf(bo, type)[0];
  if (!extension) {
    extension = bpmnFactory.create(type, {});
    extension.$parent = extensionElements;
    commands.push(update(element, extensionElements, {
      values: [ ...extensionElements.get('values'), extension ]
    }));
  }
  return [ commands, extension ];
}

// -- user task: form file -------------------------------------------------------------------------------

function formProperty(bo) {
  for (const properties of extensionsOf(bo, 'spiffworkflow:Properties')) {
    const found = (properties.get('values') || []).find((p) => p.get('name') === FORM_PROPERTY);
    if (found) {
      return found;
    }
  }
  return null;
}

export function formFileOf(element) {
  const property = formProperty(getBusinessObject(element));
  return property ? property.get('value') || '' : '';
}

function FormFileEntry(props) {
  const { element, id } = props;
  const commandStack = useService('commandStack');
  const bpmnFactory = useService('bpmnFactory');
  const debounce = useService('debounceInput');
  const bo = getBusinessObject(element);

  const setValue = (value) => {
    const property = formProperty(bo);
    if (property) {
      commandStack.execute('element.updateModdleProperties',
        { element, moddleElement: property, properties: { value: value || '' } });
      return;
    }
    const [ commands, properties ] = ensureExtension(element, bo, 'spiffworkflow:Properties', bpmnFactory);
    const created = bpmnFactory.create('spiffworkflow:Property', { name: FORM_PROPERTY, value: value || '' });
    created.$parent = properties;
    commands.push(update(element, properties, { values: [ ...(properties.get('values') || []), created ] }));
    commandStack.execute(MULTI, commands);
  };

  return jsx(TextFieldEntry, {
    element, id, debounce, setValue,
    label: 'Form file',
    description: 'A JSON Schema file in the forms below, e.g. publish_notice.schema.json',
    getValue: () => formFileOf(element)
  });
}

// -- service task: operator, result variable, parameters -------------------------------------------------

function operatorOf(bo) {
  return extensionsOf(bo, 'spiffworkflow:ServiceTaskOperator')[0] || null;
}

function OperatorEntry(props) {
  const { element, id, attribute, label, description } = props;
  const commandStack = useService('commandStack');
  const bpmnFactory = useService('bpmnFactory');
  const debounce = useService('debounceInput');
  const bo = getBusinessObject(element);

  const setValue = (value) => {
    const [ commands, operator ] = ensureExtension(element, bo, 'spiffworkflow:ServiceTaskOperator', bpmnFactory);
    commands.push(update(element, operator, { [attribute]: value || '' }));
    commandStack.execute(MULTI, commands);
  };

  return jsx(TextFieldEntry, {
    element, id, debounce, setValue, label, description,
    getValue: () => {
      const operator = operatorOf(bo);
      return operator ? operator.get(attribute) || '' : '';
    }
  });
}

function ParameterEntry(props) {
  const { element, id, parameter, attribute, label, description } = props;
  const commandStack = useService('commandStack');
  const debounce = useService('debounceInput');
  return jsx(TextFieldEntry, {
    element, id, debounce, label, description,
    getValue: () => parameter.get(attribute) || '',
    setValue: (value) => commandStack.execute('element.updateModdleProperties',
      { element, moddleElement: parameter, properties: { [attribute]: value || '' } })
  });
}

function parametersGroup(element, injector) {
  const bo = getBusinessObject(element);
  const commandStack = injector.get('commandStack');
  const bpmnFactory = injector.get('bpmnFactory');
  const operator = operatorOf(bo);
  const list = operator && operator.get('parameterList');
  const parameters = (list && list.get('parameters')) || [];

  const add = (event) => {
    event.stopPropagation();
    const [ commands, op ] = ensureExtension(element, bo, 'spiffworkflow:ServiceTaskOperator', bpmnFactory);
    let target = op.get('parameterList');
    if (!target) {
      target = bpmnFactory.create('spiffworkflow:Parameters', { parameters: [] });
      target.$parent = op;
      commands.push(update(element, op, { parameterList: target }));
    }
    const created = bpmnFactory.create('spiffworkflow:Parameter',
      { id: `parameter_${(target.get('parameters') || []).length + 1}`, type: 'str', value: '""' });
    created.$parent = target;
    commands.push(update(element, target, { parameters: [ ...(target.get('parameters') || []), created ] }));
    commandStack.execute(MULTI, commands);
  };

  const items = parameters.map((parameter, index) => {
    const prefix = `${element.id}-spiff-parameter-${index}`;
    return {
      id: prefix,
      label: parameter.get('id') || '<unnamed>',
      autoFocusEntry: `${prefix}-id`,
      remove: () => commandStack.execute('element.updateModdleProperties', {
        element, moddleElement: list,
        properties: { parameters: parameters.filter((p) => p !== parameter) }
      }),
      entries: [
        { id: `${prefix}-id`, component: ParameterEntry, parameter, attribute: 'id', label: 'Name',
          description: 'the handler\'s keyword argument', isEdited: isTextFieldEntryEdited },
        { id: `${prefix}-type`, component: ParameterEntry, parameter, attribute: 'type', label: 'Type',
          description: 'str, int, any…', isEdited: isTextFieldEntryEdited },
        { id: `${prefix}-value`, component: ParameterEntry, parameter, attribute: 'value', label: 'Value',
          description: 'a Python expression, e.g. "case_closed" or ["secretary"]', isEdited: isTextFieldEntryEdited }
      ]
    };
  });

  return { id: 'spiff-parameters', label: 'Service parameters', component: ListGroup, add, items };
}

// -- sequence flow: condition ------------------------------------------------------------------------------

function ConditionEntry(props) {
  const { element, id } = props;
  const commandStack = useService('commandStack');
  const bpmnFactory = useService('bpmnFactory');
  const debounce = useService('debounceInput');
  const bo = getBusinessObject(element);

  const setValue = (value) => {
    let expression;
    if (value && value.trim()) {
      expression = bpmnFactory.create('bpmn:FormalExpression', { body: value });
      expression.$parent = bo;
    }
    commandStack.execute('element.updateModdleProperties',
      { element, moddleElement: bo, properties: { conditionExpression: expression } });
  };

  return jsx(TextAreaEntry, {
    element, id, debounce, setValue,
    label: 'Condition',
    description: 'A Python expression on the case data (checked by the sandbox), e.g. decision["owner_proved"]',
    monospace: true,
    autoResize: true,
    getValue: () => {
      const expression = bo.get('conditionExpression');
      return expression ? expression.get('body') || '' : '';
    }
  });
}

function hasConditionalSource(element) {
  const source = element.source;
  return source && (is(source, 'bpmn:ExclusiveGateway') || is(source, 'bpmn:InclusiveGateway')
    || is(source, 'bpmn:Activity'));
}

// -- the provider ---------------------------------------------------------------------------------------------

export default function SpiffPropertiesProvider(propertiesPanel, injector) {
  propertiesPanel.registerProvider(500, this);
  this._injector = injector;
}

SpiffPropertiesProvider.$inject = [ 'propertiesPanel', 'injector' ];

SpiffPropertiesProvider.prototype.getGroups = function(element) {
  const injector = this._injector;
  return (groups) => {
    if (is(element, 'bpmn:UserTask')) {
      groups.push({
        id: 'spiff-form', label: 'Form',
        entries: [ { id: 'spiff-form-file', component: FormFileEntry, isEdited: isTextFieldEntryEdited } ]
      });
    }
    if (is(element, 'bpmn:ServiceTask')) {
      groups.push({
        id: 'spiff-operator', label: 'Service operator',
        entries: [
          { id: 'spiff-operator-name', component: OperatorEntry, attribute: 'id', label: 'Operator (handler) name',
            description: 'a registered handler, e.g. notify.officers', isEdited: isTextFieldEntryEdited },
          { id: 'spiff-operator-result', component: OperatorEntry, attribute: 'resultVariable',
            label: 'Result variable', description: 'the task data field that receives the handler\'s result',
            isEdited: isTextFieldEntryEdited }
        ]
      });
      groups.push(parametersGroup(element, injector));
    }
    if (is(element, 'bpmn:SequenceFlow') && hasConditionalSource(element)) {
      groups.push({
        id: 'spiff-condition', label: 'Condition',
        entries: [ { id: 'spiff-condition-expression', component: ConditionEntry, isEdited: isTextAreaEntryEdited } ]
      });
    }
    return groups;
  };
};

export const SpiffPropertiesModule = {
  __init__: [ 'spiffPropertiesProvider' ],
  spiffPropertiesProvider: [ 'type', SpiffPropertiesProvider ]
};

// -- Hindi names: <rule130:name lang="hi" of="English name">…</rule130:name> (webapp/engine/diagrams/names.py) ---------

const NAMED = [ 'bpmn:Task', 'bpmn:CallActivity', 'bpmn:SubProcess', 'bpmn:Event', 'bpmn:Gateway',
  'bpmn:SequenceFlow', 'bpmn:Lane' ];
const hindi = { catalogue: {}, texts: {} };

// The catalogue's Hindi of the diagram's names ({English: Hindi}, from the server) and the page's texts.
export function setHindiCatalogue(catalogue, texts) {
  hindi.catalogue = catalogue || {};
  hindi.texts = texts || {};
}

const words = (value) => String(value || '').split(/\s+/).filter(Boolean).join(' ');

// The catalogue entry of an element's name: the name, or a lane's role as words (pound_keeper → pound keeper).
export function catalogueKey(element) {
  const bo = getBusinessObject(element);
  const name = words(bo.get('name'));
  return is(element, 'bpmn:Lane') ? name.replace(/_/g, ' ') : name;
}

function hindiNameOf(bo) {
  return extensionsOf(bo, 'rule130:Name').find((found) => found.get('lang') === 'hi') || null;
}

// The Hindi the element carries for its current name ('' when none, or written for another name).
export function ownHindi(element) {
  const bo = getBusinessObject(element);
  const found = hindiNameOf(bo);
  return found && words(found.get('of')) === words(bo.get('name')) ? words(found.get('text')) : '';
}

// The Hindi of the element's current name: its own, else the catalogue's ('' when it has none).
export function hindiName(element) {
  return ownHindi(element) || hindi.catalogue[catalogueKey(element)] || '';
}

// Whether the element's current name has Hindi (its own, or the catalogue's).
export function hasHindi(element) {
  const name = words(getBusinessObject(element).get('name'));
  return !name || Boolean(ownHindi(element) || hindi.catalogue[catalogueKey(element)]);
}

export function isNamed(element) {
  return NAMED.some((type) => is(element, type));
}

const say = (key, params = {}) => (hindi.texts[key] || key)
  .replace(/%\((\w+)\)s/g, (match, name) => String(params[name] ?? ''));

function HindiNameEntry(props) {
  const { element, id } = props;
  const commandStack = useService('commandStack');
  const bpmnFactory = useService('bpmnFactory');
  const debounce = useService('debounceInput');
  const bo = getBusinessObject(element);
  const name = words(bo.get('name'));
  const fromCatalogue = hindi.catalogue[catalogueKey(element)];

  const setValue = (value) => {
    const text = words(value);
    const found = hindiNameOf(bo);
    if (found) {
      commandStack.execute('element.updateModdleProperties',
        { element, moddleElement: found, properties: { text, of: words(bo.get('name')) } });
      return;
    }
    let extensionElements = bo.get('extensionElements');
    const commands = [];
    if (!extensionElements) {
      extensionElements = bpmnFactory.create('bpmn:ExtensionElements', { values: [] });
      extensionElements.$parent = bo;
      commands.push(update(element, bo, { extensionElements }));
    }
    const created = bpmnFactory.create('rule130:Name', { lang: 'hi', of: words(bo.get('name')), text });
    created.$parent = extensionElements;
    commands.push(update(element, extensionElements, { values: [ ...extensionElements.get('values'), created ] }));
    commandStack.execute(MULTI, commands);
  };

  let description = say('hindi_name_help');
  if (!ownHindi(element)) {
    description = fromCatalogue ? say('hindi_from_catalogue', { hindi: fromCatalogue })
      : (name ? say('hindi_missing', { name }) : description);
  }
  return jsx(TextFieldEntry, {
    element, id, debounce, setValue, description,
    label: say('hindi_name'),
    getValue: () => ownHindi(element)
  });
}

function HindiNamesProvider(propertiesPanel) {
  this.getGroups = (element) => (groups) => {
    if (isNamed(element)) {
      const general = groups.find((group) => group.id === 'general');
      const entry = { id: 'rule130-hindi-name', component: HindiNameEntry, isEdited: isTextFieldEntryEdited };
      if (general) {  // beside the name, in the group the name is edited in
        const at = general.entries.findIndex((found) => found.id === 'name');
        general.entries.splice(at >= 0 ? at + 1 : general.entries.length, 0, entry);
      } else {
        groups.unshift({ id: 'rule130-hindi', label: say('hindi_name'), entries: [ entry ] });
      }
    }
    return groups;
  };
  propertiesPanel.registerProvider(400, this);  // after the BPMN provider (1000), which makes "general"
}

HindiNamesProvider.$inject = [ 'propertiesPanel' ];

export const HindiNamesModule = {
  __init__: [ 'rule130HindiNames' ],
  rule130HindiNames: [ 'type', HindiNamesProvider ]
};
