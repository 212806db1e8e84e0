// Fields shown only where they apply (issue 20): a task form's field whose wrapper carries
// data-depends-on="<control field>" and data-depends-values='["<value>", ...]' (rendered from the
// form's JSON Schema if/then by webapp/web/task_forms.py) is hidden, and its inputs disabled (so
// they are not sent), unless the control's chosen value is one of those values; it follows every
// change of the control. Without this script the field stays visible with its hint.
// No inline script or event handler: the page's Content-Security-Policy allows only 'self'.
(function () {
  'use strict';

  function chosen(form, name) {
    var controls = form.querySelectorAll('[name="' + name + '"]');
    for (var i = 0; i < controls.length; i += 1) {
      var c = controls[i];
      if (c.type === 'radio' || c.type === 'checkbox') {
        if (c.checked) { return c.value; }
      } else {
        return c.value;
      }
    }
    return null;
  }

  function update(form, wrapper) {
    var values;
    try {
      values = JSON.parse(wrapper.getAttribute('data-depends-values') || '[]');
    } catch (e) {
      return; // an unreadable condition: leave the field as the page showed it
    }
    var applies = values.indexOf(chosen(form, wrapper.getAttribute('data-depends-on'))) !== -1;
    wrapper.hidden = !applies;
    var inputs = wrapper.querySelectorAll('input, select, textarea');
    for (var i = 0; i < inputs.length; i += 1) { inputs[i].disabled = !applies; }
  }

  function start() {
    var wrappers = document.querySelectorAll('[data-depends-on]');
    for (var i = 0; i < wrappers.length; i += 1) {
      var wrapper = wrappers[i];
      var form = wrapper.closest('form');
      if (!form) { continue; }
      (function (f, w) {
        var controls = f.querySelectorAll('[name="' + w.getAttribute('data-depends-on') + '"]');
        for (var j = 0; j < controls.length; j += 1) {
          controls[j].addEventListener('change', function () { update(f, w); });
        }
        update(f, w);
      })(form, wrapper);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
