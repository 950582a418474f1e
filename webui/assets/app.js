// flower ui: follow a running flow. The server sends one message per new
// event; the page fetches its body again (server-rendered, escaped) and
// shows the status line. "end" closes the stream.
(function () {
  "use strict";
  var run = document.getElementById("run");
  if (!run || !run.dataset.live) return;
  var body = document.getElementById("runbody");
  var pending = false, again = false;
  function refresh() {
    if (pending) { again = true; return; }
    pending = true;
    fetch(run.dataset.body, { credentials: "same-origin" }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html !== null) body.innerHTML = html;
    }).finally(function () {
      pending = false;
      if (again) { again = false; refresh(); }
    });
  }
  function status(ev) {
    try {
      var m = JSON.parse(ev.data), el = document.getElementById("status");
      if (el && m.status) el.textContent = m.status;
    } catch (e) { /* a line we cannot read changes nothing */ }
  }
  var es = new EventSource(run.dataset.live);
  es.onmessage = function (ev) { status(ev); refresh(); };
  es.addEventListener("end", function (ev) {
    es.close();
    status(ev);
    run.dataset.ended = "true";
    refresh();
  });
})();
