#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// Opens a page in Debian's chromium, headless, through the DevTools
// protocol, and says what happened, for tests/shell/report_html*.sh:
//
//   node tests/html/browse.js <page.html> [--screenshot <out.png>] [--json <out.json>]
//                             [<expression>...] [--page <page.html> ...]...
//
// Each --page starts another page, opened in a tab of the same browser
// (one start of chromium for all).
// Each expression is evaluated in the page once it is ready (body
// data-ready) and its screenshot taken, in order (so one may click and
// the next look), its value returned as JSON.  Printed, as one JSON object: "results" (the values),
// "console" (console messages of level error or warning), "exceptions"
// (uncaught), "log" (the browser's own errors: CSP, failed loads),
// "requests" (every URL the page asked for, the page itself included):
// to the --json file of the page, or to standard output.
// Exits 0 when the page was read, whatever it found; 1 when it could not.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const WebSocket = require("ws");

const TIMEOUT_MS = 90000;
const WIDTH = 1280;

function parseArgs(argv) {
	const pages = [];
	let a = null;
	for (let i = 0; i < argv.length; i++) {
		if (!a || argv[i] === "--page") {
			a = { page: argv[i] === "--page" ? argv[++i] : argv[i], screenshot: null, json: null, exprs: [] };
			pages.push(a);
		} else if (argv[i] === "--screenshot") {
			a.screenshot = argv[++i];
		} else if (argv[i] === "--json") {
			a.json = argv[++i];
		} else {
			a.exprs.push(argv[i]);
		}
	}
	if (!pages.length || pages.some((p) => !p.page))
		throw new Error("usage: browse.js <page.html> [--screenshot <png>] [--json <file>] [<expression>...] [--page ...]");
	return pages;
}

// chromium, and the DevTools address it prints on stderr
function launch(profile) {
	const chrome = spawn(process.env.CHROMIUM || "chromium", [
		"--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
		"--user-data-dir=" + profile, "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--window-size=" + WIDTH + ",900", "about:blank",
	], { stdio: ["ignore", "ignore", "pipe"], detached: true });
	return new Promise((resolve, reject) => {
		let err = "";
		chrome.stderr.on("data", (d) => {
			err += d;
			const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
			if (m)
				resolve({ chrome, url: m[1] });
		});
		chrome.on("exit", (code) => reject(new Error("chromium exited (" + code + "): " + err)));
		chrome.on("error", reject);
	});
}

// one DevTools connection: commands by id, events to listeners
function connect(url) {
	const ws = new WebSocket(url, { perMessageDeflate: false });
	const pending = new Map(), listeners = [];
	let next = 1;
	ws.on("message", (data) => {
		const msg = JSON.parse(data);
		if (msg.id && pending.has(msg.id)) {
			const p = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.error)
				p.reject(new Error(msg.error.message));
			else
				p.resolve(msg.result);
		} else if (msg.method) {
			for (const l of listeners)
				l(msg);
		}
	});
	const send = (method, params, sessionId) => new Promise((resolve, reject) => {
		const id = next++;
		pending.set(id, { resolve, reject });
		ws.send(JSON.stringify({ id, method, params: params || {}, sessionId }));
	});
	return new Promise((resolve, reject) => {
		ws.on("open", () => resolve({ ws, send, on: (l) => listeners.push(l) }));
		ws.on("error", reject);
	});
}

function waitFor(cond, what) {
	return new Promise((resolve, reject) => {
		const start = Date.now();
		(function poll() {
			Promise.resolve(cond()).then((ok) => {
				if (ok)
					return resolve();
				if (Date.now() - start > TIMEOUT_MS)
					return reject(new Error("timed out waiting for " + what));
				setTimeout(poll, 50);
			}, reject);
		})();
	});
}

async function browse(a, cdp, out) {
	const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
	const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
	const send = (m, p) => cdp.send(m, p, sessionId);
	cdp.on((msg) => {
		if (msg.sessionId !== sessionId)
			return;
		const p = msg.params;
		if (msg.method === "Network.requestWillBeSent")
			out.requests.push(p.request.url);
		else if (msg.method === "Runtime.consoleAPICalled" && /error|warning|assert/.test(p.type))
			out.console.push(p.type + ": " + p.args.map((x) => x.value !== undefined ? x.value : x.description).join(" "));
		else if (msg.method === "Runtime.exceptionThrown")
			out.exceptions.push(p.exceptionDetails.exception ? p.exceptionDetails.exception.description :
				p.exceptionDetails.text);
		else if (msg.method === "Log.entryAdded" && /error|warning/.test(p.entry.level))
			out.log.push(p.entry.level + ": " + p.entry.text + (p.entry.url ? " " + p.entry.url : ""));
	});
	for (const domain of ["Network", "Runtime", "Log", "Page"])
		await send(domain + ".enable");
	await send("Emulation.setDeviceMetricsOverride", { width: WIDTH, height: 900, deviceScaleFactor: 1, mobile: false });
	await send("Page.navigate", { url: "file://" + path.resolve(a.page) });
	const evaluate = async (expression) => {
		const r = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
		if (r.exceptionDetails)
			throw new Error(expression + ": " + (r.exceptionDetails.exception ?
				r.exceptionDetails.exception.description : r.exceptionDetails.text));
		return r.result.value;
	};
	await waitFor(() => evaluate("document.readyState === 'complete' && " +
		"(document.body && document.body.getAttribute('data-ready') === '1' || " +
		"document.readyState === 'complete' && performance.now() > 5000)"), "the page");
	// the page as it opens, whole, before the expressions change it
	if (a.screenshot) {
		const h = await evaluate("document.documentElement.scrollHeight");
		await send("Emulation.setDeviceMetricsOverride", { width: WIDTH, height: Math.min(h, 4000), deviceScaleFactor: 1, mobile: false });
		const shot = await send("Page.captureScreenshot", { format: "png" });
		fs.writeFileSync(a.screenshot, Buffer.from(shot.data, "base64"));
		await send("Emulation.setDeviceMetricsOverride", { width: WIDTH, height: 900, deviceScaleFactor: 1, mobile: false });
	}
	for (const e of a.exprs)
		out.results.push(await evaluate(e));
	await cdp.send("Target.closeTarget", { targetId });
}

async function main() {
	const pages = parseArgs(process.argv.slice(2));
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), "memtrack-chromium-"));
	let chrome = null, cdp = null;
	const timer = setTimeout(() => {
		process.stderr.write("browse.js: timed out\n");
		if (chrome)
			process.kill(-chrome.pid, "SIGKILL");
		process.exit(1);
	}, TIMEOUT_MS + 10000);
	try {
		const l = await launch(profile);
		chrome = l.chrome;
		cdp = await connect(l.url);
		for (const a of pages) {
			const out = { results: [], console: [], exceptions: [], log: [], requests: [] };
			await browse(a, cdp, out);
			const text = JSON.stringify(out, null, 1) + "\n";
			if (a.json)
				fs.writeFileSync(a.json, text);
			else
				process.stdout.write(text);
		}
	} finally {
		clearTimeout(timer);
		if (cdp)
			cdp.ws.close();
		if (chrome && chrome.exitCode === null) {
			// its own process group: the renderers and helpers it started too
			const gone = new Promise((r) => chrome.once("exit", r));
			process.kill(-chrome.pid, "SIGTERM");
			await gone;
		}
		fs.rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
	}
}

main().catch((e) => {
	process.stderr.write("browse.js: " + (e && e.stack || e) + "\n");
	process.exit(1);
});
