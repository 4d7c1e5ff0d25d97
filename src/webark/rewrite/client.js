/*
 * webark replay client: keeps URLs that a replayed page builds at run time inside the
 * archive. No dependencies; runs once per document.
 *
 * The server inserts, in a script element before this one (client_config_script):
 *   window.__webark = {"prefix": "/coll/", "timestamp": "20140126200624",
 *                      "url": "http://www.iana.org/", "modifier": ""};
 * prefix: collection prefix (path or absolute URL, ending in "/"); timestamp: the
 * capture's 1-14 digits; url: the page's original URL; modifier: its replay modifier.
 *
 * Archive URLs have the form {prefix}{timestamp}{modifier}/{absolute original URL}
 * (pywb / Wayback). Relative URLs are resolved against the page's ORIGINAL URL (or its
 * original <base href>), never against the archive URL, so "/x.png" stays on the
 * archived site. What is wrapped: fetch, XMLHttpRequest.open, navigator.sendBeacon,
 * EventSource, Worker, history.pushState/replaceState, window.open, the URL property
 * setters of elements (src, href, action, poster, data, srcset, formAction),
 * setAttribute/setAttributeNS, innerHTML/outerHTML/insertAdjacentHTML,
 * document.write/writeln (HTML strings: URL attributes, character references decoded,
 * <style> contents, meta refresh). Service worker registration is refused (a site's
 * worker would take over the archive's URL space).
 *
 * Getters are left alone: reading a.href gives the archive URL. CSS that enters the
 * page at run time is client_css.js's, navigations and sockets client_guard.js's
 * (served after this file, as one script; they use window.__webarkRewrite).
 */
