/* webark replay banner: a small fixed tab with the capture date, previous / next capture
 * and the capture list. It lives in a closed Shadow DOM under a host element whose inline
 * style resets everything (`all: initial`, !important), so the page's CSS cannot restyle
 * or hide it, and it is position:fixed, so it takes no room in the page's layout.
 * Data: window.__webark_banner = {date, captures, prev: {href, date} | null, next: ...,
 * screenshot: {href, date} | null} (screenshot: the capture's urn:view: PNG, raw; a
 * "screenshot" link, the image itself shown as a preview on hover),
 * certificate: {subject, issuer, not_before, not_after, sha256, chain, count, linked} | null
 * (the server's leaf certificate of an https capture: a "certificate" disclosure with
 * its fields and the chain's PEM, webark/apps/replay/certificates.py). */
(function () {
  "use strict";
  var data = window.__webark_banner;
  if (!data || window.top !== window.self) { return; }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function link(cap, label, cls) {
    if (!cap) { return '<span class="off ' + cls + '">' + label + '</span>'; }
    return '<a class="' + cls + '" href="' + esc(cap.href) + '" title="' + esc(cap.date) + '">' + label + '</a>';
  }
  /* An absolute URL: the client script (webark/rewrite/client.js) leaves URLs under the
   * collection's absolute prefix alone, but would take a relative
   * "/coll/TSid_/urn:view:..." (no http:// after the timestamp) for a link of the page. */
  function absolute(href) {
    try { return new URL(href, window.location.href).href; } catch (e) { return href; }
  }
  function mount() {
    if (document.getElementById("__webark_banner_host")) { return; }
    var host = document.createElement("webark-banner");
    host.id = "__webark_banner_host";
    host.setAttribute("style",
      "all: initial !important; position: fixed !important; top: 0 !important; right: 12px !important;" +
      " z-index: 2147483647 !important; display: block !important; visibility: visible !important;" +
      " opacity: 1 !important; transform: none !important; pointer-events: auto !important;");
    var root = host.attachShadow ? host.attachShadow({mode: "closed"}) : host;
    root.innerHTML =
      '<style>' +
      ':host { all: initial; }' +
      '.tab { font: 12px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #fff;' +
      ' background: #23313f; border-radius: 0 0 6px 6px; padding: 4px 10px; box-shadow: 0 2px 6px rgba(0,0,0,.35);' +
      ' display: flex; gap: 8px; align-items: center; white-space: nowrap; }' +
      'a { color: #9fd0ff; text-decoration: none; } a:hover { text-decoration: underline; }' +
      '.off { color: #6d7d8c; } .brand { font-weight: 700; color: #fff; letter-spacing: .04em; }' +
      '.date { color: #fff; font-variant-numeric: tabular-nums; }' +
      'button { all: unset; cursor: pointer; color: #c8d2dc; padding: 0 2px; }' +
      '.hidden .more { display: none; }' +
      '.shotbox { position: relative; } .preview { display: none; position: absolute; right: 0;' +
      ' top: calc(100% + 8px); width: 320px; height: auto; background: #fff;' +
      ' border: 2px solid #23313f; border-radius: 4px; box-shadow: 0 2px 8px rgba(0,0,0,.4); }' +
      '.shotbox:hover .preview { display: block; }' +
      'details.cert { position: relative; } details.cert summary { cursor: pointer; color: #9fd0ff; }' +
      '.certbody { position: absolute; right: 0; top: calc(100% + 8px); background: #23313f; color: #fff;' +
      ' padding: 8px; border-radius: 4px; white-space: normal; width: 420px; box-shadow: 0 2px 8px rgba(0,0,0,.4); }' +
      '.certbody dt { color: #c8d2dc; } .certbody dd { margin: 0 0 4px 0; word-break: break-all; }' +
      '.certbody pre { max-height: 160px; overflow: auto; font-size: 10px; white-space: pre; }' +
      '</style>' +
      '<div class="tab" role="navigation" aria-label="webark archive">' +
      '<span class="brand">webark</span>' +
      '<span class="more"><span class="date" title="capture time (UTC)">' + esc(data.date) + '</span></span>' +
      '<span class="more">' + link(data.prev, "&#8249; prev", "prev") + '</span>' +
      '<span class="more">' + link(data.next, "next &#8250;", "next") + '</span>' +
      '<span class="more"><a class="all" href="' + esc(data.captures) + '">all captures</a></span>' +
      (data.screenshot ? '<span class="more shotbox"><a class="shot" href="' + esc(absolute(data.screenshot.href)) +
        '" title="screenshot taken when the page was captured (' + esc(data.screenshot.date) +
        ')">screenshot</a></span>' : '') +
      (data.certificate ? '<span class="more"><details class="cert"><summary title="the server\'s TLS certificate">certificate</summary>' +
        '<div class="certbody"><dl>' +
        '<dt>subject</dt><dd class="subject">' + esc(data.certificate.subject) + '</dd>' +
        '<dt>issuer</dt><dd class="issuer">' + esc(data.certificate.issuer) + '</dd>' +
        '<dt>valid</dt><dd class="validity">' + esc(data.certificate.not_before) + ' \u2013 ' + esc(data.certificate.not_after) + '</dd>' +
        '<dt>SHA-256</dt><dd class="sha256">' + esc(data.certificate.sha256) + '</dd></dl>' +
        '<pre class="chain">' + esc(data.certificate.chain) + '</pre></div></details></span>' : '') +
      '<button type="button" class="toggle" title="hide / show">&#215;</button>' +
      '</div>';
    var tab = root.querySelector(".tab");
    var shot = root.querySelector("a.shot");
    if (shot) {
      /* the screenshot itself as a preview, fetched on the first hover only */
      shot.parentNode.addEventListener("mouseenter", function () {
        if (shot.parentNode.querySelector(".preview")) { return; }
        var img = document.createElement("img");
        img.className = "preview";
        img.alt = "screenshot of this capture";
        img.src = shot.href;
        shot.parentNode.appendChild(img);
      });
    }
    root.querySelector(".toggle").addEventListener("click", function () {
      tab.classList.toggle("hidden");
    });
    document.documentElement.appendChild(host);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mount);
  } else {
    mount();
  }
})();
