// Since you last looked: the page is the same for everyone (kept by generation), so the marks of
// what changed since this person's previous visit are asked for here, per person, and added to it.
(function () {
  "use strict";
  var holder = document.getElementById("since-last-visit");
  if (!holder || !window.fetch) { return; }
  fetch(holder.getAttribute("data-url"), {credentials: "same-origin", headers: {"Accept": "application/json"}})
    .then(function (response) { return response.ok ? response.json() : null; })
    .then(function (answer) {
      if (!answer || !answer.signed_in || !answer.count) { return; }
      Object.keys(answer.findings).forEach(function (number) {
        document.querySelectorAll(".glance-number").forEach(function (span) {
          if (span.textContent.trim() !== number) { return; }
          var item = span.closest("li");
          if (!item || item.classList.contains("changed-since")) { return; }
          item.classList.add("changed-since");
          var badge = document.createElement("span");
          badge.className = "badge changed-since-badge";
          badge.textContent = "Changed since your last visit";
          badge.title = answer.findings[number].join("\n");
          item.appendChild(badge);
        });
      });
      var text = document.createElement("p");
      text.className = "since-summary";
      var link = document.createElement("a");
      link.href = answer.timeline;
      link.textContent = answer.count + (answer.count === 1 ? " change" : " changes") + " since you last looked";
      text.appendChild(link);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "button button-secondary mark-all-seen";
      button.textContent = "Mark all seen";
      button.addEventListener("click", function () {
        var body = new FormData();
        body.append("csrfmiddlewaretoken", answer.csrf);
        fetch(answer.seen_url, {method: "POST", body: body, credentials: "same-origin",
                                headers: {"Accept": "application/json", "X-CSRFToken": answer.csrf}})
          .then(function (response) {
            if (!response.ok) { return; }
            document.querySelectorAll(".changed-since-badge").forEach(function (badge) { badge.remove(); });
            document.querySelectorAll(".changed-since").forEach(function (item) { item.classList.remove("changed-since"); });
            holder.replaceChildren();
            holder.hidden = true;
          });
      });
      text.appendChild(document.createTextNode(" "));
      text.appendChild(button);
      holder.appendChild(text);
      holder.hidden = false;
    });
})();
