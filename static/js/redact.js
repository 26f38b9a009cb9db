// The redaction page: drag on the picture to draw a rectangle; each one is added to the
// form's list as "left, top, width, height" in the original's pixels (the picture shown
// is its preview, scaled). The list can still be typed by hand. Loaded from the app's own
// static files.
(function () {
  "use strict";
  var frame = document.querySelector("[data-redact]");
  var picture = frame && frame.querySelector("img");
  var field = document.querySelector("textarea[name='regions']");
  if (!picture || !field) return;
  var width = Number(frame.dataset.width), height = Number(frame.dataset.height);
  var start = null, box = null;

  function point(event) {
    var r = picture.getBoundingClientRect();
    return {
      x: Math.min(Math.max(event.clientX - r.left, 0), r.width),
      y: Math.min(Math.max(event.clientY - r.top, 0), r.height),
      w: r.width, h: r.height
    };
  }

  function place(div, a, b) {
    div.style.left = Math.min(a.x, b.x) + "px";
    div.style.top = Math.min(a.y, b.y) + "px";
    div.style.width = Math.abs(b.x - a.x) + "px";
    div.style.height = Math.abs(b.y - a.y) + "px";
  }

  picture.addEventListener("pointerdown", function (event) {
    event.preventDefault();
    start = point(event);
    box = document.createElement("div");
    box.className = "redact-box";
    frame.appendChild(box);
    place(box, start, start);
  });
  picture.addEventListener("pointermove", function (event) {
    if (start) place(box, start, point(event));
  });
  document.addEventListener("pointerup", function (event) {
    if (!start) return;
    var end = point(event), sx = width / start.w, sy = height / start.h;
    var left = Math.round(Math.min(start.x, end.x) * sx);
    var top = Math.round(Math.min(start.y, end.y) * sy);
    var w = Math.min(Math.round(Math.abs(end.x - start.x) * sx), width - left);
    var h = Math.min(Math.round(Math.abs(end.y - start.y) * sy), height - top);
    start = null;
    if (w < 1 || h < 1) {
      frame.removeChild(box);
      return;
    }
    var text = field.value.replace(/\s+$/, "");
    field.value = (text ? text + "\n" : "") + [left, top, w, h].join(", ");
  });
})();
