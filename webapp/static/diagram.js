// Draws a BPMN diagram with bpmn-js and marks the elements named in data-active / data-done.
(function () {
  var box = document.getElementById('diagram');
  if (!box || !window.BpmnJS) { return; }
  var viewer = new window.BpmnJS({ container: box });
  fetch(box.dataset.src, { credentials: 'same-origin' })
    .then(function (response) { return response.text(); })
    .then(function (xml) { return viewer.importXML(xml); })
    .then(function () {
      var canvas = viewer.get('canvas');
      var registry = viewer.get('elementRegistry');
      canvas.zoom('fit-viewport');
      [['done', 'marker-done'], ['active', 'marker-active'], ['waiting', 'marker-waiting']].forEach(function (pair) {
        (box.dataset[pair[0]] || '').split(' ').forEach(function (id) {
          if (id && registry.get(id)) { canvas.addMarker(id, pair[1]); }
        });
      });
      box.setAttribute('data-rendered', 'true');
    })
    .catch(function (error) {
      box.textContent = (box.dataset.error || 'The diagram could not be drawn:') + ' ' + error.message;
      box.setAttribute('data-rendered', 'error');
    });
}());
