// Behaviour that the pages need beyond htmx. Kept out of the HTML so a strict Content-Security-Policy holds.
(function () {
  "use strict";

  // Every change carries the CSRF token: htmx requests in a header, plain forms in a hidden field.
  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }
  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRFToken"] = csrfToken();
    // A form that posts on "change" is the htmx element, so htmx names the form as the trigger; the server
    // redraws parts by the field that changed (e.g. "Answers are" redraws the Reward section), so name it.
    var changed = event.detail.triggeringEvent && event.detail.triggeringEvent.target;
    if (changed && changed !== event.detail.elt && changed.name) {
      event.detail.headers["HX-Trigger-Name"] = changed.name;
    }
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form instanceof HTMLFormElement && form.method.toLowerCase() === "post" && !form.elements._csrf_token) {
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = "_csrf_token";
      field.value = csrfToken();
      form.appendChild(field);
    }
  }, true);

  // Configure a run shows only the chosen Training objective's fields (data-objectives lists who uses a part);
  // the server draws the same, so this only spares the wait for its answer. Hidden fields keep their values.
  function showObjective(form, objective) {
    form.querySelectorAll("[data-objectives]").forEach(function (part) {
      part.hidden = part.getAttribute("data-objectives").split(" ").indexOf(objective) < 0;
    });
    form.querySelectorAll("[data-legend-rl]").forEach(function (fieldset) {
      var legend = fieldset.querySelector("legend");
      if (legend) {
        legend.textContent = fieldset.getAttribute(objective === "rl" ? "data-legend-rl" : "data-legend-other");
      }
    });
  }
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select instanceof HTMLSelectElement && select.name === "objective" && select.form) {
      showObjective(select.form, select.value);
    }
  });

  // A form with data-confirm asks before it submits (the launch confirmation).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form instanceof HTMLFormElement ? form.getAttribute("data-confirm") : null;
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  }, true);

  // The Prompts tab's live poll leaves the tab as it is while a prompt is open, so what its reader opened stays open.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var panel = event.detail.elt;
    if (panel.classList && panel.classList.contains("prompts-tab") && panel.querySelector("details.prompt[open]")) {
      event.preventDefault();
    }
  });
})();
