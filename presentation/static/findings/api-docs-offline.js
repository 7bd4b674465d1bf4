// The API's docs load nothing from other hosts (the Content-Security-Policy refuses it, and a
// server without internet access must show them whole). Redoc's sidebar credit draws Redocly's
// logo from their CDN in every build, with no option to leave it out: an image given an address
// off this site gets no source instead, and Redoc, on that image's error, leaves it out. Loaded
// before Redoc, so that its first drawing is already covered.
(function () {
  "use strict";
  function onThisSite(value) {
    let address = null;
    try { address = new URL(String(value), document.baseURI); } catch (error) { return true; }
    return !/^https?:$/.test(address.protocol) || address.origin === window.location.origin;
  }
  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src" && !onThisSite(value)) {
      value = "";
    }
    return setAttribute.call(this, name, value);
  };
  const source = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: source.enumerable,
    get: source.get,
    set(value) { source.set.call(this, onThisSite(value) ? value : ""); },
  });
}());
