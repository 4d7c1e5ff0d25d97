// webark's page script for the browser workers (webark.crawl.browser), installed with
// add_init_script in every frame before the page's own scripts run. It exposes
// self.__webark = {links(), opened(), expand(rounds, pauseMs)}:
// - opened(): absolute URLs passed to window.open, which is replaced so that no popup
//   is made (a popup would be a page outside the pool's bound; it returns null, as a
//   popup blocker does). Brozzler reports window.open targets as outlinks too.
// - links(): absolute URLs of a[href] and area[href] (SVG <a> too) of this frame.
// - expand(): opens click-to-expand content browsertrix-behaviors' autoclick leaves
//   alone (it clicks same-origin <a> only): every closed <details>, and every element
//   with aria-expanded="false" that cannot navigate (no href, no form submit), clicked
//   once each; repeated while a round opened something (content opened may hold more).
(() => {
  if (self.__webark) return;
  const opened = [];
  const clicked = new WeakSet();
  const absolute = (u) => {
    try { return new URL(String(u), document.baseURI).href; } catch (e) { return null; }
  };
  self.open = function (url) {
    const abs = url ? absolute(url) : null;
    if (abs) opened.push(abs);
    return null;
  };
  const links = () => {
    const out = [];
    for (const el of document.querySelectorAll("a[href], area[href]")) {
      let href = el.href;
      if (typeof href !== "string") href = href && absolute(href.baseVal);  // SVG <a>
      if (href) out.push(href);
    }
    return out;
  };
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const navigates = (el) =>
    (el.closest && el.closest("a[href], area[href]")) ||
    (el.form && (el.type === "submit" || el.type === "image"));
  async function expand(rounds, pauseMs) {
    let total = 0;
    for (let round = 0; round < rounds; round++) {
      let n = 0;
      for (const d of document.querySelectorAll("details:not([open])")) {
        if (clicked.has(d)) continue;
        clicked.add(d);
        d.open = true;
        n++;
      }
      for (const el of document.querySelectorAll('[aria-expanded="false"]')) {
        if (clicked.has(el) || !el.isConnected || navigates(el)) continue;
        clicked.add(el);
        el.click();
        n++;
      }
      if (n === 0) break;
      total += n;
      await sleep(pauseMs);
    }
    return total;
  }
  Object.defineProperty(self, "__webark", {
    value: Object.freeze({ links, opened: () => opened.slice(), expand }),
    enumerable: false,
  });
})();