(function () {
  "use strict";
  var cfg = window.__webark;
  if (!cfg || window.__webarkInstalled) {
    return;
  }
  Object.defineProperty(window, "__webarkInstalled", { value: true });

  var loc = window.location;
  var ts = String(cfg.timestamp || "");
  var pageMod = String(cfg.modifier || "");
  var absPrefix = new URL(String(cfg.prefix || "/"), loc.href).href;
  var prefixIsPath = String(cfg.prefix || "/").charAt(0) === "/";
  var prefixPath = new URL(absPrefix).pathname;
  var skipScheme = /^(?:data|javascript|mailto|tel|sms|about|blob|file|ws|wss|chrome|chrome-extension|moz-extension|intent):/i;

  function escapeRe(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  var rewrittenRe = new RegExp("^" + escapeRe(prefixPath) + "(?:[\\d*\\-]{0,30}(?:[a-z]{2}_)?/)?(?:https?:)?//", "i");
  var archiveRe = new RegExp("^" + escapeRe(prefixPath) + "(\\d{0,14})([a-z]{2}_)?/(.*)$", "i");

  /* The original URL an archive URL stands for, or null. */
  function toOriginal(u) {
    var s = String(u);
    if (s.indexOf(loc.origin) === 0) {
      s = s.slice(loc.origin.length);
    }
    var m = archiveRe.exec(s);
    if (!m || !/^https?:\/\/?/i.test(m[3])) {
      return null;
    }
    return m[3].replace(/^(https?:)\/(?!\/)/i, "$1//");
  }

  /* The base for relative URLs: the original of the document's base URL. */
  function baseUrl() {
    return toOriginal(document.baseURI) || toOriginal(loc.href) || String(cfg.url);
  }

  function modFor(mod) {
    return mod === undefined || mod === null ? pageMod : mod;
  }

  /* Rewrite one URL; mod undefined means the page's own modifier; base (optional) is
   * the original URL relative references resolve against (default: the document's). */
  function rewrite(url, mod, base) {
    if (url === null || url === undefined) {
      return url;
    }
    var s = String(url).trim();
    if (!s || s.charAt(0) === "#" || skipScheme.test(s)) {
      return url;
    }
    if (s.indexOf(absPrefix) === 0 || rewrittenRe.test(s)) {
      return url;
    }
    var abs;
    try {
      abs = new URL(s, base || baseUrl());
    } catch (e) {
      return url;
    }
    if (abs.protocol !== "http:" && abs.protocol !== "https:") {
      return url;
    }
    if (abs.origin === loc.origin) {
      // built from location.origin / location.host: the archived site was meant
      try {
        var orig = new URL(baseUrl());
        abs = new URL(abs.pathname + abs.search + abs.hash, orig.origin);
      } catch (e2) {
        return url;
      }
    }
    var seg = ts + modFor(mod);
    return (prefixIsPath ? prefixPath : absPrefix) + (seg ? seg + "/" : "") + abs.href;
  }

  /* srcset: each candidate URL (HTML Standard "parse a srcset attribute"). */
  function rewriteSrcset(value) {
    var v = String(value);
    var out = "";
    var i = 0;
    var n = v.length;
    while (i < n) {
      var j = i;
      while (j < n && /[\s,]/.test(v.charAt(j))) {
        j++;
      }
      out += v.slice(i, j);
      if (j >= n) {
        break;
      }
      var k = j;
      while (k < n && !/\s/.test(v.charAt(k))) {
        k++;
      }
      var url = v.slice(j, k);
      var trail = /,*$/.exec(url)[0];
      url = url.slice(0, url.length - trail.length);
      out += rewrite(url, "im_") + trail;
      i = k;
      if (trail) {
        continue;
      }
      var depth = 0;
      while (k < n && (v.charAt(k) !== "," || depth)) {
        if (v.charAt(k) === "(") {
          depth++;
        } else if (v.charAt(k) === ")" && depth) {
          depth--;
        }
        k++;
      }
      out += v.slice(i, k);
      i = k;
    }
    return out;
  }

  /* CSS (CSS Syntax Level 3, "consume a url token" and strings): url(...) in its three
   * spellings, @import "..." / @import url(...) (cs_), the strings of image-set().
   * Escapes are undone before a URL is rewritten (url(\/\/host\/x.png) is //host/x.png
   * to the browser) and the result is written back escaped as needed. base: the
   * original URL of the stylesheet (default: the document's base). */
  var cssRe = /(@import\s*)?url\(\s*(?:"((?:[^"\\\n]|\\[\s\S])*)"|'((?:[^'\\\n]|\\[\s\S])*)'|((?:[^)"'\s\\]|\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?|\\[\s\S])*))\s*\)|(@import\s*)(?:"((?:[^"\\\n]|\\[\s\S])*)"|'((?:[^'\\\n]|\\[\s\S])*)')|((?:-webkit-)?image-set\()/gi;
  var cssEscRe = /\\(?:([0-9a-fA-F]{1,6})[ \t\n\r\f]?|(\r\n|[\n\r\f])|([\s\S]))/g;
  function cssUnescape(s) {
    if (s.indexOf("\\") < 0) {
      return s;
    }
    return s.replace(cssEscRe, function (all, hex, nl, ch) {
      if (hex) {
        var cp = parseInt(hex, 16);
        return cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? "\ufffd" : String.fromCodePoint(cp);
      }
      return nl ? "" : ch;
    });
  }
  /* A URL written back: quoted as it was (escaping the quote and backslashes), or
   * unquoted when it needs no escape. */
  function cssQuote(url, quote) {
    if (quote) {
      return quote + url.replace(/\\/g, "\\\\").replace(new RegExp(quote, "g"), "\\" + quote).replace(/\n/g, "\\a ") + quote;
    }
    return /[\s"'()\\]/.test(url) ? cssQuote(url, '"') : url;
  }
  function cssUrl(raw, quote, mod, base) {
    var url = cssUnescape(raw);
    var nu = rewrite(url, mod, base);
    return nu === url ? null : cssQuote(String(nu), quote);
  }
  function rewriteCss(text, base) {
    var t = String(text);
    if (!/url\(|@import|image-set\(/i.test(t)) {
      return text;
    }
    var changed = false;
    var out = t.replace(cssRe, function (all, imp, dq, sq, bare, imp2, idq, isq, iset, offset) {
      var nu;
      if (iset) {
        return all; /* strings inside image-set(): see below */
      }
      if (imp2) {
        nu = idq !== undefined ? cssUrl(idq, '"', "cs_", base) : cssUrl(isq, "'", "cs_", base);
        return nu === null ? all : (changed = true, imp2 + nu);
      }
      var mod = imp ? "cs_" : "im_";
      if (dq !== undefined) {
        nu = cssUrl(dq, '"', mod, base);
      } else if (sq !== undefined) {
        nu = cssUrl(sq, "'", mod, base);
      } else {
        nu = bare ? cssUrl(bare, "", mod, base) : null;
      }
      if (nu === null) {
        return all;
      }
      changed = true;
      return (imp || "") + "url(" + nu + ")";
    });
    if (/image-set\(/i.test(out)) {
      var fixed = rewriteImageSets(out, base);
      changed = changed || fixed !== out;
      out = fixed;
    }
    return changed ? out : text;
  }
  var imageSetRe = /(?:-webkit-)?image-set\(/gi;
  var cssStringRe = /"((?:[^"\\\n]|\\[\s\S])*)"|'((?:[^'\\\n]|\\[\s\S])*)'/g;
  function rewriteImageSets(text, base) {
    var out = "";
    var last = 0;
    var m;
    imageSetRe.lastIndex = 0;
    while ((m = imageSetRe.exec(text)) !== null) {
      var depth = 1;
      var i = imageSetRe.lastIndex;
      while (i < text.length && depth) {
        var c = text.charAt(i);
        depth += c === "(" ? 1 : c === ")" ? -1 : 0;
        i++;
      }
      var args = text.slice(imageSetRe.lastIndex, i).replace(cssStringRe, function (all, dq, sq) {
        var nu = dq !== undefined ? cssUrl(dq, '"', "im_", base) : cssUrl(sq, "'", "im_", base);
        return nu === null ? all : nu;
      });
      out += text.slice(last, imageSetRe.lastIndex) + args;
      last = imageSetRe.lastIndex = i;
    }
    return out + text.slice(last);
  }

  /* A refresh value ("5; url=...", HTML Standard "shared declarative refresh steps"):
   * only its URL is rewritten. */
  var refreshRe = /^(\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?)(['"]?)(.*?)\2(\s*)$/i;
  function rewriteRefresh(value) {
    var m = refreshRe.exec(String(value));
    if (!m || !m[3]) {
      return value;
    }
    var nu = rewrite(m[3], navMod());
    return nu === m[3] ? value : m[1] + m[2] + nu + m[2] + m[4];
  }
  /* The modifier of documents this one navigates to (links, forms, location). */
  function navMod() {
    return /^(?:|mp_|if_|fr_)$/.test(pageMod) ? pageMod : "";
  }

  /* Modifier for an attribute of an element (same table as the server's). */
  var ATTR_MODS = {
    a: { href: null }, area: { href: null }, form: { action: null },
    button: { formaction: null }, input: { src: "im_", formaction: null },
    img: { src: "im_" }, image: { href: "im_", "xlink:href": "im_" },
    script: { src: "js_" }, iframe: { src: "if_" }, frame: { src: "if_" },
    embed: { src: "oe_" }, object: { data: "oe_" }, audio: { src: "oe_" },
    video: { src: "oe_", poster: "im_" }, source: { src: "oe_" }, track: { src: "oe_" },
    body: { background: "im_" }, table: { background: "im_" }, td: { background: "im_" },
    link: { href: "link" }, base: { href: null }
  };
  function linkMod(el) {
    var rel = String(el.rel || el.getAttribute("rel") || "").toLowerCase();
    if (/\bstylesheet\b/.test(rel)) {
      return "cs_";
    }
    if (/\bmodulepreload\b/.test(rel)) {
      return "js_";
    }
    if (/\bicon\b/.test(rel)) {
      return "im_";
    }
    var as = String(el.getAttribute("as") || "").toLowerCase();
    return { script: "js_", style: "cs_", image: "im_", font: "im_" }[as] || null;
  }
  /* undefined = not a URL attribute; null = page modifier. */
  function attrMod(el, name) {
    var tag = String(el.localName || el.tagName || "").toLowerCase();
    var table = ATTR_MODS[tag];
    if (!table || !Object.prototype.hasOwnProperty.call(table, name)) {
      return undefined;
    }
    var mod = table[name];
    if (mod === "link") {
      return linkMod(el);
    }
    if (tag === "source" && el.parentNode && String(el.parentNode.localName) === "picture") {
      return "im_";
    }
    return mod;
  }
  function rewriteAttr(el, name, value) {
    var n = String(name).toLowerCase();
    if (n === "srcset" || n === "imagesrcset") {
      return rewriteSrcset(value);
    }
    if (n === "style") {
      return rewriteCss(value);
    }
    if (n === "content" && String(el.localName || el.tagName || "").toLowerCase() === "meta" &&
        /^\s*refresh\s*$/i.test(String(el.getAttribute("http-equiv") || ""))) {
      return rewriteRefresh(value);
    }
    var mod = attrMod(el, n);
    return mod === undefined ? value : rewrite(value, mod);
  }

  /* HTML strings (document.write, innerHTML): URL attributes of each start tag, and the
   * CSS of <style> elements. Attribute values are decoded (character references) before
   * they are rewritten and encoded again after; a value that did not change is kept as
   * written. */
  var tagRe = /<([a-zA-Z][\w:-]*)(\s[^<>]*)?>/g;
  var attrRe = /(\s)([\w:-]+)(\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)/g;
  var styleElRe = /(<style\b[^>]*>)([\s\S]*?)(<\/style[\s/>])/gi;
  var charRefRe = /&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|(amp|quot|apos|lt|gt));?/g;
  var NAMED_REFS = { amp: "&", quot: '"', apos: "'", lt: "<", gt: ">" };
  function decodeAttr(v) {
    if (v.indexOf("&") < 0) {
      return v;
    }
    return v.replace(charRefRe, function (all, dec, hex, name) {
      if (name) {
        return NAMED_REFS[name.toLowerCase()] || all;
      }
      var cp = dec ? parseInt(dec, 10) : parseInt(hex, 16);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : all;
    });
  }
  function encodeAttr(v, quote) {
    var out = String(v).replace(/&/g, "&amp;");
    return quote === "'" ? out.replace(/'/g, "&#39;") : out.replace(/"/g, "&quot;");
  }
  function rewriteHtml(html) {
    if (typeof html !== "string" || html.indexOf("<") < 0) {
      return html;
    }
    var out = html.replace(tagRe, function (whole, tag, attrs) {
      if (!attrs) {
        return whole;
      }
      var fake = {
        localName: tag.toLowerCase(),
        rel: (/\srel\s*=\s*["']?([^"'>]*)/i.exec(attrs) || [])[1],
        getAttribute: function (a) {
          var m = new RegExp("\\s" + a + "\\s*=\\s*(?:\"([^\"]*)\"|'([^']*)'|([^\\s\"'>]+))", "i").exec(attrs);
          return m ? decodeAttr(m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[3]) : null;
        }
      };
      var newAttrs = attrs.replace(attrRe, function (all, sp, name, eq, val) {
        var q = val.charAt(0) === '"' || val.charAt(0) === "'" ? val.charAt(0) : "";
        var decoded = decodeAttr(q ? val.slice(1, -1) : val);
        var nv = rewriteAttr(fake, name, decoded);
        if (nv === decoded) {
          return all;
        }
        var quote = q || (/[\s"'=<>`]/.test(String(nv)) ? '"' : "");
        return sp + name + eq + quote + encodeAttr(nv, quote || '"') + quote;
      });
      return "<" + tag + newAttrs + ">";
    });
    if (out.indexOf("<style") >= 0 || /<style/i.test(out)) {
      out = out.replace(styleElRe, function (all, open, css, close) {
        var nc = rewriteCss(css);
        return nc === css ? all : open + nc + close;
      });
    }
    return out;
  }

  /* --- wrappers ---------------------------------------------------------------- */
  function wrapSetter(Ctor, prop, how) {
    if (!Ctor || !Ctor.prototype) {
      return;
    }
    var desc = Object.getOwnPropertyDescriptor(Ctor.prototype, prop);
    if (!desc || !desc.set || !desc.configurable) {
      return;
    }
    Object.defineProperty(Ctor.prototype, prop, {
      configurable: true,
      enumerable: desc.enumerable,
      get: desc.get,
      set: function (v) {
        desc.set.call(this, how(this, v));
      }
    });
  }
  function byMod(mod) {
    return function (el, v) {
      return rewrite(v, mod);
    };
  }
  function byAttr(name) {
    return function (el, v) {
      return rewriteAttr(el, name, v);
    };
  }
  var W = window;
  wrapSetter(W.HTMLImageElement, "src", byMod("im_"));
  wrapSetter(W.HTMLImageElement, "srcset", byAttr("srcset"));
  wrapSetter(W.HTMLScriptElement, "src", byMod("js_"));
  wrapSetter(W.HTMLLinkElement, "href", byAttr("href"));
  wrapSetter(W.HTMLAnchorElement, "href", byMod(null));
  wrapSetter(W.HTMLAreaElement, "href", byMod(null));
  wrapSetter(W.HTMLIFrameElement, "src", byMod("if_"));
  wrapSetter(W.HTMLFrameElement, "src", byMod("if_"));
  wrapSetter(W.HTMLFormElement, "action", byMod(null));
  wrapSetter(W.HTMLButtonElement, "formAction", byMod(null));
  wrapSetter(W.HTMLInputElement, "src", byMod("im_"));
  wrapSetter(W.HTMLInputElement, "formAction", byMod(null));
  wrapSetter(W.HTMLSourceElement, "src", byAttr("src"));
  wrapSetter(W.HTMLSourceElement, "srcset", byAttr("srcset"));
  wrapSetter(W.HTMLMediaElement, "src", byMod("oe_"));
  wrapSetter(W.HTMLVideoElement, "poster", byMod("im_"));
  wrapSetter(W.HTMLEmbedElement, "src", byMod("oe_"));
  wrapSetter(W.HTMLObjectElement, "data", byMod("oe_"));
  wrapSetter(W.HTMLTrackElement, "src", byMod("oe_"));
  wrapSetter(W.Element, "innerHTML", function (el, v) {
    var tag = String(el.localName);
    return tag === "style" ? rewriteCss(v) : tag === "script" ? v : rewriteHtml(v);
  });
  wrapSetter(W.Element, "outerHTML", function (el, v) {
    return rewriteHtml(v);
  });

  var origSetAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    return origSetAttribute.call(this, name, rewriteAttr(this, name, value));
  };
  var origSetAttributeNS = Element.prototype.setAttributeNS;
  Element.prototype.setAttributeNS = function (ns, name, value) {
    var local = String(name).replace(/^xlink:/i, "");
    var v = local === "href" && String(this.localName) === "image" ? rewrite(value, "im_") : rewriteAttr(this, local, value);
    return origSetAttributeNS.call(this, ns, name, v);
  };
  var origInsertAdjacentHTML = Element.prototype.insertAdjacentHTML;
  Element.prototype.insertAdjacentHTML = function (where, html) {
    return origInsertAdjacentHTML.call(this, where, rewriteHtml(html));
  };

  ["write", "writeln"].forEach(function (fn) {
    var orig = Document.prototype[fn];
    Document.prototype[fn] = function () {
      var args = Array.prototype.map.call(arguments, rewriteHtml);
      return orig.apply(this, args);
    };
  });

  if (W.fetch) {
    var origFetch = W.fetch;
    W.fetch = function (input, init) {
      if (typeof input === "string" || (W.URL && input instanceof URL)) {
        input = rewrite(String(input), null);
      } else if (W.Request && input instanceof Request) {
        var nu = rewrite(input.url, null);
        if (nu !== input.url) {
          input = new Request(nu, input);
        }
      }
      return origFetch.call(this, input, init);
    };
  }

  var origOpen = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url) {
    var args = Array.prototype.slice.call(arguments);
    args[1] = rewrite(url, null);
    return origOpen.apply(this, args);
  };

  if (W.navigator && navigator.sendBeacon) {
    var origBeacon = navigator.sendBeacon;
    navigator.sendBeacon = function (url, data) {
      return origBeacon.call(navigator, rewrite(url, null), data);
    };
  }
  function wrapCtor(name, mod) {
    var Orig = W[name];
    if (!Orig) {
      return;
    }
    var Wrapped = function (url, opts) {
      return new Orig(rewrite(url, mod), opts);
    };
    Wrapped.prototype = Orig.prototype;
    W[name] = Wrapped;
  }
  wrapCtor("EventSource", null);
  wrapCtor("Worker", "js_");
  wrapCtor("SharedWorker", "js_");

  ["pushState", "replaceState"].forEach(function (fn) {
    var orig = History.prototype[fn];
    History.prototype[fn] = function (state, title, url) {
      if (url === undefined || url === null) {
        return orig.call(this, state, title);
      }
      return orig.call(this, state, title, rewrite(url, null));
    };
  });

  var origWindowOpen = W.open;
  W.open = function (url, target, features) {
    var args = Array.prototype.slice.call(arguments);
    if (args.length && url) {
      args[0] = rewrite(url, pageMod === "mp_" ? "mp_" : "");
    }
    return origWindowOpen.apply(this, args);
  };

  if (W.navigator && navigator.serviceWorker && navigator.serviceWorker.register) {
    navigator.serviceWorker.register = function () {
      return Promise.reject(new Error("service workers are disabled in replay"));
    };
  }

  /* for client_css.js and client_guard.js, for tests and for the banner */
  Object.defineProperty(window, "__webarkRewrite", {
    value: { rewrite: rewrite, rewriteHtml: rewriteHtml, rewriteSrcset: rewriteSrcset,
             rewriteCss: rewriteCss, rewriteRefresh: rewriteRefresh, toOriginal: toOriginal,
             baseUrl: baseUrl, navMod: navMod, wrapSetter: wrapSetter,
             setAttribute: origSetAttribute, prefixPath: prefixPath, timestamp: ts }
  });
})();
