// timeline.js - the interactive timeline of `ppsc sim --format=html`.
//
// Draws the simulated schedule from the JSON in <script id="pps-data">
// (written by compiler/backends/TraceHtml.cpp) into <svg id="timeline">:
// one lane per rank (computes shaded by chunk or direction, a thin comm
// strip under each), a time axis, message arrows on demand, the critical
// path on demand, each rank's activation memory under the timeline and,
// for a deadlock, where each rank blocks with the cycle of waits. Zoom with
// the wheel, the buttons or +/-/0, pan by dragging or with the arrow keys;
// a link can open a view (#messages&critical&view=10,40). Only what is in
// view is drawn, so the page stays fast on big schedules.
//
// Opened with #selfcheck, the page exercises itself (zoom, pan, arrows,
// tooltips, legend) and writes the result into a pre element with the id
// pps-selfcheck and a data-status of ok or fail,
// which the render tests read from headless Chromium.
(function () {
  'use strict';

  const D = JSON.parse(document.getElementById('pps-data').textContent);
  const svg = document.getElementById('timeline');
  const view = document.getElementById('view');
  const tip = document.getElementById('tip');
  const STRIDE = 9; // kind, mb, stage, peer, start, xstart, end, chunk, flags
  const OVERLAP_FIRST = 1, OVERLAP_SECOND = 2, CRITICAL = 4;
  const L = {
    left: 92, right: 16, top: 30, laneH: 38, boxH: 22, stripH: 6,
    memGap: 16, memTitle: 22, memH: 34, bottom: 24,
  };

  // --- numbers ------------------------------------------------------------
  /** A time or amount for people: at most three decimals, no trailing zeros. */
  function num(x) {
    if (x === null || x === undefined || !isFinite(x)) return '-';
    const r = Math.round(x * 1000) / 1000;
    return (Object.is(r, -0) ? 0 : r).toString();
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }

  // --- the data -----------------------------------------------------------
  const kinds = D.kinds;
  const lanes = D.lanes;
  const P = lanes.length;
  function at(r, e, f) { return lanes[r].a[e * STRIDE + f]; }
  function count(r) { return lanes[r].a.length / STRIDE; }
  function kindOf(r, e) { return kinds[at(r, e, 0)]; }
  function nameOf(r, e) {
    return kindOf(r, e).t.replace('{m}', at(r, e, 1)).replace('{s}', at(r, e, 2))
      .replace('{p}', at(r, e, 3));
  }
  function finite(v) { return v !== null && v !== undefined && isFinite(v); }

  const fullStart = 0;
  const fullEnd = Math.max(D.end, 1e-9);
  let v0 = fullStart, v1 = fullEnd;
  let showMsgs = false, showCrit = false, hotMsg = -1;
  let hits = [];

  // Messages: [send rank, send entry, recv rank, recv entry] per message.
  const msgs = D.msgs;
  const msgOf = new Map(); // "rank:entry" of either end -> message number
  for (let i = 0; i < msgs.length / 4; ++i) {
    msgOf.set(msgs[4 * i] + ':' + msgs[4 * i + 1], i);
    msgOf.set(msgs[4 * i + 2] + ':' + msgs[4 * i + 3], i);
  }
  function msgTimes(i) {
    const sr = msgs[4 * i], se = msgs[4 * i + 1], dr = msgs[4 * i + 2],
      de = msgs[4 * i + 3];
    return [sr, at(sr, se, 5), dr, at(dr, de, 6), kindOf(sr, se).dir === 'F'];
  }

  // --- geometry -----------------------------------------------------------
  let W = 800;
  function plotW() { return Math.max(W - L.left - L.right, 50); }
  function x(t) { return L.left + ((t - v0) / (v1 - v0)) * plotW(); }
  function tAt(px) { return v0 + ((px - L.left) / plotW()) * (v1 - v0); }
  function laneY(r) { return L.top + r * L.laneH; }
  const memTop = L.top + P * L.laneH + L.memGap;
  function memY(r) { return memTop + L.memTitle + r * L.memH; }
  const H = memTop + L.memTitle + P * L.memH + L.bottom;
  const clampX = (v) => Math.max(L.left - 4, Math.min(W + 4, v));

  function niceStep(minUnits) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(minUnits, 1e-12))));
    for (const m of [1, 2, 5, 10]) if (m * p >= minUnits) return m * p;
    return 10 * p;
  }

  // --- drawing ------------------------------------------------------------
  function hit(text) { hits.push(text); return ' data-h="' + (hits.length - 1) + '"'; }

  function actText(r, e) {
    const k = kindOf(r, e);
    const s = at(r, e, 4), x0 = at(r, e, 5), en = at(r, e, 6);
    let t = nameOf(r, e);
    if (at(r, e, 8) & OVERLAP_FIRST) t += ' + ' + nameOf(r, e + 1) + ' (overlapped)';
    if (at(r, e, 8) & OVERLAP_SECOND) t = nameOf(r, e - 1) + ' + ' + t + ' (overlapped)';
    t += '\nrank ' + r;
    if (k.cls === 'compute' && D.shading) t += ', ' + D.shading.names[at(r, e, 7)];
    if (k.cls === 'comm') {
      const wait = finite(x0) && finite(s) ? x0 - s : NaN;
      t += '\nposted ' + num(s);
      if (finite(x0)) t += ', transfer ' + num(x0) + ' to ' + num(en);
      else t += ', never matched';
      if (wait > 0) t += '\nwaited ' + num(wait);
    } else {
      t += '\nstart ' + num(s) + '\nend ' + num(en) + '\nduration ' + num(en - s);
    }
    if (at(r, e, 8) & CRITICAL) t += '\non the critical path';
    return t;
  }

  function drawAxis(out) {
    const step = niceStep((90 / plotW()) * (v1 - v0));
    const first = Math.ceil(v0 / step) * step;
    out.push('<g class="grid">');
    for (let t = first; t <= v1 + 1e-9; t += step)
      out.push('<line x1="' + x(t) + '" x2="' + x(t) + '" y1="' + (L.top - 6) +
        '" y2="' + (H - L.bottom + 4) + '"/>');
    out.push('</g><g class="axis">');
    for (let t = first; t <= v1 + 1e-9; t += step) {
      const lab = num(Math.abs(t) < step * 1e-6 ? 0 : t);
      out.push('<text x="' + x(t) + '" y="' + (L.top - 10) + '" text-anchor="middle">' + lab + '</text>');
      out.push('<text x="' + x(t) + '" y="' + (H - L.bottom + 17) + '" text-anchor="middle">' + lab + '</text>');
    }
    out.push('</g>');
  }

  function drawLanes(out, labels, over) {
    const cycle = new Set(D.cycle || []);
    for (let r = 0; r < P; ++r) {
      const y = laneY(r);
      out.push('<rect class="lane-bg" x="' + L.left + '" y="' + y + '" width="' + plotW() +
        '" height="' + (L.boxH + L.stripH + 2) + '"/>');
      labels.push('<text class="rank-label' + (cycle.has(r) ? ' cycle' : '') + '" x="8" y="' +
        (y + 15) + '">rank ' + r + '</text>');
      if (lanes[r].stages)
        labels.push('<text class="stages" x="8" y="' + (y + 27) + '">' + esc(lanes[r].stages) + '</text>');
      const n = count(r);
      // The comm strip first, so boxes stay on top.
      for (let e = 0; e < n; ++e) {
        const k = kindOf(r, e);
        if (k.cls !== 'comm') continue;
        const s = at(r, e, 4), xs = at(r, e, 5), en = at(r, e, 6);
        if (!finite(en) || en < v0 || s > v1) continue;
        const sy = y + L.boxH + 2;
        const key = r + ':' + e;
        const h = hit(actText(r, e));
        const mi = msgOf.has(key) ? ' data-msg="' + msgOf.get(key) + '"' : '';
        if (xs > s) {
          const a = clampX(x(s)), b = clampX(x(xs));
          out.push('<rect class="comm wait" x="' + a + '" y="' + sy + '" width="' + Math.max(b - a, 0.5) +
            '" height="' + L.stripH + '" fill="' + D.colors.wait + '"' + h + mi + '/>');
        }
        if (en > xs) {
          const a = clampX(x(xs)), b = clampX(x(en));
          out.push('<rect class="comm xfer" x="' + a + '" y="' + sy + '" width="' + Math.max(b - a, 0.8) +
            '" height="' + L.stripH + '" fill="' + D.colors.transfer + '"' + h + mi + '/>');
        }
        if (showCrit && (at(r, e, 8) & CRITICAL))
          over.push('<rect class="crit" x="' + clampX(x(xs)) + '" y="' + sy + '" width="' +
            Math.max(clampX(x(en)) - clampX(x(xs)), 1) + '" height="' + L.stripH + '"/>');
      }
      // Comms held back on their stream (the stream rule): from when the
      // rank issued them to when they started, in their own colour, over
      // the lower half of the comm strip.
      for (const [e, held, by] of lanes[r].held || []) {
        const s = at(r, e, 4);
        if (!finite(s) || s < v0 || s - held > v1) continue;
        const a = clampX(x(s - held)), b = clampX(x(s));
        out.push('<rect class="comm held" x="' + a + '" y="' + (y + L.boxH + 2 + L.stripH / 2) + '" width="' +
          Math.max(b - a, 0.5) + '" height="' + L.stripH / 2 + '" fill="' + D.colors.held + '"' +
          hit(nameOf(r, e) + '\nrank ' + r + '\nheld back on its stream by ' + by + ' for ' + num(held)) + '/>');
      }
      for (let e = 0; e < n; ++e) {
        const k = kindOf(r, e);
        if (k.cls === 'comm') continue;
        const s = at(r, e, 4), en = at(r, e, 6);
        if (!finite(en) || en < v0 || s > v1) continue;
        const fl = at(r, e, 8), ch = at(r, e, 7);
        let by = y, bh = L.boxH;
        if (fl & OVERLAP_FIRST) bh = L.boxH / 2;
        if (fl & OVERLAP_SECOND) { by = y + L.boxH / 2; bh = L.boxH / 2; }
        const a = clampX(x(s)), b = clampX(x(en));
        const w = Math.max(b - a, k.cls === 'control' ? 2 : 0.6);
        out.push('<rect class="act" data-k="' + k.n + '" x="' + a + '" y="' + by + '" width="' + w +
          '" height="' + bh + '" fill="' + k.c[ch] + '"' + hit(actText(r, e)) + '/>');
        if (k.cls === 'compute') {
          const label = String(at(r, e, 1));
          const fs = bh < L.boxH ? 9 : 10;
          if (w >= label.length * (fs * 0.62) + 4)
            out.push('<text class="mb" x="' + (a + w / 2) + '" y="' + (by + bh / 2 + fs * 0.36) +
              '" font-size="' + fs + '" fill="' + k.ink[ch] + '">' + label + '</text>');
        }
        if (fl & OVERLAP_FIRST)
          over.push('<rect class="pair" x="' + a + '" y="' + y + '" width="' + w + '" height="' + L.boxH + '"/>');
        if (showCrit && (fl & CRITICAL))
          over.push('<rect class="crit" x="' + a + '" y="' + by + '" width="' + w + '" height="' + bh + '"/>');
      }
    }
  }

  function drawBlocked(out) {
    if (!D.blocked) return;
    const right = W - L.right;
    const byRank = new Map();
    const labels = [];
    for (const b of D.blocked) {
      byRank.set(b.rank, b);
      const y = laneY(b.rank);
      const a = Math.max(L.left, Math.min(right, x(b.t)));
      out.push('<rect class="blocked' + (b.cycle ? ' cycle' : '') + '" x="' + a + '" y="' + y +
        '" width="' + Math.max(right - a, 0) + '" height="' + (L.boxH + L.stripH + 2) + '"' +
        hit('rank ' + b.rank + ' blocks at ' + b.name + ' from ' + num(b.t) + '\n' + b.why) + '/>');
      // The label sits at the right end of the mark, away from the arrows
      // that start at its left end.
      const text = 'blocked at ' + b.name + (b.waitsFor >= 0 ? '  \u2192 waits for rank ' + b.waitsFor : '  \u2192 never matched');
      const room = right - a, need = text.length * 6.6 + 60;
      if (room > 60)
        labels.push('<text class="blocked-label' + (b.cycle ? ' cycle' : '') + '" x="' +
          (room > need ? right - 8 : a + 6) + '" y="' + (y + 15) + '" text-anchor="' +
          (room > need ? 'end' : 'start') + '">' + esc(text) + '</text>');
    }
    // An arrow from where each rank blocks to where the rank it waits for
    // blocks: solid around the cycle, thin and dashed along the chains of
    // waits that end in it. Each arrow bulges to its left, so a two-rank
    // cycle reads as a loop.
    const cyc = D.cycle || [];
    const next = new Map();
    for (let i = 0; i < cyc.length; ++i) next.set(cyc[i], cyc[(i + 1) % cyc.length]);
    for (const b of D.blocked) {
      const onCycle = next.has(b.rank);
      const q = onCycle ? next.get(b.rank) : b.waitsFor;
      const bq = byRank.get(q);
      if (q < 0 || !bq) continue;
      const r = b.rank;
      const x1 = Math.max(L.left, Math.min(right, x(b.t))), y1 = laneY(r) + L.boxH / 2;
      const x2 = Math.max(L.left, Math.min(right, x(bq.t))), y2 = laneY(q) + L.boxH / 2;
      let d;
      if (r === q) {
        d = 'M' + x1 + ',' + (y1 - 7) + ' c-30,-16 -30,24 -2,14';
      } else {
        const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy) || 1;
        const k = Math.min(0.14 * len + 10, 36);
        const cx = (x1 + x2) / 2 + (dy / len) * k, cy = (y1 + y2) / 2 - (dx / len) * k;
        d = 'M' + x1 + ',' + y1 + ' Q' + cx + ',' + cy + ' ' + x2 + ',' + y2;
      }
      out.push('<path class="' + (onCycle ? 'waitfor' : 'waitchain') + '" d="' + d + '" marker-end="url(#arrow-bad)"' +
        hit('rank ' + r + ' waits for rank ' + q + '\n' + b.why) + '/>');
    }
    out.push(labels.join(''));
  }

  function drawMsgs(out) {
    const n = msgs.length / 4;
    for (let i = 0; i < n; ++i) {
      if (!showMsgs && i !== hotMsg) continue;
      const [sr, t0, dr, t1, fwd] = msgTimes(i);
      if (!finite(t0) || !finite(t1)) continue;
      if (Math.max(t0, t1) < v0 || Math.min(t0, t1) > v1) continue;
      const down = dr > sr;
      const y0 = down ? laneY(sr) + L.boxH + L.stripH + 2 : laneY(sr);
      const y1 = down ? laneY(dr) : laneY(dr) + L.boxH + L.stripH + 2;
      out.push('<path class="msg' + (i === hotMsg ? ' hot' : '') + '" d="M' + clampX(x(t0)) + ',' + y0 +
        ' L' + clampX(x(t1)) + ',' + y1 + '" stroke="' + (fwd ? D.colors.msgF : D.colors.msgB) +
        '" marker-end="url(#arrow-' + (fwd ? 'f' : 'b') + ')"/>');
    }
  }

  function memAt(r, t) {
    const m = lanes[r].mem;
    let v = 0;
    for (let i = 0; i < m.length && m[i] <= t; i += 2) v = m[i + 1];
    return v;
  }

  function drawMemory(out, labels) {
    labels.push('<text class="section" x="8" y="' + (memTop + 14) + '">activation memory per rank' +
      (D.memoryLimit !== null ? ' (limit ' + num(D.memoryLimit) + ')' : '') + '</text>');
    let top = 1;
    for (const ln of lanes) top = Math.max(top, ln.peak);
    if (D.memoryLimit !== null) top = Math.max(top, D.memoryLimit);
    const right = W - L.right;
    for (let r = 0; r < P; ++r) {
      const y = memY(r), h = L.memH - 8, base = y + h;
      const sy = (v) => base - (v / top) * h;
      out.push('<g class="mem-row" data-rank="' + r + '">');
      out.push('<rect class="lane-bg" x="' + L.left + '" y="' + y + '" width="' + plotW() + '" height="' + h + '"/>');
      labels.push('<text class="mem-label" x="8" y="' + (y + 12) + '">rank ' + r + '</text>');
      labels.push('<text class="mem-peak" x="8" y="' + (y + 24) + '">peak ' + num(lanes[r].peak) + '</text>');
      const m = lanes[r].mem;
      let d = 'M' + L.left + ',' + base, v = 0, last = L.left;
      for (let i = 0; i < m.length; i += 2) {
        const px = Math.max(L.left, Math.min(right, x(m[i])));
        d += ' L' + px + ',' + sy(v) + ' L' + px + ',' + sy(m[i + 1]);
        v = m[i + 1];
        last = px;
      }
      const endT = finite(lanes[r].end) ? lanes[r].end : fullEnd;
      const ex = Math.max(last, Math.max(L.left, Math.min(right, x(endT))));
      d += ' L' + ex + ',' + sy(v);
      out.push('<path class="mem-area" d="' + d + ' L' + ex + ',' + base + ' Z"/>');
      out.push('<path class="mem-line" d="' + d + '"/>');
      if (D.memoryLimit !== null)
        out.push('<line class="mem-limit" x1="' + L.left + '" x2="' + right + '" y1="' + sy(D.memoryLimit) +
          '" y2="' + sy(D.memoryLimit) + '"/>');
      out.push('<rect class="mem-hit" data-m="' + r + '" x="' + L.left + '" y="' + y + '" width="' + plotW() +
        '" height="' + h + '"/>');
      out.push('</g>');
    }
  }

  function render() {
    W = Math.max(view.clientWidth, 320);
    hits = [];
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    const out = [], over = [];
    out.push('<defs>' +
      '<clipPath id="plot"><rect x="' + L.left + '" y="0" width="' + plotW() + '" height="' + H + '"/></clipPath>' +
      '<pattern id="hatch" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
      '<rect width="7" height="7" fill="#fff4f4"/><line x1="0" y1="0" x2="0" y2="7" stroke="#f0a8a8" stroke-width="3"/></pattern>' +
      '<marker id="arrow-f" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
      '<path d="M0,0 L10,5 L0,10 z" fill="' + D.colors.msgF + '"/></marker>' +
      '<marker id="arrow-b" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">' +
      '<path d="M0,0 L10,5 L0,10 z" fill="' + D.colors.msgB + '"/></marker>' +
      '<marker id="arrow-bad" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse">' +
      '<path d="M0,0 L10,5 L0,10 z" fill="#c62828"/></marker></defs>');
    drawAxis(out);
    // Labels sit left of the plot; everything on the time axis is clipped
    // to it.
    const plot = [], labels = [];
    drawLanes(plot, labels, over);
    drawBlocked(plot);
    drawMemory(plot, labels);
    drawMsgs(over);
    out.push(labels.join(''));
    out.push('<g clip-path="url(#plot)">' + plot.join('') + over.join('') + '</g>');
    svg.innerHTML = out.join('');
    document.getElementById('range').textContent =
      'showing ' + num(v0) + ' to ' + num(v1) + ' of ' + num(fullEnd) + ' time units';
  }

  // --- zoom and pan -------------------------------------------------------
  const minSpan = Math.max(fullEnd / 20000, 1e-6);
  function setView(a, b) {
    let span = Math.min(Math.max(b - a, minSpan), fullEnd - fullStart);
    a = Math.max(fullStart, Math.min(a, fullEnd - span));
    v0 = a;
    v1 = a + span;
    schedule();
  }
  function zoom(f, t) {
    if (t === undefined) t = (v0 + v1) / 2;
    const span = (v1 - v0) / f;
    const k = (t - v0) / (v1 - v0);
    setView(t - k * span, t - k * span + span);
  }
  function pan(dt) { setView(v0 + dt, v1 + dt); }
  function fit() { setView(fullStart, fullEnd); }
  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }

  view.addEventListener('wheel', (e) => {
    e.preventDefault();
    const rect = svg.getBoundingClientRect();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const d = Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
      pan((d / plotW()) * (v1 - v0));
    } else {
      zoom(Math.exp(-e.deltaY * 0.0015), tAt(e.clientX - rect.left));
    }
  }, { passive: false });
  let drag = null;
  view.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, a: v0, b: v1 };
    view.classList.add('dragging');
    if (view.setPointerCapture && e.pointerId !== undefined) {
      try { view.setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
    }
  });
  view.addEventListener('pointermove', (e) => {
    if (drag) {
      const dt = ((drag.x - e.clientX) / plotW()) * (drag.b - drag.a);
      setView(drag.a + dt, drag.b + dt);
      tip.style.display = 'none';
      return;
    }
    showTip(e);
  });
  const endDrag = () => { drag = null; view.classList.remove('dragging'); };
  view.addEventListener('pointerup', endDrag);
  view.addEventListener('pointercancel', endDrag);
  view.addEventListener('pointerleave', () => { tip.style.display = 'none'; setHot(-1); });
  view.addEventListener('dblclick', (e) => {
    const rect = svg.getBoundingClientRect();
    zoom(e.shiftKey ? 0.5 : 2, tAt(e.clientX - rect.left));
  });
  document.addEventListener('keydown', (e) => {
    if (e.target && /INPUT|TEXTAREA/.test(e.target.tagName)) return;
    if (e.key === '+' || e.key === '=') zoom(1.5);
    else if (e.key === '-' || e.key === '_') zoom(1 / 1.5);
    else if (e.key === '0') fit();
    else if (e.key === 'ArrowLeft') pan(-(v1 - v0) * 0.15);
    else if (e.key === 'ArrowRight') pan((v1 - v0) * 0.15);
    else return;
    e.preventDefault();
  });
  document.getElementById('zoom-in').addEventListener('click', () => zoom(1.5));
  document.getElementById('zoom-out').addEventListener('click', () => zoom(1 / 1.5));
  document.getElementById('zoom-fit').addEventListener('click', fit);
  const msgBox = document.getElementById('show-msgs');
  msgBox.addEventListener('change', () => { showMsgs = msgBox.checked; render(); });
  const critBox = document.getElementById('show-crit');
  critBox.addEventListener('change', () => { showCrit = critBox.checked; render(); });
  window.addEventListener('resize', schedule);

  // --- tooltips -----------------------------------------------------------
  function setHot(i) {
    if (i === hotMsg) return;
    hotMsg = i;
    render();
  }
  function showTip(e) {
    const t = e.target;
    let text = null;
    if (t && t.dataset && t.dataset.h !== undefined) {
      text = hits[+t.dataset.h];
      setHot(t.dataset.msg !== undefined ? +t.dataset.msg : -1);
    } else if (t && t.dataset && t.dataset.m !== undefined) {
      const rect = svg.getBoundingClientRect();
      const r = +t.dataset.m, tm = tAt(e.clientX - rect.left);
      text = 'rank ' + r + ' at ' + num(tm) + '\nholds ' + num(memAt(r, tm)) + ' activations (peak ' +
        num(lanes[r].peak) + ')';
      setHot(-1);
    } else {
      setHot(-1);
    }
    if (!text) { tip.style.display = 'none'; return; }
    tip.textContent = text;
    tip.style.display = 'block';
    const w = tip.offsetWidth;
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - w - 8) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
  }

  // Links can open a view: #messages, #critical, #view=10,40 (time units),
  // joined with '&'.
  for (const part of location.hash.slice(1).split('&')) {
    if (part === 'messages') showMsgs = msgBox.checked = true;
    if (part === 'critical') showCrit = critBox.checked = true;
    const m = /^view=([-\d.e]+),([-\d.e]+)$/.exec(part);
    if (m && +m[2] > +m[1]) { v0 = Math.max(fullStart, +m[1]); v1 = Math.min(fullEnd, +m[2]); }
  }

  window.ppsTimeline = {
    view: () => [v0, v1], full: () => [fullStart, fullEnd], zoom, pan, fit, render,
    tooltips: () => hits.slice(),
    setMessages: (on) => { showMsgs = on; msgBox.checked = on; render(); },
    setCritical: (on) => { showCrit = on; critBox.checked = on; render(); },
  };
  render();

  // --- the self-check (#selfcheck) ----------------------------------------
  if (!/selfcheck/.test(location.hash)) return;
  const lines = [];
  let ok = true;
  const check = (cond, what) => { lines.push((cond ? 'ok    ' : 'FAIL  ') + what); if (!cond) ok = false; };
  const q = (s) => svg.querySelectorAll(s).length;
  const near = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));
  try {
    let boxes = 0, comms = 0, finiteMsgs = 0;
    const present = new Set();
    for (let r = 0; r < P; ++r)
      for (let e = 0; e < count(r); ++e) {
        if (!finite(at(r, e, 6))) continue;
        const k = kindOf(r, e);
        if (k.cls === 'comm') { ++comms; continue; }
        ++boxes;
        present.add(k.n);
      }
    for (let i = 0; i < msgs.length / 4; ++i) {
      const m = msgTimes(i);
      if (finite(m[1]) && finite(m[3])) ++finiteMsgs;
    }
    render();
    check(q('.rank-label') === P, 'one lane per rank (' + P + ')');
    check(q('rect.act') === boxes, 'every compute drawn when the whole run is in view (' + boxes + ')');
    check(q('rect.comm') >= (comms ? 1 : 0), 'comm strips drawn (' + q('rect.comm') + ')');
    check(q('.mem-row') === P, 'a memory curve per rank');
    check(q('.axis text') >= 4, 'a time axis with labels');
    const long = hits.filter((s) => /\d\.\d{4,}/.test(s));
    check(long.length === 0, 'tooltip numbers rounded' + (long.length ? ': ' + long[0] : ''));
    const legendKinds = [...document.querySelectorAll('.legend [data-kind]')].map((n) => n.dataset.kind);
    check(legendKinds.length === present.size && legendKinds.every((k) => present.has(k)),
      'the legend lists exactly the kinds that occur (' + legendKinds.join(' ') + ')');
    check(document.querySelectorAll('table.sum').length >= 2, 'summary tables');
    // Zoom with the wheel at the middle of the plot, then back.
    const rect = svg.getBoundingClientRect();
    const midX = rect.left + L.left + plotW() / 2;
    view.dispatchEvent(new WheelEvent('wheel', { deltaY: -600, clientX: midX, clientY: rect.top + L.top + 5,
      bubbles: true, cancelable: true }));
    render();
    const z = window.ppsTimeline.view();
    check(z[1] - z[0] < (fullEnd - fullStart) * 0.6, 'the wheel zooms in (' + num(z[0]) + '..' + num(z[1]) + ')');
    check(q('rect.act') <= boxes, 'a zoomed view draws no more than what is in it');
    // Drag to pan.
    const before = window.ppsTimeline.view()[0];
    view.dispatchEvent(new PointerEvent('pointerdown', { clientX: midX, clientY: rect.top + 40, button: 0, bubbles: true }));
    view.dispatchEvent(new PointerEvent('pointermove', { clientX: midX - 120, clientY: rect.top + 40, bubbles: true }));
    view.dispatchEvent(new PointerEvent('pointerup', { clientX: midX - 120, clientY: rect.top + 40, bubbles: true }));
    render();
    check(window.ppsTimeline.view()[0] > before, 'dragging pans the view');
    document.getElementById('zoom-fit').click();
    render();
    const f = window.ppsTimeline.view();
    check(near(f[0], fullStart) && near(f[1], fullEnd), 'fit shows the whole run again');
    document.getElementById('zoom-in').click();
    render();
    check(window.ppsTimeline.view()[1] - window.ppsTimeline.view()[0] < fullEnd - fullStart, 'the + button zooms in');
    window.ppsTimeline.fit();
    render();
    window.ppsTimeline.setMessages(true);
    check(q('path.msg') === finiteMsgs, 'an arrow per message (' + finiteMsgs + ')');
    window.ppsTimeline.setMessages(false);
    check(q('path.msg') === 0, 'arrows hidden again');
    window.ppsTimeline.setCritical(true);
    check(q('.crit') === D.crit.length / 2, 'the critical path outlined (' + D.crit.length / 2 + ' actions)');
    window.ppsTimeline.setCritical(false);
    if (D.deadlocked) {
      check(D.blocked.length > 0 && q('.blocked') === D.blocked.length, 'each blocked rank marked (' + D.blocked.length + ')');
      check(q('.waitfor') === (D.cycle ? D.cycle.length : 0), 'the cycle drawn (' + (D.cycle || []).join(' -> ') + ')');
      check(document.querySelectorAll('.banner li').length >= D.blocked.length, 'the deadlock explained in words');
    } else {
      check(q('.blocked') === 0, 'no blocked marks for a run that finishes');
    }
  } catch (err) {
    check(false, 'exception: ' + err);
  }
  const pre = document.createElement('pre');
  pre.id = 'pps-selfcheck';
  pre.dataset.status = ok ? 'ok' : 'fail';
  pre.textContent = lines.join('\n');
  document.body.appendChild(pre);
})();
