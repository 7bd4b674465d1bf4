// The finding editor: live Markdown previews (rendered by the server's one sanitiser, their
// diagrams drawn by the pages' own renderer), evidence rows shown for their kind, added, moved and
// removed, and checked at a pinned commit; leaving with unsaved changes asks first.
(function () {
  "use strict";
  var form = document.getElementById("finding-editor");
  if (!form) return;
  document.documentElement.classList.add("js");
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var list = document.getElementById("evidence-forms");
  var template = document.getElementById("evidence-template");
  var nextIndex = list.querySelectorAll(".evidence-form").length;

  function post(url, data) {
    data.append("csrfmiddlewaretoken", csrf);
    return fetch(url, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "Accept": "application/json" },
    }).then(function (response) {
      return response.json().then(function (body) { return { status: response.status, body: body }; },
        function () { return { status: response.status, body: { error: "The server answered " + response.status + "." } }; });
    });
  }

  // --- Unsaved changes -------------------------------------------------------------------
  // Anything typed, chosen, added, moved or removed makes the form dirty (and a form sent back
  // with errors is unsaved from the start); leaving it then asks the browser's own question.
  // Saving is not leaving.
  var dirty = form.hasAttribute("data-unsaved");
  var submitting = false;
  function touched() { dirty = true; }
  form.addEventListener("input", touched);
  form.addEventListener("change", touched);
  form.addEventListener("submit", function () { submitting = true; });
  window.addEventListener("beforeunload", function (event) {
    if (!dirty || submitting) return;
    event.preventDefault();
    event.returnValue = "";  // what older browsers need to ask
  });

  // --- Diagrams in the previews ------------------------------------------------------------
  // Drawn as the pages draw them: the pages' own render script, which imports Mermaid's module
  // build the first time a preview holds a diagram (the browser keeps the module), run again over
  // each new preview.
  var drawing = Promise.resolve();
  function loadScript(src, mermaidModule) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      if (mermaidModule) script.dataset.mermaid = mermaidModule;
      script.onload = function () { script.remove(); resolve(); };
      script.onerror = function () { script.remove(); reject(new Error("not loaded: " + src)); };
      document.head.appendChild(script);
    });
  }
  function drawDiagrams(target) {
    if (!target.querySelector(".mermaid-diagram") || !form.dataset.diagramRenderer) return;
    // One drawing at a time: Mermaid renders into shared scratch space.
    drawing = drawing.then(function () { return loadScript(form.dataset.diagramRenderer, form.dataset.diagramModule); })
      .catch(function () {
        target.querySelectorAll(".mermaid-diagram").forEach(function (block) { block.dataset.state = "unavailable"; });
      });
  }

  // --- Markdown previews -----------------------------------------------------------------
  function preview(textarea) {
    var target = document.getElementById(textarea.dataset.preview);
    var data = new FormData();
    data.append("text", textarea.value);
    var sent = textarea.value;
    post(form.dataset.previewUrl, data).then(function (answer) {
      if (textarea.value !== sent) return; // a newer preview is on its way
      if (answer.body.html !== undefined) {
        target.innerHTML = answer.body.html; // the server's sanitised rendering
        drawDiagrams(target);
      } else {
        target.textContent = answer.body.error || "The preview could not be made.";
      }
    }).catch(function () { target.textContent = "The preview could not be made: the server did not answer."; });
  }
  form.querySelectorAll("textarea[data-preview]").forEach(function (textarea) {
    var timer = null;
    textarea.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { preview(textarea); }, 250);
    });
    if (textarea.value) preview(textarea);
  });

  // --- Evidence rows ---------------------------------------------------------------------
  var defaultExpect = { pattern: "present", path: "exists", gitlink: "pinned_at", check: "failed" };
  var expectFor = {
    pattern: ["present", "absent"], path: ["exists", "missing"],
    gitlink: ["pinned_at", "off_branch", "not_fast_forward"], check: ["failed"],
  };

  function showKind(row) {
    var kind = row.querySelector(".evidence-kind-select").value;
    row.dataset.kind = kind;
    row.querySelectorAll("[data-kinds]").forEach(function (element) {
      element.hidden = element.dataset.kinds.split(" ").indexOf(kind) === -1;
    });
    row.querySelectorAll("[data-label-" + kind + "], .label-text, .check-button").forEach(function (element) {
      if (!element.dataset.labelDefault) element.dataset.labelDefault = element.textContent;
      element.textContent = element.dataset["label" + kind.charAt(0).toUpperCase() + kind.slice(1)] || element.dataset.labelDefault;
    });
    var expect = row.querySelector("select[name$='-expect']");
    var allowed = expectFor[kind] || [];
    Array.prototype.forEach.call(expect.options, function (option) {
      option.hidden = option.value !== "" && allowed.indexOf(option.value) === -1;
    });
    if (allowed.indexOf(expect.value) === -1) expect.value = defaultExpect[kind] || "";
  }

  function renumber() {
    var rows = list.querySelectorAll(".evidence-form");
    rows.forEach(function (row, position) {
      row.querySelector(".order-input").value = position + 1;
      row.querySelector(".evidence-form-position").textContent = position + 1;
    });
    var empty = list.querySelector(".no-evidence");
    if (empty) empty.hidden = rows.length > 0;
  }

  function wire(row) {
    showKind(row);
    row.querySelector(".evidence-kind-select").addEventListener("change", function () {
      showKind(row);
      row.querySelector(".check-result").textContent = "";
    });
    row.querySelectorAll("[data-move]").forEach(function (button) {
      button.addEventListener("click", function () {
        if (button.dataset.move === "up" && row.previousElementSibling && row.previousElementSibling.classList.contains("evidence-form")) {
          list.insertBefore(row, row.previousElementSibling);
        } else if (button.dataset.move === "down" && row.nextElementSibling) {
          list.insertBefore(row.nextElementSibling, row);
        }
        renumber();
        touched();
        button.focus();
      });
    });
    row.querySelector(".remove-input").addEventListener("change", function (event) {
      row.classList.toggle("evidence-removed", event.target.checked);
    });
    row.querySelector(".check-button").addEventListener("click", function () { check(row); });
  }

  document.getElementById("add-evidence").addEventListener("click", function () {
    var html = template.innerHTML.replace(/__index__/g, String(nextIndex));
    nextIndex += 1;
    var holder = document.createElement("div");
    holder.innerHTML = html;
    var row = holder.querySelector(".evidence-form");
    list.appendChild(row);
    wire(row);
    renumber();
    touched();
    row.querySelector(".evidence-kind-select").focus();
  });
  list.querySelectorAll(".evidence-form").forEach(wire);

  // --- Checking one item at a pinned commit -----------------------------------------------
  function el(tag, className, text) {
    var element = document.createElement(tag);
    if (className) element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  }

  function check(row) {
    var out = row.querySelector(".check-result");
    var data = new FormData();
    var prefix = "evidence-" + row.dataset.index + "-";
    row.querySelectorAll("[name^='" + prefix + "']").forEach(function (input) {
      if (input.type === "checkbox") return;
      data.append(input.name.slice(prefix.length), input.value);
    });
    data.append("at", row.querySelector(".check-at").value);
    out.textContent = "Checking…";
    post(form.dataset.checkUrl, data).then(function (answer) {
      out.textContent = "";
      var body = answer.body;
      if (!body.ok) {
        out.appendChild(el("p", "form-error check-refused", body.message || body.error || "The check was refused."));
        return;
      }
      var line = el("p", "check-line");
      if (!body.ran) {
        line.appendChild(el("span", "badge state-error", "Check could not run"));
        line.appendChild(document.createTextNode(" " + body.detail));
        out.appendChild(line);
        return;
      }
      line.appendChild(el("span", "badge state-" + body.state, body.state_label));
      line.appendChild(document.createTextNode(" "));
      line.appendChild(el("span", "badge verdict-" + body.verdict, body.verdict_label));
      line.appendChild(document.createTextNode(" at " + body.target.slice(0, 12) + (body.detail ? ": " + body.detail : "")));
      out.appendChild(line);
      if (body.text) {
        out.appendChild(el("p", "hint", "The code at the recorded commit:"));
        out.appendChild(el("pre", "check-text", body.text));
        var text = row.querySelector("textarea[name$='-text']");
        if (text && !text.value) text.value = body.text;
      }
      if (body.pin) out.appendChild(el("p", "check-pin", "Pinned in the tree at " + body.pin));
      if (row.dataset.kind === "pattern") {
        if (!body.matches.length) {
          out.appendChild(el("p", "muted check-matches-none", "No line matches at this commit."));
        } else {
          var matches = el("ul", "check-matches");
          body.matches.forEach(function (match) {
            var item = el("li");
            item.appendChild(el("code", "match-where", match.path + ":" + match.line));
            item.appendChild(document.createTextNode(" "));
            item.appendChild(el("code", "match-text", match.text));
            matches.appendChild(item);
          });
          out.appendChild(el("p", "hint", body.matches.length + (body.more_matches ? "+" : "") + " matching line(s):"));
          out.appendChild(matches);
        }
      }
    }).catch(function () { out.textContent = "The check could not be sent: the server did not answer."; });
  }
})();
