// Draws a BPMN diagram with bpmn-js and marks the elements named in data-active / data-done /
// data-waiting. It opens zoomed to the active step(s) at a readable scale (labels at least as
// large as the page's text), and the buttons of #diagram-tools zoom in and out, fit the whole
// diagram, and go back to the active step; the keyboard (+, -, 0, arrows) works on the focused
// diagram (diagram-js binds it to its canvas itself: a keyboard.bindTo option is refused with a
// console error), and the navigated viewer pans by dragging and zooms by pinch or wheel.
(function () {
  var box = document.getElementById('diagram');
  if (!box || !window.BpmnJS) { return; }
  var viewer = new window.BpmnJS({ container: box });
  var READABLE = 1.0;  // a scale at which bpmn-js's 12 px labels are 12 px on screen

  function activeBox(registry, ids) {
    var shapes = ids.map(function (id) { return registry.get(id); })
      .filter(function (el) { return el && el.width !== undefined; });
    if (!shapes.length) { return null; }
    var x1 = Math.min.apply(null, shapes.map(function (s) { return s.x; }));
    var y1 = Math.min.apply(null, shapes.map(function (s) { return s.y; }));
    var x2 = Math.max.apply(null, shapes.map(function (s) { return s.x + s.width; }));
    var y2 = Math.max.apply(null, shapes.map(function (s) { return s.y + s.height; }));
    return { x: x1, y: y1, width: x2 - x1, height: y2 - y1 };
  }

  function toActive(canvas, registry) {
    var ids = (box.dataset.active || box.dataset.waiting || '').split(' ').filter(Boolean);
    var target = activeBox(registry, ids);
    if (!target) { canvas.zoom('fit-viewport'); return; }
    var size = canvas.getSize();
    // as close as shows every active step, but never below a readable scale
    var fit = Math.min(size.width / (target.width + 80), size.height / (target.height + 80));
    var scale = Math.max(READABLE, Math.min(fit, 1.5));
    canvas.zoom(scale);
    var viewbox = canvas.viewbox();
    canvas.viewbox({ x: target.x + target.width / 2 - viewbox.width / 2,
                     y: target.y + target.height / 2 - viewbox.height / 2,
                     width: viewbox.width, height: viewbox.height });
  }

  fetch(box.dataset.src, { credentials: 'same-origin' })
    .then(function (response) { return response.text(); })
    .then(function (xml) { return viewer.importXML(xml); })
    .then(function () {
      var canvas = viewer.get('canvas');
      var registry = viewer.get('elementRegistry');
      [['done', 'marker-done'], ['active', 'marker-active'], ['waiting', 'marker-waiting']].forEach(function (pair) {
        (box.dataset[pair[0]] || '').split(' ').forEach(function (id) {
          if (id && registry.get(id)) { canvas.addMarker(id, pair[1]); }
        });
      });
      toActive(canvas, registry);
      var tools = document.getElementById('diagram-tools');
      if (tools) {
        tools.hidden = false;
        tools.addEventListener('click', function (event) {
          var button = event.target.closest('button[data-zoom]');
          if (!button) { return; }
          var how = button.dataset.zoom;
          if (how === 'in') { canvas.zoom(canvas.zoom() * 1.25); }
          else if (how === 'out') { canvas.zoom(canvas.zoom() / 1.25); }
          else if (how === 'fit') { canvas.zoom('fit-viewport'); }
          else if (how === 'active') { toActive(canvas, registry); }
          box.setAttribute('data-scale', String(canvas.zoom()));
        });
      }
      box.setAttribute('data-scale', String(canvas.zoom()));
      box.setAttribute('data-rendered', 'true');
    })
    .catch(function (error) {
      box.textContent = (box.dataset.error || 'The diagram could not be drawn:') + ' ' + error.message;
      box.setAttribute('data-rendered', 'error');
    });
}());
