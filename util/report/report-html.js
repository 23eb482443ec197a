// SPDX-License-Identifier: GPL-2.0
// memtrack report --html: draws the figures that memtrack put in the page as
// JSON (#memtrack-data): the flame graph of the call tree, the live heap over
// time, the processes, their threads, the allocation sizes and the call sites.  Strings from the artifact reach
// the page only as text (textContent, setAttribute), never as markup.
"use strict";
(function () {
	const D = JSON.parse(document.getElementById("memtrack-data").textContent);
	const KEYS = D.keys;
	const NK = KEYS.length;
	const DIFF = D.diff;
	const HEAD = D.runs[DIFF ? 1 : 0];
	const BASE = DIFF ? D.runs[0] : null;
	const ROW = 18;
	const state = { cost: 0, side: 0, zoom: 0, search: null };

	// ---- helpers --------------------------------------------------------

	function el(tag, attrs, text) {
		const e = document.createElement(tag);
		for (const k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function svg(tag, attrs, text) {
		const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
		for (const k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = String(text);
		return e;
	}

	function bytes(n) {
		const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
		let v = Math.abs(n), u = 0;
		while (v >= 1024 && u + 1 < units.length) {
			v /= 1024;
			u++;
		}
		return (n < 0 ? "-" : "") + (u ? v.toFixed(1) : String(v)) + " " + units[u];
	}

	function count(n) {
		return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	}

	function fmt(k, v) {
		return KEYS[k].unit === "bytes" ? bytes(v) : count(v);
	}

	function signed(k, v) {
		return (v > 0 ? "+" : "") + fmt(k, v);
	}

	// nanoseconds in the unit that suits the whole span
	function duration(ns, span) {
		if (span >= 1e9)
			return (ns / 1e9).toFixed(span >= 1e10 ? 1 : 2) + " s";
		if (span >= 1e6)
			return (ns / 1e6).toFixed(span >= 1e7 ? 1 : 2) + " ms";
		return (ns / 1e3).toFixed(span >= 1e4 ? 1 : 2) + " \u00b5s";
	}

	function percent(part, whole) {
		return whole ? (100 * part / whole).toFixed(2) + "%" : "-";
	}

	function exitWords(status) {
		if (status === null || status === undefined)
			return "-";
		return status & 0x7f ? "signal " + (status & 0x7f) : "exit " + ((status >> 8) & 0xff);
	}

	function where(f) {
		if (!f)
			return "";
		const mod = f[1] ? f[1].split("/").pop() : "";
		const file = f[2] ? f[2].split("/").pop() + (f[3] ? ":" + f[3] : "") : "";
		return [f[4] ? "(inlined)" : "", mod, file].filter(Boolean).join(" ");
	}

	// ---- header -----------------------------------------------------------

	function header() {
		document.getElementById("title").textContent =
			(DIFF ? "diff: " : "") + (HEAD.command || HEAD.artifact);
		const sub = document.getElementById("subtitle");
		const what = DIFF ? "base " + BASE.artifact + " \u2192 head " + HEAD.artifact : HEAD.artifact;
		sub.textContent = what + " \u00b7 " + count(HEAD.totals.events) + " events in " +
			(HEAD.totals.duration_ns / 1e9).toFixed(3) + " s \u00b7 peak at " +
			(HEAD.totals.peak_time_ns / 1e9).toFixed(6) + " s";
		for (const r of D.runs)
			if (r.truncated)
				sub.appendChild(el("div", { class: "warn" },
					r.artifact + " is truncated: only what was read before the break"));
		const cards = document.getElementById("cards");
		for (let k = 0; k < NK; k++) {
			const c = el("div", { class: "card", "data-key": KEYS[k].id });
			c.appendChild(el("div", { class: "k" }, KEYS[k].title));
			c.appendChild(el("div", { class: "v" }, fmt(k, HEAD.totals.v[k])));
			if (DIFF) {
				const d = HEAD.totals.v[k] - BASE.totals.v[k];
				c.appendChild(el("div", { class: "d " + (d > 0 ? "up" : d < 0 ? "down" : "") },
					"base " + fmt(k, BASE.totals.v[k]) + ", " + signed(k, d) +
					(BASE.totals.v[k] ? " (" + (100 * d / BASE.totals.v[k]).toFixed(1) + "%)" : "")));
			}
			cards.appendChild(c);
		}
		document.getElementById("footer").textContent = "memtrack " + D.version +
			" \u00b7 one file: nothing is fetched";
	}

	// ---- the call tree ------------------------------------------------------

	const T = D.tree;
	const nodes = [];

	function buildTree() {
		if (!T)
			return;
		for (let i = 0; i < T.nodes.length; i++) {
			const a = T.nodes[i];
			nodes.push({
				parent: a[0], name: T.names[a[1]], frame: a[2] >= 0 ? T.frames[a[2]] : null,
				v: a.slice(3, 3 + NK), b: DIFF ? a.slice(3 + NK, 3 + 2 * NK) : null,
				children: [], depth: 0,
			});
		}
		for (let i = 1; i < nodes.length; i++) {
			nodes[nodes[i].parent].children.push(i);
			nodes[i].depth = nodes[nodes[i].parent].depth + 1;
		}
		for (const n of nodes)
			n.children.sort((x, y) => nodes[x].name < nodes[y].name ? -1 : nodes[x].name > nodes[y].name ? 1 : 0);
	}

	function width(i) {
		const n = nodes[i];
		return state.side ? n.b[state.cost] : n.v[state.cost];
	}

	function delta(i) {
		return nodes[i].v[state.cost] - nodes[i].b[state.cost];
	}

	function hue(name) {
		let h = 0;
		for (let i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return h;
	}

	function colour(i, maxDelta) {
		const n = nodes[i];
		if (DIFF) {
			const d = delta(i), s = maxDelta ? Math.abs(d) / maxDelta : 0;
			const light = Math.round(96 - 46 * s);
			return d > 0 ? "hsl(0, 80%, " + light + "%)" : d < 0 ? "hsl(215, 80%, " + light + "%)" :
				"hsl(0, 0%, 94%)";
		}
		if (n.name.charAt(0) === "[" || i === 0)
			return "hsl(0, 0%, 82%)";
		const h = hue(n.name);
		return "hsl(" + (8 + h % 42) + ", " + (70 + h % 20) + "%, " + (58 + (h >> 8) % 14) + "%)";
	}

	function describe(i) {
		const n = nodes[i], k = state.cost, total = width(0);
		let s = n.name + " \u2014 " + fmt(k, width(i)) + " " + KEYS[k].title + " (" +
			percent(width(i), total) + ")";
		if (DIFF)
			s += " \u2014 base " + fmt(k, n.b[k]) + ", head " + fmt(k, n.v[k]) + ", " + signed(k, delta(i));
		const w = where(n.frame);
		return w ? s + " \u2014 " + w : s;
	}

	function searchMatch(i) {
		return state.search !== null && state.search.test(nodes[i].name);
	}

	function addFrame(box, i, left, w, cls, maxDelta) {
		const n = nodes[i];
		const grew = DIFF ? (delta(i) > 0 ? " grew" : delta(i) < 0 ? " shrank" : "") : "";
		const d = el("div", {
			class: "frame" + (cls ? " " + cls : "") + grew + (searchMatch(i) ? " match" : ""),
			"data-node": String(i), "data-value": String(width(i)), title: describe(i),
		}, n.name);
		if (DIFF)
			d.setAttribute("data-delta", String(delta(i)));
		d.style.left = left.toFixed(4) + "%";
		d.style.width = w.toFixed(4) + "%";
		d.style.top = (n.depth * ROW) + "px";
		d.style.background = colour(i, maxDelta);
		box.appendChild(d);
	}

	function maxDeltaOf() {
		let m = 0;
		if (DIFF)
			for (let i = 1; i < nodes.length; i++)
				m = Math.max(m, Math.abs(delta(i)));
		return m;
	}

	function drawFlame() {
		const box = document.getElementById("flame");
		box.textContent = "";
		document.getElementById("flame-what").textContent = "\u2014 " + KEYS[state.cost].title +
			(DIFF ? ", widths of " + (state.side ? "base" : "head") + ", red: grew, blue: shrank" : "");
		if (!nodes.length) {
			box.appendChild(el("div", { class: "none" },
				"no call stacks: record with 'memtrack track --call-graph fp' (or dwarf)"));
			box.style.height = "";
			return;
		}
		const maxDelta = maxDeltaOf();
		const pxPerPct = (box.clientWidth || 1000) / 100;
		let deepest = 0;
		// the zoomed node's ancestors, whole width
		for (let a = nodes[state.zoom].parent, path = []; ; a = nodes[a].parent) {
			if (state.zoom === 0)
				break;
			path.push(a);
			if (a === 0) {
				for (const p of path.reverse())
					addFrame(box, p, 0, 100, "dim", maxDelta);
				break;
			}
		}
		const zw = width(state.zoom);
		const todo = zw > 0 ? [[state.zoom, 0]] : [];
		while (todo.length) {
			const [i, left] = todo.pop();
			const w = 100 * width(i) / zw;
			if (w * pxPerPct < 0.5)
				continue;
			addFrame(box, i, left, w, "", maxDelta);
			deepest = Math.max(deepest, nodes[i].depth);
			let x = left;
			for (const c of nodes[i].children) {
				todo.push([c, x]);
				x += 100 * width(c) / zw;
			}
		}
		if (zw <= 0)
			box.appendChild(el("div", { class: "none" }, "nothing of this cost type here"));
		box.style.height = ((deepest + 1) * ROW + 2) + "px";
		searchInfo();
	}

	function searchInfo() {
		const info = document.getElementById("search-info");
		if (state.search === null || !nodes.length) {
			info.textContent = "";
			return;
		}
		// matched frames not under another match, so that nothing counts twice
		let sum = 0;
		const todo = [0];
		while (todo.length) {
			const i = todo.pop();
			if (searchMatch(i)) {
				sum += width(i);
				continue;
			}
			todo.push(...nodes[i].children);
		}
		info.textContent = "matched " + fmt(state.cost, sum) + " (" + percent(sum, width(0)) + ")";
	}

	function flameControls() {
		const types = document.getElementById("cost-types");
		for (let k = 0; k < NK; k++) {
			const label = el("label");
			const input = el("input", { type: "radio", name: "cost", value: KEYS[k].id });
			input.checked = k === state.cost;
			input.addEventListener("change", () => {
				state.cost = k;
				drawFlame();
			});
			label.appendChild(input);
			label.appendChild(document.createTextNode(" " + KEYS[k].title));
			types.appendChild(label);
		}
		if (DIFF) {
			const side = document.getElementById("width-side");
			side.appendChild(document.createTextNode("widths: "));
			["head", "base"].forEach((name, s) => {
				const label = el("label");
				const input = el("input", { type: "radio", name: "side", value: name });
				input.checked = s === state.side;
				input.addEventListener("change", () => {
					state.side = s;
					drawFlame();
				});
				label.appendChild(input);
				label.appendChild(document.createTextNode(" " + name + " "));
				side.appendChild(label);
			});
		}
		const box = document.getElementById("flame");
		box.addEventListener("click", (e) => {
			const f = e.target.closest(".frame");
			if (!f)
				return;
			state.zoom = Number(f.getAttribute("data-node"));
			drawFlame();
		});
		box.addEventListener("mouseover", (e) => {
			const f = e.target.closest(".frame");
			if (f)
				document.getElementById("flame-info").textContent = describe(Number(f.getAttribute("data-node")));
		});
		document.getElementById("reset-zoom").addEventListener("click", () => {
			state.zoom = 0;
			drawFlame();
		});
		document.getElementById("search").addEventListener("input", (e) => {
			const q = e.target.value;
			if (!q) {
				state.search = null;
			} else {
				try {
					state.search = new RegExp(q);
				} catch (err) {
					state.search = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
				}
			}
			drawFlame();
		});
		window.addEventListener("resize", drawFlame);
	}

	// ---- the live heap over time ----------------------------------------------

	const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

	function drawTimeline(run, title) {
		const box = document.getElementById("timeline");
		if (title)
			box.appendChild(el("div", { class: "sub" }, title));
		const series = run.timeline.filter((s) => s.t.length);
		if (!series.length) {
			box.appendChild(el("div", { class: "none" }, "no heap events"));
			return;
		}
		const W = 960, H = 260, L = 70, R = 180, TOP = 10, B = 30;
		let tmax = 0, vmax = 0;
		for (const s of series) {
			tmax = Math.max(tmax, s.t[s.t.length - 1]);
			vmax = Math.max(vmax, ...s.v);
		}
		tmax = tmax || 1;
		vmax = vmax || 1;
		const x = (t) => L + (W - L - R) * t / tmax, y = (v) => TOP + (H - TOP - B) * (1 - v / vmax);
		const g = svg("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", role: "img" });
		for (let i = 0; i <= 4; i++) {
			g.appendChild(svg("line", { x1: L, x2: W - R, y1: y(vmax * i / 4), y2: y(vmax * i / 4), stroke: "#e3e7eb" }));
			g.appendChild(svg("text", { x: L - 6, y: y(vmax * i / 4) + 4, "text-anchor": "end" }, bytes(vmax * i / 4)));
			g.appendChild(svg("text", { x: x(tmax * i / 4), y: H - 10, "text-anchor": "middle" },
				duration(tmax * i / 4, tmax)));
		}
		const legend = svg("g", { class: "legend" });
		series.forEach((s, n) => {
			const total = s.pid === null;
			const colour = total ? "#000" : PALETTE[n % PALETTE.length];
			let pts = "";
			for (let i = 0; i < s.t.length; i++) {
				// a step: the value holds until the next point
				if (i)
					pts += x(s.t[i]).toFixed(1) + "," + y(s.v[i - 1]).toFixed(1) + " ";
				pts += x(s.t[i]).toFixed(1) + "," + y(s.v[i]).toFixed(1) + " ";
			}
			const line = svg("polyline", { points: pts, fill: "none", stroke: colour, "stroke-width": total ? 2 : 1.2 });
			const name = total ? "all processes" : s.pid + " " + (s.comm || "");
			line.appendChild(svg("title", {}, name + ": peak " + bytes(s.peak)));
			g.appendChild(line);
			legend.appendChild(svg("rect", { x: W - R + 12, y: TOP + n * 16, width: 10, height: 10, fill: colour }));
			legend.appendChild(svg("text", { x: W - R + 28, y: TOP + n * 16 + 9 }, name));
		});
		g.appendChild(legend);
		box.appendChild(g);
	}

	// ---- sortable tables ---------------------------------------------------------

	// cols: { title, get(row), show(value, row) -> string or node, text }
	function table(box, cols, rows, sortBy) {
		const t = el("table");
		const head = el("tr");
		let by = sortBy, asc = false;
		const tbody = el("tbody");
		function fill() {
			const c = cols[by], dir = asc ? 1 : -1;
			const sorted = rows.slice().sort((a, b) => {
				const x = c.get(a), y = c.get(b);
				return (x < y ? -1 : x > y ? 1 : 0) * dir;
			});
			tbody.textContent = "";
			for (const r of sorted) {
				const tr = el("tr");
				for (const col of cols) {
					const v = col.show ? col.show(col.get(r), r) : col.get(r);
					const td = el("td", { class: col.text ? "text" + (col.cls ? " " + col.cls : "") : "" });
					if (v instanceof Node)
						td.appendChild(v);
					else
						td.textContent = v === null || v === undefined ? "-" : String(v);
					tr.appendChild(td);
				}
				tbody.appendChild(tr);
			}
			head.querySelectorAll("th").forEach((th, i) => {
				th.className = (cols[i].text ? "text " : "") + (i === by ? "sorted" + (asc ? " asc" : "") : "");
			});
		}
		cols.forEach((c, i) => {
			const th = el("th", {}, c.title);
			th.addEventListener("click", () => {
				asc = i === by ? !asc : !!c.text;
				by = i;
				fill();
			});
			head.appendChild(th);
		});
		const thead = el("thead");
		thead.appendChild(head);
		t.appendChild(thead);
		t.appendChild(tbody);
		fill();
		box.appendChild(t);
	}

	function processes(run, title) {
		const box = document.getElementById("processes");
		if (title)
			box.appendChild(el("div", { class: "sub" }, title));
		const cols = [
			{ title: "pid", get: (p) => p.pid },
			{ title: "ppid", get: (p) => p.ppid },
			{ title: "comm", get: (p) => p.comm || "", text: true },
			{ title: "traced by", get: (p) => (p.backend || "") +
				(p.backend === "bpf" && p.bpf_why ? " (" + p.bpf_why + ")" : ""), text: true },
			{ title: "exit", get: (p) => exitWords(p.exit_code), text: true },
		];
		for (let k = 0; k < NK; k++)
			cols.push({ title: KEYS[k].title, get: (p) => p.v[k], show: (v) => fmt(k, v) });
		cols.push({ title: "executable", get: (p) => p.exe || "", text: true });
		table(box, cols, run.processes, 5);
	}

	// [pid, tid, allocations, bytes allocated, frees, bytes freed, peak, leaked blocks, leaked bytes]
	function threads(run, title) {
		const box = document.getElementById("threads");
		if (title)
			box.appendChild(el("div", { class: "sub" }, title));
		if (!run.threads.length) {
			box.appendChild(el("div", { class: "none" }, "no allocations"));
			return;
		}
		const cols = [
			{ title: "pid", get: (t) => t[0] },
			{ title: "tid", get: (t) => t[1] },
			{ title: "allocations", get: (t) => t[2], show: count },
			{ title: "bytes allocated", get: (t) => t[3], show: bytes },
			{ title: "frees", get: (t) => t[4], show: count },
			{ title: "bytes freed", get: (t) => t[5], show: bytes },
			{ title: "peak of its blocks", get: (t) => t[6], show: bytes },
			{ title: "leaked blocks", get: (t) => t[7], show: count },
			{ title: "live at exit", get: (t) => t[8], show: bytes },
		];
		table(box, cols, run.threads, 3);
	}

	// a bar per power of two of the sizes allocated: [lowest size, count]
	function sizes(run, title) {
		const box = document.getElementById("sizes");
		if (title)
			box.appendChild(el("div", { class: "sub" }, title));
		if (!run.sizes.length) {
			box.appendChild(el("div", { class: "none" }, "no allocations"));
			return;
		}
		const W = 960, H = 220, L = 70, TOP = 10, B = 40;
		const most = Math.max(...run.sizes.map((b) => b[1]));
		const step = (W - L) / run.sizes.length;
		const y = (v) => TOP + (H - TOP - B) * (1 - v / most);
		const g = svg("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", role: "img" });
		for (let i = 0; i <= 4; i++) {
			g.appendChild(svg("line", { x1: L, x2: W, y1: y(most * i / 4), y2: y(most * i / 4), stroke: "#e3e7eb" }));
			g.appendChild(svg("text", { x: L - 6, y: y(most * i / 4) + 4, "text-anchor": "end" }, count(most * i / 4)));
		}
		run.sizes.forEach((b, i) => {
			const x = L + i * step, label = b[0] ? bytes(b[0]) : "0 B";
			const bar = svg("rect", { class: "bar", x: x + 2, y: y(b[1]), width: Math.max(step - 4, 1),
				height: H - B - y(b[1]), fill: "#0b63c5", "data-min": b[0], "data-count": b[1] });
			bar.appendChild(svg("title", {}, (b[0] ? label + " .. " + bytes(2 * b[0] - 1) : "0 B") +
				": " + count(b[1]) + " allocations"));
			g.appendChild(bar);
			g.appendChild(svg("text", { x: x + step / 2, y: H - B + 14, "text-anchor": "middle" }, label));
		});
		box.appendChild(g);
	}

	function framesCell(frames) {
		const d = el("div");
		frames.forEach((f, i) => {
			const line = el("div", {}, (i ? "\u2190 " : "") + f[0] + " ");
			const w = where(f);
			if (w)
				line.appendChild(el("span", { class: "where" }, w));
			d.appendChild(line);
		});
		return d;
	}

	function siteKey(s) {
		return s.frames.map((f) => f[0]).join("\n");
	}

	function sites() {
		const box = document.getElementById("sites");
		document.getElementById("sites-what").textContent = "\u2014 " + HEAD.depth + " innermost frames" +
			(DIFF ? ", base and head matched by frame names" : "");
		if (!HEAD.has_stacks || (DIFF && !BASE.has_stacks)) {
			box.appendChild(el("div", { class: "none" }, "no call stacks"));
			return;
		}
		if (!DIFF) {
			const cols = [];
			for (let k = 0; k < NK; k++)
				cols.push({ title: KEYS[k].title, get: (s) => s.v[k], show: (v) => fmt(k, v) });
			cols.splice(4, 0, { title: "leaked blocks", get: (s) => s.leaked_count, show: count });
			cols.push({ title: "frames (innermost first)", get: siteKey, show: (v, s) => framesCell(s.frames),
				text: true, cls: "frames" });
			table(box, cols, HEAD.sites, 0);
			return;
		}
		const rows = new Map();
		for (const [side, run] of [["b", BASE], ["h", HEAD]])
			for (const s of run.sites) {
				const key = siteKey(s);
				const r = rows.get(key) || { frames: s.frames, b: new Array(NK).fill(0), h: new Array(NK).fill(0) };
				for (let k = 0; k < NK; k++)
					r[side][k] += s.v[k];
				if (side === "h")
					r.frames = s.frames;
				rows.set(key, r);
			}
		const cols = [];
		for (let k = 0; k < NK; k++) {
			cols.push({ title: KEYS[k].title, get: (r) => r.h[k], show: (v) => fmt(k, v) });
			cols.push({ title: "\u0394", get: (r) => r.h[k] - r.b[k], show: (v) => signed(k, v) });
		}
		cols.push({ title: "frames (innermost first)", get: (r) => r.frames.map((f) => f[0]).join("\n"),
			show: (v, r) => framesCell(r.frames), text: true, cls: "frames" });
		table(box, cols, Array.from(rows.values()), 1);
	}

	// ---- the page -------------------------------------------------------------------

	header();
	buildTree();
	flameControls();
	drawFlame();
	if (DIFF) {
		drawTimeline(BASE, "base: " + BASE.artifact);
		drawTimeline(HEAD, "head: " + HEAD.artifact);
		processes(BASE, "base: " + BASE.artifact);
		processes(HEAD, "head: " + HEAD.artifact);
		threads(BASE, "base: " + BASE.artifact);
		threads(HEAD, "head: " + HEAD.artifact);
		sizes(BASE, "base: " + BASE.artifact);
		sizes(HEAD, "head: " + HEAD.artifact);
	} else {
		drawTimeline(HEAD);
		processes(HEAD);
		threads(HEAD);
		sizes(HEAD);
	}
	sites();
	document.body.setAttribute("data-ready", "1");
})();
