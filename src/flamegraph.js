// SPDX-License-Identifier: MIT
// The script of stackcount --svg (src/svg.c lays the boxes out): zoom on
// click, reset, search.  It is carried inside each SVG, so it needs nothing
// else; it runs once the document above it is parsed.
//
// For the tests, a URL fragment drives it and it writes what it drew into
// <desc id="report">: #report, optionally with &search=RE and &zoom=NAME.
"use strict";
(function () {
	var errors = [];
	window.addEventListener("error", function (e) {
		errors.push(String(e.message));
	});
	var svg = document.documentElement;
	var pad = +svg.getAttribute("data-pad");
	var total = +svg.getAttribute("data-total");
	var avail = +svg.getAttribute("width") - 2 * pad;
	var charW = 7, hitFill = "rgb(230,0,230)";
	var details = document.getElementById("details");
	var matched = document.getElementById("matched");
	var reset = document.getElementById("reset");
	var search = document.getElementById("search");
	var frames = [], zoomed = null, last = { hits: [], covered: 0 };

	function collect() {
		var gs = document.querySelectorAll("g.f");
		for (var i = 0; i < gs.length; i++) {
			var g = gs[i], rect = g.querySelector("rect");
			var title = g.querySelector("title").textContent;
			// the title is the name, then " (N events, P%)"
			var m = /^([\s\S]*) \(\d+ events?, [\d.]+%\)$/.exec(title);
			frames.push({
				g: g, rect: rect, text: g.querySelector("text"),
				title: title, name: m ? m[1] : title,
				start: +g.getAttribute("data-s"),
				count: +g.getAttribute("data-c"),
				depth: +g.getAttribute("data-d"),
				fill: rect.getAttribute("fill")
			});
		}
	}

	// as src/svg.c labels a box: the name, cut with "..", or nothing
	function fit(name, w) {
		var n = w > 6 ? Math.floor((w - 6) / charW) : 0, c = Array.from(name);
		if (c.length <= n)
			return name;
		return n < 3 ? "" : c.slice(0, n - 2).join("") + "..";
	}

	// whole pixels, as src/svg.c places them
	function px(at, from, count) {
		return pad + Math.round((at - from) * avail / count);
	}

	// Boxes inside the zoomed one fill the width; those below it (its
	// callers) span it, faded; the rest are hidden.
	function draw() {
		var zs = zoomed ? zoomed.start : 0, zc = zoomed ? zoomed.count : total;
		var zd = zoomed ? zoomed.depth : 0;
		frames.forEach(function (f) {
			var end = f.start + f.count, x, w;
			var below = f.depth < zd && f.start <= zs && end >= zs + zc;
			var shown = below || (f.depth >= zd && f.start >= zs && end <= zs + zc);
			f.g.classList.toggle("hidden", !shown);
			f.g.classList.toggle("above", below);
			if (!shown)
				return;
			x = below ? pad : px(f.start, zs, zc);
			w = below ? avail : px(end, zs, zc) - x;
			f.rect.setAttribute("x", x);
			f.rect.setAttribute("width", w);
			f.text.setAttribute("x", x + 3);
			f.text.textContent = fit(f.name, w);
		});
		reset.style.display = zoomed ? "inline" : "none";
	}

	function zoom(f) {
		zoomed = f && f.depth > 0 ? f : null;
		draw();
	}

	// The events under the boxes that match, each counted once however
	// many matches nest above it.
	function find(term) {
		var re = null, covered = 0, end = -1, hits = [];
		if (term) {
			try {
				re = new RegExp(term);
			} catch (e) {
				re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
			}
		}
		frames.forEach(function (f) {
			var hit = re !== null && f.depth > 0 && re.test(f.name);
			f.g.classList.toggle("match", hit);
			f.rect.setAttribute("fill", hit ? hitFill : f.fill);
			if (hit)
				hits.push(f);
		});
		hits.slice().sort(function (a, b) {
			return a.start - b.start || b.count - a.count;
		}).forEach(function (f) {
			var e = f.start + f.count;
			if (e > end) {
				covered += e - Math.max(f.start, end);
				end = e;
			}
		});
		matched.textContent = re === null ? " " : "Matched: " +
			(total ? 100 * covered / total : 0).toFixed(2) + "% (" + covered + " of " +
			total + " events)";
		last = { hits: hits, covered: covered };
	}

	function listen() {
		frames.forEach(function (f) {
			f.g.addEventListener("click", function () { zoom(f); });
			f.g.addEventListener("mouseover", function () {
				details.textContent = f.title;
			});
			f.g.addEventListener("mouseout", function () {
				details.textContent = " ";
			});
		});
		reset.addEventListener("click", function () { zoom(null); });
		search.addEventListener("input", function () { find(search.value); });
		document.addEventListener("keydown", function (e) {
			if (e.key === "Escape")
				zoom(null);
		});
	}

	// #report&search=RE&zoom=NAME: do as a person would, then say what is drawn
	function report() {
		var args = {};
		location.hash.slice(1).split("&").forEach(function (kv) {
			var i = kv.indexOf("=");
			if (i > 0)
				args[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1));
			else
				args[kv] = "";
		});
		if (!("report" in args))
			return;
		if ("zoom" in args)
			frames.some(function (f) {
				if (f.name !== args.zoom)
					return false;
				f.g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
				return true;
			});
		if ("search" in args) {
			search.value = args.search;
			search.dispatchEvent(new Event("input"));
		}
		var out = {
			errors: errors, width: avail + 2 * pad, pad: pad, total: total,
			matched: matched.textContent,
			frames: frames.filter(function (f) {
				return !f.g.classList.contains("hidden");
			}).map(function (f) {
				var box = f.rect.getBoundingClientRect();
				return {
					name: f.name, kind: f.g.getAttribute("class").split(" ")[1],
					depth: f.depth, count: f.count, x: box.x, y: box.y,
					w: box.width, fill: f.rect.getAttribute("fill"),
					label: f.text.textContent, match: f.g.classList.contains("match")
				};
			})
		};
		var desc = document.createElementNS("http://www.w3.org/2000/svg", "desc");
		desc.id = "report";
		desc.textContent = JSON.stringify(out);
		svg.appendChild(desc);
	}

	try {
		collect();
		listen();
		draw();
	} catch (e) {
		errors.push(String(e.message));
	}
	report();
})();
