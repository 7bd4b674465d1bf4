// Draws the ```mermaid blocks of a page with the local copy of Mermaid, at its strict security
// level (labels sanitised, no click handlers) and without HTML labels. The server rendered each block as
// its escaped source, so without script, or when a diagram does not parse, the reader keeps the
// source; a diagram that fails also shows the parser's message, never an empty box.
//
// On the site Mermaid is loaded only here, and only when a page has a diagram: its ES module build
// (named by this script's data-mermaid), whose diagram types come in chunks of their own, so a
// page with a flowchart fetches the flowchart's code and not the other twenty kinds. The static
// render, opened from a disk where modules cannot load, links the classic build beside its pages
// instead (window.mermaid).
(function () {
  "use strict";
  var blocks = document.querySelectorAll(".mermaid-diagram");
  var script = document.currentScript;
  var moduleUrl = script && script.dataset.mermaid;
  if (!blocks.length) return;

  function unavailable() {
    blocks.forEach(function (block) { block.dataset.state = "unavailable"; });
    document.documentElement.dataset.diagrams = "done";
  }

  function loaded() {
    if (window.mermaid) return Promise.resolve(window.mermaid);
    if (!moduleUrl) return Promise.reject(new Error("no copy of Mermaid on this page"));
    return import(moduleUrl).then(function (module) { return module.default; });
  }

  loaded().then(start, unavailable);

  function start(mermaid) {
  // No HTML labels: a label is drawn as SVG text, so an <img> in it cannot fetch anything either.
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "neutral",
    htmlLabels: false,
    // Tight spacing: a picture sits beside its finding's text and should not outgrow it.
    // dagre, Mermaid's small layout: ELK (1.6 MB) would otherwise load for every flowchart.
    layout: "dagre",
    flowchart: { htmlLabels: false, nodeSpacing: 22, rankSpacing: 26, padding: 6, wrappingWidth: 240,
                 defaultRenderer: "dagre-wrapper" },
  });

  function sourceDetails(source) {
    var details = document.createElement("details");
    details.className = "mermaid-source-details";
    var summary = document.createElement("summary");
    summary.textContent = "Diagram source";
    var pre = document.createElement("pre");
    pre.className = "mermaid-source";
    pre.textContent = source;
    details.append(summary, pre);
    return details;
  }

  async function draw(block, index) {
    var pre = block.querySelector("pre.mermaid-source");
    if (!pre) return;
    var source = pre.textContent;
    var id = "recheck-diagram-" + index;
    try {
      await mermaid.parse(source);
      var drawn = await mermaid.render(id, source);
      var figure = document.createElement("div");
      figure.className = "mermaid-drawn";
      // Mermaid's own output, sanitised by it at the strict security level.
      figure.innerHTML = drawn.svg;
      block.replaceChildren(figure, sourceDetails(source));
      block.dataset.state = "drawn";
    } catch (error) {
      var message = document.createElement("div");
      message.className = "mermaid-error";
      var lead = document.createElement("p");
      lead.textContent = "This diagram could not be drawn. Mermaid says:";
      var said = document.createElement("pre");
      said.className = "mermaid-error-message";
      said.textContent = (error && error.message) || String(error);
      message.append(lead, said);
      block.replaceChildren(message, pre);
      block.dataset.state = "error";
      // A failed render leaves Mermaid's scratch element behind.
      var scratch = document.getElementById("d" + id);
      if (scratch) scratch.remove();
    }
  }

  (async function () {
    for (var index = 0; index < blocks.length; index++) {
      await draw(blocks[index], index);  // one at a time: Mermaid renders into shared scratch space
    }
    document.documentElement.dataset.diagrams = "done";
  })();
  }
})();
