// While a verification runs, poll its progress and refresh the page once it is done.
(function () {
  "use strict";
  var box = document.querySelector("[data-run-url]");
  if (!box) return;
  var bar = box.querySelector("progress");
  var count = box.querySelector("[data-run-count]");
  var status = box.querySelector("[data-run-status]");
  var INTERVAL = 2000;

  function poll() {
    fetch(box.getAttribute("data-run-url"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (data && (!data.run || !data.run.is_active)) {
          window.location.reload();
          return;
        }
        if (data) {
          var run = data.run;
          if (run.total) { bar.max = run.total; bar.value = run.done; }
          count.textContent = run.done + " of " + run.total;
          // The vocabulary's word for the run's status, as the server wrote it on the page.
          status.textContent = (run.status_label || run.status).toLowerCase();
        }
        window.setTimeout(poll, INTERVAL);
      })
      // A dropped poll is retried on the next tick.
      .catch(function () { window.setTimeout(poll, INTERVAL); });
  }

  window.setTimeout(poll, INTERVAL);
})();
