/*
 * webark replay client, part 2: CSS that enters the page at run time. Runs after
 * client.js (whose window.__webarkRewrite it uses) in the same served script.
 *
 * Every way a script can hand CSS to the browser goes through rewriteCss (url(),
 * @import, image-set(), CSS escapes undone first), relative URLs resolving against the
 * stylesheet's original URL or the document's:
 *   - <style> text: textContent / innerText / innerHTML of the element, the data or
 *     nodeValue of its text nodes, text nodes or strings appended to it (appendChild,
 *     insertBefore, replaceChild, append, prepend, replaceChildren);
 *   - inline style: the style attribute (client.js), element.style = "...",
 *     style.cssText, style.setProperty(), and the URL-bearing properties
 *     (style.backgroundImage = ..., style["list-style"] = ...);
 *   - the CSSOM: CSSStyleSheet insertRule / addRule / replace / replaceSync,
 *     CSSGroupingRule insertRule (@media ...), the Typed OM (attributeStyleMap.set,
 *     CSSStyleValue.parse), FontFace sources;
 *   - HTML parsed from strings outside the document (DOMParser, Range
 *     createContextualFragment, setHTMLUnsafe, Document.parseHTMLUnsafe, iframe srcdoc).
 * A MutationObserver is the safety net for the DOM: a <style> element or style
 * attribute that arrives by another way is rewritten as soon as it is in the document
 * (before the next style recalculation, unless the script forces one itself).
 */
