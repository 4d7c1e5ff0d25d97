// Runs webark's client.js in Node with a minimal stand-in for the browser objects it
// wraps, performs the calls a replayed page would make, and prints what reached the
// underlying (unwrapped) APIs as JSON. Used by test_rw_client.py.
"use strict";
const fs = require("fs");
const [clientPath, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);

globalThis.window = globalThis;
window.__webark = setup.config;
globalThis.location = new URL(setup.location);
const seen = {};

class Element {
  constructor(tag) { this.localName = tag; this.attrs = {}; this.parentNode = null; }
  setAttribute(n, v) { this.attrs[n.toLowerCase()] = String(v); }
  setAttributeNS(ns, n, v) { this.attrs[n] = String(v); }
  getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
  insertAdjacentHTML(where, html) { seen.adjacent = html; }
}
Object.defineProperty(Element.prototype, "innerHTML", {
  configurable: true, enumerable: true,
  get() { return this._html; }, set(v) { this._html = String(v); },
});
function urlProp(Ctor, prop) {
  Object.defineProperty(Ctor.prototype, prop, {
    configurable: true, enumerable: true,
    get() { return this.attrs[prop.toLowerCase()]; },
    set(v) { this.attrs[prop.toLowerCase()] = String(v); },
  });
}
const ctors = {
  HTMLImageElement: ["src", "srcset"], HTMLScriptElement: ["src"], HTMLLinkElement: ["href"],
  HTMLAnchorElement: ["href"], HTMLIFrameElement: ["src"], HTMLFormElement: ["action"],
  HTMLSourceElement: ["src", "srcset"], HTMLMediaElement: ["src"],
};
for (const [name, props] of Object.entries(ctors)) {
  const C = class extends Element {};
  Object.defineProperty(C, "name", { value: name });
  props.forEach((p) => urlProp(C, p));
  globalThis[name] = C;
}
globalThis.HTMLVideoElement = class extends HTMLMediaElement {};
urlProp(HTMLVideoElement, "poster");
globalThis.Element = Element;
globalThis.Document = class Document {
  write(...a) { seen.write = a.join(""); }
  writeln(...a) { seen.writeln = a.join(""); }
};
globalThis.document = new Document();
document.baseURI = setup.baseURI || setup.location;
globalThis.History = class History {
  pushState(s, t, u) { seen.pushState = u; }
  replaceState(s, t, u) { seen.replaceState = u; }
};
globalThis.history = new History();
globalThis.XMLHttpRequest = class XMLHttpRequest { open(m, u) { seen.xhr = u; } };
window.fetch = function (input) { seen.fetch = typeof input === "string" ? input : input.url; };
window.open = function (u) { seen.open = u; };

eval(fs.readFileSync(clientPath, "utf8"));

const api = window.__webarkRewrite;
const out = { rewrite: {}, seen };
for (const u of setup.urls) {
  out.rewrite[u] = api.rewrite(u);
}
const img = new HTMLImageElement("img");
img.src = "/img/a.png";
img.srcset = "b.png 1x, //cdn.example.org/c.png 2x";
const a = new HTMLAnchorElement("a");
a.href = "next.html";
const s = new HTMLScriptElement("script");
s.setAttribute("src", "https://cdn.example.org/lib.js");
const link = new HTMLLinkElement("link");
link.setAttribute("rel", "stylesheet");
link.href = "/s.css";
const div = new Element("div");
div.setAttribute("style", "background: url('/bg.png')");
div.setAttribute("title", "/not-a-url");
div.innerHTML = '<img src="/x.png"><a href="http://other.org/?a=1&amp;b=2">o</a>';
div.insertAdjacentHTML("beforeend", "<iframe src='/frame.html'></iframe>");
const v = new HTMLVideoElement("video");
v.poster = "p.jpg";
document.write('<script src="/w.js"></script>');
new XMLHttpRequest().open("GET", "/api/data.json?x=1");
fetch("data/feed.json");
fetch(new URL("https://api.example.org/v1"));
history.pushState({}, "", "?page=2");
history.replaceState({}, "");
window.open("/popup.html");
out.img = img.attrs;
out.a = a.attrs;
out.script = s.attrs;
out.link = link.attrs;
out.div = { attrs: div.attrs, html: div._html };
out.video = v.attrs;
out.toOriginal = api.toOriginal(setup.location);
out.css = (setup.css || []).map((t) => api.rewriteCss(t));
out.html = (setup.html || []).map((t) => api.rewriteHtml(t));
console.log(JSON.stringify(out));
