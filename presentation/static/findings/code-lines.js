// Selecting lines in the code browser: click a line number to select it, shift-click another to
// select the lines between; from the keyboard, Enter or Space on a focused line number selects it,
// Shift+Enter extends to it, and Shift+ArrowUp/ArrowDown extend line by line (the arrows alone move
// between line numbers). On a touch screen, where there is no Shift, tapping one line number and
// then another selects the lines between (a third tap starts again; tapping the one selected line
// clears it). The selection goes into the URL as #L7-L8, and a URL opened with such a
// hash selects those lines. The bar offers the finding editor's links for the selection, when the
// page has them (only users who may write get them).
(function () {
  "use strict";
  var table = document.querySelector(".code-lines");
  if (!table) return;
  var bar = document.querySelector("[data-code-selection]");
  var links = table.querySelectorAll("a[data-line]");
  var total = links.length;
  // One Tab stop for all the line numbers (a roving tabindex): the arrows move between them, so
  // tabbing past a long file takes one key press, not one per line.
  var roving = links[0];
  for (var index = 1; index < total; index++) links[index].tabIndex = -1;
  function rove(link) {
    if (link === roving) return;
    roving.tabIndex = -1;
    link.tabIndex = 0;
    roving = link;
  }
  table.addEventListener("focusin", function (event) {
    var link = event.target.closest("a[data-line]");
    if (link) rove(link);
  });
  var anchor = null; // the line a shift-click or Shift+Enter extends from
  var range = null; // [first, last]

  function row(line) { return document.getElementById("L" + line); }
  function number(link) { return parseInt(link.getAttribute("data-line"), 10); }
  function lineLink(line) { var found = row(line); return found && found.querySelector("a[data-line]"); }

  function parse(hash) {
    var match = /^#L(\d+)(?:-L?(\d+))?$/.exec(hash || "");
    if (!match) return null;
    var first = parseInt(match[1], 10);
    var last = match[2] ? parseInt(match[2], 10) : first;
    if (first > last) { var swap = first; first = last; last = swap; }
    if (first < 1 || first > total) return null;
    return [first, Math.min(last, total)];
  }

  function paint(next) {
    var line;
    if (range) for (line = range[0]; line <= range[1]; line++) row(line).classList.remove("selected");
    if (next) for (line = next[0]; line <= next[1]; line++) row(line).classList.add("selected");
  }

  function query(first, last) {
    return "commit=" + encodeURIComponent(bar.getAttribute("data-commit")) +
      "&path=" + encodeURIComponent(bar.getAttribute("data-path")) +
      "&lines=" + first + "-" + last;
  }

  function showBar() {
    if (!bar) return;
    if (!range) { bar.hidden = true; return; }
    var first = range[0], last = range[1];
    bar.querySelector("[data-selection-label]").textContent =
      first === last ? "Line " + first + " selected" : "Lines " + first + "\u2013" + last + " selected";
    var newFinding = bar.querySelector("[data-new-finding]");
    if (newFinding) newFinding.href = bar.getAttribute("data-new-finding-url") + "?" + query(first, last);
    var choice = bar.querySelector("[data-evidence-finding]");
    var evidence = bar.querySelector("[data-add-evidence]");
    if (choice && evidence) {
      evidence.href = bar.getAttribute("data-findings-url") + encodeURIComponent(choice.value) +
        "/evidence/new/?kind=snippet&" + query(first, last);
      evidence.textContent = "Add as evidence to finding " + choice.value;
    }
    bar.hidden = false;
  }

  function select(first, last, options) {
    var next = first === null ? null : [Math.min(first, last), Math.max(first, last)];
    paint(next);
    range = next;
    if (!(options && options.keepHash)) {
      var hash = !next ? "" : next[0] === next[1] ? "#L" + next[0] : "#L" + next[0] + "-L" + next[1];
      // replaceState, not location.hash: the page must not jump to the row on every click.
      history.replaceState(null, "", window.location.pathname + window.location.search + hash);
    }
    showBar();
  }

  function choose(line, extend) {
    if (extend && anchor !== null) {
      select(anchor, line);
    } else {
      anchor = line;
      select(line, line);
    }
  }

  // The kind of pointer that started the click: a touch has no Shift to extend with.
  var touched = false;
  table.addEventListener("pointerdown", function (event) { touched = event.pointerType === "touch"; });

  table.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-line]");
    if (!link) return;
    event.preventDefault();
    var line = number(link);
    if (touched && !event.shiftKey) {
      touched = false;
      if (range && range[0] === range[1] && anchor !== null) {
        if (line === anchor) { anchor = null; select(null); } else { select(anchor, line); }
      } else {
        choose(line, false);
      }
    } else {
      choose(line, event.shiftKey);
    }
    link.focus();
  });

  table.addEventListener("keydown", function (event) {
    var link = event.target.closest("a[data-line]");
    if (!link) return;
    var line = number(link);
    if (event.key === "Enter" || event.key === " ") {
      // Handled here so the browser neither follows the link nor opens it in a new window.
      event.preventDefault();
      choose(line, event.shiftKey);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var next = line + (event.key === "ArrowDown" ? 1 : -1);
      if (next < 1 || next > total) return;
      event.preventDefault();
      if (event.shiftKey) {
        if (anchor === null) anchor = line;
        select(anchor, next);
      }
      lineLink(next).focus();
    } else if (event.key === "Escape") {
      select(null);
    }
  });

  if (bar) {
    var choice = bar.querySelector("[data-evidence-finding]");
    if (choice) choice.addEventListener("change", showBar);
    var clear = bar.querySelector("[data-clear-selection]");
    if (clear) clear.addEventListener("click", function () { anchor = null; select(null); });
  }

  function fromHash(scroll) {
    var wanted = parse(window.location.hash);
    if (!wanted) return;
    anchor = wanted[0];
    select(wanted[0], wanted[1], { keepHash: true });
    rove(lineLink(wanted[0]));
    if (scroll) row(wanted[0]).scrollIntoView({ block: "center" });
  }

  window.addEventListener("hashchange", function () { fromHash(true); });
  fromHash(true);
})();