(function () {
  "use strict";
  var W = window;
  var api = W.__webarkRewrite;
  if (!api || W.__webarkCssInstalled) {
    return;
  }
  Object.defineProperty(W, "__webarkCssInstalled", { value: true });
  var rewriteCss = api.rewriteCss;
  var rewriteHtml = api.rewriteHtml;
  var wrapSetter = api.wrapSetter;

  function isStyleElement(node) {
    return !!node && node.nodeType === 1 && String(node.localName).toLowerCase() === "style";
  }
  function inStyle(node) {
    return !!node && node.nodeType === 3 && isStyleElement(node.parentNode);
  }
  function asCss(v, base) {
    return typeof v === "string" || v instanceof String ? rewriteCss(String(v), base) : v;
  }
  /* The original URL of a stylesheet (null: the document's base applies). */
  function sheetBase(sheet) {
    try {
      return sheet && sheet.href ? api.toOriginal(sheet.href) : null;
    } catch (e) {
      return null;
    }
  }
  function declarationBase(decl) {
    var rule = decl && decl.parentRule;
    return rule ? sheetBase(rule.parentStyleSheet) : null;
  }
  function wrapMethod(proto, name, fix) {
    if (!proto || typeof proto[name] !== "function") {
      return;
    }
    var orig = proto[name];
    proto[name] = function () {
      var args = Array.prototype.slice.call(arguments);
      fix(args, this);
      return orig.apply(this, args);
    };
  }

  /* <style> text ------------------------------------------------------------------- */
  var NodeP = W.Node && W.Node.prototype;
  var textDesc = NodeP && Object.getOwnPropertyDescriptor(NodeP, "textContent");
  var dataDesc = W.CharacterData && Object.getOwnPropertyDescriptor(W.CharacterData.prototype, "data");
  function fixTextNode(node) {
    if (dataDesc && node && node.nodeType === 3) {
      var t = dataDesc.get.call(node);
      var n = rewriteCss(t);
      if (n !== t) {
        dataDesc.set.call(node, n);
      }
    }
  }
  function fixInserted(parent, node) {
    if (!isStyleElement(parent) || !node) {
      return;
    }
    if (node.nodeType === 3) {
      fixTextNode(node);
    } else if (node.nodeType === 11) {
      for (var c = node.firstChild; c; c = c.nextSibling) {
        fixTextNode(c);
      }
    }
  }
  wrapSetter(W.Node, "textContent", function (node, v) {
    return isStyleElement(node) || inStyle(node) ? asCss(v) : v;
  });
  wrapSetter(W.Node, "nodeValue", function (node, v) {
    return inStyle(node) ? asCss(v) : v;
  });
  wrapSetter(W.CharacterData, "data", function (node, v) {
    return inStyle(node) ? asCss(v) : v;
  });
  wrapSetter(W.HTMLElement, "innerText", function (el, v) {
    return isStyleElement(el) ? asCss(v) : v;
  });
  ["appendChild", "insertBefore", "replaceChild"].forEach(function (fn) {
    wrapMethod(NodeP, fn, function (args, parent) {
      fixInserted(parent, args[0]);
    });
  });
  ["append", "prepend", "replaceChildren"].forEach(function (fn) {
    var ElementP = W.Element && W.Element.prototype;
    wrapMethod(ElementP, fn, function (args, parent) {
      if (!isStyleElement(parent)) {
        return;
      }
      for (var i = 0; i < args.length; i++) {
        if (typeof args[i] === "string") {
          args[i] = rewriteCss(args[i]);
        } else {
          fixInserted(parent, args[i]);
        }
      }
    });
  });

  /* inline style and CSSStyleDeclaration -------------------------------------------- */
  ["HTMLElement", "SVGElement", "MathMLElement"].forEach(function (name) {
    wrapSetter(W[name], "style", function (el, v) {
      return asCss(v);
    });
  });
  var Decl = W.CSSStyleDeclaration && W.CSSStyleDeclaration.prototype;
  wrapSetter(W.CSSStyleDeclaration, "cssText", function (decl, v) {
    return asCss(v, declarationBase(decl));
  });
  var origSetProperty = Decl && Decl.setProperty;
  wrapMethod(Decl, "setProperty", function (args, decl) {
    args[1] = asCss(args[1], declarationBase(decl));
  });
  /* Properties whose value can hold a URL. Chromium resolves style.backgroundImage and
   * style["background-image"] through a named property interceptor, which an accessor
   * on the prototype takes precedence over. */
  var URL_PROPERTIES = [
    "background", "background-image", "border-image", "border-image-source", "list-style",
    "list-style-image", "content", "cursor", "mask", "mask-image", "mask-border",
    "mask-border-source", "-webkit-mask", "-webkit-mask-image", "-webkit-mask-box-image",
    "-webkit-mask-box-image-source", "-webkit-border-image", "shape-outside", "filter",
    "clip-path", "marker", "marker-start", "marker-mid", "marker-end", "offset-path"
  ];
  function camel(name) {
    return name.replace(/^-webkit-/, "webkit-").replace(/-([a-z])/g, function (all, c) {
      return c.toUpperCase();
    });
  }
  if (Decl && origSetProperty && Decl.getPropertyValue) {
    URL_PROPERTIES.forEach(function (prop) {
      var names = [prop, camel(prop)];
      if (prop.indexOf("-webkit-") === 0) {
        names.push(camel(prop).replace(/^w/, "W"));
      }
      names.forEach(function (name) {
        if (Object.getOwnPropertyDescriptor(Decl, name)) {
          return;
        }
        Object.defineProperty(Decl, name, {
          configurable: true,
          enumerable: true,
          get: function () {
            return this.getPropertyValue(prop);
          },
          set: function (v) {
            var value = v === null || v === undefined ? "" : String(v);
            origSetProperty.call(this, prop, rewriteCss(value, declarationBase(this)));
          }
        });
      });
    });
  }

  /* the CSSOM ------------------------------------------------------------------------ */
  var Sheet = W.CSSStyleSheet && W.CSSStyleSheet.prototype;
  wrapMethod(Sheet, "insertRule", function (args, sheet) {
    args[0] = asCss(args[0], sheetBase(sheet));
  });
  wrapMethod(Sheet, "addRule", function (args, sheet) {
    args[1] = asCss(args[1], sheetBase(sheet));
  });
  wrapMethod(Sheet, "replace", function (args, sheet) {
    args[0] = asCss(args[0], sheetBase(sheet));
  });
  wrapMethod(Sheet, "replaceSync", function (args, sheet) {
    args[0] = asCss(args[0], sheetBase(sheet));
  });
  wrapMethod(W.CSSGroupingRule && W.CSSGroupingRule.prototype, "insertRule", function (args, rule) {
    args[0] = asCss(args[0], sheetBase(rule.parentStyleSheet));
  });
  var MapP = W.StylePropertyMap && W.StylePropertyMap.prototype;
  ["set", "append"].forEach(function (fn) {
    wrapMethod(MapP, fn, function (args) {
      for (var i = 1; i < args.length; i++) {
        args[i] = asCss(args[i]);
      }
    });
  });
  if (W.CSSStyleValue) {
    ["parse", "parseAll"].forEach(function (fn) {
      wrapMethod(W.CSSStyleValue, fn, function (args) {
        args[1] = asCss(args[1]);
      });
    });
  }
  if (W.FontFace) {
    var OrigFontFace = W.FontFace;
    var FontFace = function FontFace(family, source) {
      var args = Array.prototype.slice.call(arguments);
      args[1] = asCss(source);
      return Reflect.construct(OrigFontFace, args);
    };
    FontFace.prototype = OrigFontFace.prototype;
    W.FontFace = FontFace;
  }

  /* HTML parsed outside the document --------------------------------------------------- */
  wrapMethod(W.DOMParser && W.DOMParser.prototype, "parseFromString", function (args) {
    if (/html/i.test(String(args[1]))) {
      args[0] = rewriteHtml(args[0]);
    }
  });
  wrapMethod(W.Range && W.Range.prototype, "createContextualFragment", function (args) {
    args[0] = rewriteHtml(args[0]);
  });
  wrapMethod(W.Element && W.Element.prototype, "setHTMLUnsafe", function (args, el) {
    args[0] = isStyleElement(el) ? asCss(args[0]) : rewriteHtml(args[0]);
  });
  wrapMethod(W.ShadowRoot && W.ShadowRoot.prototype, "setHTMLUnsafe", function (args) {
    args[0] = rewriteHtml(args[0]);
  });
  wrapMethod(W.Document, "parseHTMLUnsafe", function (args) {
    args[0] = rewriteHtml(args[0]);
  });
  wrapSetter(W.ShadowRoot, "innerHTML", function (root, v) {
    return rewriteHtml(v);
  });
  wrapSetter(W.HTMLIFrameElement, "srcdoc", function (el, v) {
    return rewriteHtml(v);
  });

  /* the safety net ------------------------------------------------------------------- */
  function fixStyleElement(el) {
    var get = textDesc && textDesc.get;
    if (!get) {
      return;
    }
    var t = get.call(el);
    var n = rewriteCss(t);
    if (n !== t) {
      textDesc.set.call(el, n);
    }
  }
  function fixStyleAttribute(el) {
    var t = el.getAttribute("style");
    if (t === null) {
      return;
    }
    var n = rewriteCss(t);
    if (n !== t) {
      api.setAttribute.call(el, "style", n);
    }
  }
  function fixTree(node) {
    if (node.nodeType !== 1) {
      if (inStyle(node)) {
        fixStyleElement(node.parentNode);
      }
      return;
    }
    if (isStyleElement(node)) {
      fixStyleElement(node);
    }
    if (node.hasAttribute && node.hasAttribute("style")) {
      fixStyleAttribute(node);
    }
    if (node.firstElementChild && node.querySelectorAll) {
      var found = node.querySelectorAll("style,[style]");
      for (var i = 0; i < found.length; i++) {
        fixTree(found[i]);
      }
    }
  }
  if (W.MutationObserver && W.document) {
    new MutationObserver(function (records) {
      for (var i = 0; i < records.length; i++) {
        var r = records[i];
        if (r.type === "attributes") {
          fixStyleAttribute(r.target);
        } else if (r.type === "characterData") {
          if (inStyle(r.target)) {
            fixStyleElement(r.target.parentNode);
          }
        } else if (isStyleElement(r.target)) {
          fixStyleElement(r.target);
        } else {
          for (var j = 0; j < r.addedNodes.length; j++) {
            fixTree(r.addedNodes[j]);
          }
        }
      }
    }).observe(document, { childList: true, subtree: true, characterData: true,
                           attributes: true, attributeFilter: ["style"] });
  }
})();
