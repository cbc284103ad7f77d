// The "Compare machines" page: puts the headline figures of a results file the reader
// chooses beside the figures this page was built with. Nothing leaves the browser: the
// file is read with FileReader and no request is made, so the page works offline, from
// file://, and on the published site alike. Text from the file only ever becomes text
// (textContent), never markup. (The body of the wrapper is not indented, so that the
// book can show its parts as listings.)
(function () {
'use strict';
// The format and version this book writes and the verdict rule come with the figures
// this page was built with (`all-results table compare-data`). A figure's text is
// written here from its numbers, never taken from the file (a file's own `shown` text
// could say anything).

// Three significant digits, thousands separated from 1,000 up, a true minus sign: as
// the book writes numbers.
function sig3(x) {
  if (x === 0 || !isFinite(x)) { return String(x); }
  var r = Number(x.toPrecision(3));
  var a = Math.abs(r);
  var text = a >= 1000 ? Math.round(a).toLocaleString('en-US')
    : a.toFixed(Math.min(6, Math.max(0, 2 - Math.floor(Math.log10(a)))));
  return (r < 0 ? '\u2212' : '') + text;
}

// A value in its unit, scaled as the book scales it (nanoseconds to s, bytes to GiB).
function inUnit(v, unit) {
  var scale = function (steps, base) {
    var i = 0;
    while (i < steps.length - 1 && Math.abs(Number(v.toPrecision(3))) >= Math.pow(base, i + 1)) { i += 1; }
    return sig3(v / Math.pow(base, i)) + ' ' + steps[i];
  };
  if (unit === 'ns') { return scale(['ns', '\u00b5s', 'ms', 's'], 1000); }
  if (unit === 'bytes') { return scale(['B', 'KiB', 'MiB', 'GiB'], 1024); }
  if (unit === 'ops/s') { return (Math.abs(v) >= 1e6 ? sig3(v / 1e6) + ' M' : sig3(v)) + ' ops/s'; }
  return sig3(v);
}

// A figure as the book writes it: its median, then its interval.
function estimate(f) {
  return inUnit(f.median, f.unit) + ' (' + inUnit(f.lo, f.unit) + ' \u2013 ' + inUnit(f.hi, f.unit) + ')';
}

// A ratio as the book writes it: `1.23×`, `4,560×`.
function ratio(r) {
  return sig3(r) + '\u00d7';
}

// ANCHOR: rule
// The book's verdict rule for figures measured apart (two machines cannot be paired
// round by round), with its threshold, least rounds and words taken from the page's
// data (`rule`, written by the book's one verdict type): a clear difference only when
// both figures rest on enough rounds, their intervals do not overlap and their medians
// differ by more than the threshold.
function difference(a, b, rule) {
  var apart = a.hi < b.lo || b.hi < a.lo;
  if (a.rounds < rule.min_rounds || b.rounds < rule.min_rounds || !apart) {
    return rule.words.unclear;
  }
  var d = Math.abs(a.median - b.median);
  var base = Math.min(Math.abs(a.median), Math.abs(b.median));
  var relative = d === 0 ? 0 : (base === 0 ? Infinity : d / base);
  return relative > rule.threshold ? rule.words.clear : rule.words.same;
}
// ANCHOR_END: rule

function cell(row, text, header) {
  var c = document.createElement(header ? 'th' : 'td');
  c.textContent = text;
  row.appendChild(c);
}

function params(f) {
  return Object.keys(f.params).sort().map(function (k) { return k + ' = ' + f.params[k]; }).join(', ');
}

// ANCHOR: row
// One headline figure: this book's, the file's, the ratio of the medians, the verdict.
// Figures measured with other parameters are shown, not compared.
function figureRow(name, mine, theirs, rule) {
  var row = document.createElement('tr');
  cell(row, name);
  cell(row, mine ? estimate(mine) : '–');
  cell(row, theirs ? estimate(theirs) : '–');
  cell(row, mine && theirs && mine.median > 0 ? ratio(theirs.median / mine.median) : '–');
  var verdict = 'only in one';
  if (mine && theirs) {
    verdict = params(mine) !== params(theirs)
      ? 'not comparable: other parameters (' + params(mine) + ' / ' + params(theirs) + ')'
      : difference(mine, theirs, rule);
  }
  cell(row, verdict);
  return row;
}
// ANCHOR_END: row

function render(out, mine, theirs, fileName) {
  var say = function (text) {
    var p = document.createElement('p');
    p.textContent = text;
    out.appendChild(p);
  };
  out.textContent = '';
  say('This book: ' + mine.machine + ' (built ' + mine.generated_at + ').');
  say(fileName + ': ' + theirs.machine + ' (generated ' + theirs.generated_at + ').');
  var table = document.createElement('table');
  var head = document.createElement('tr');
  ['figure', 'this book', fileName, 'file ÷ book', 'difference'].forEach(function (h) {
    cell(head, h, true);
  });
  table.appendChild(head);
  // Matched by name through maps: linear in the size of the file (a name given twice
  // counts once, its first figure).
  var index = function (list) {
    var m = new Map();
    list.forEach(function (f) { if (!m.has(f.name)) { m.set(f.name, f); } });
    return m;
  };
  var inMine = index(mine.figures);
  var inTheirs = index(theirs.figures);
  var names = Array.from(inMine.keys());
  inTheirs.forEach(function (f, name) {
    if (!inMine.has(name)) { names.push(name); }
  });
  names.forEach(function (name) {
    table.appendChild(figureRow(name, inMine.get(name), inTheirs.get(name), mine.rule));
  });
  var wrap = document.createElement('div');
  wrap.className = 'table-wrapper';
  wrap.appendChild(table);
  out.appendChild(wrap);
}

// The door the book's own `all-results` reads results files through (`harness::safe`,
// `harness::validate`), applied here too: at most 64 MB, no byte-order mark, no key
// given twice, at most 64 levels of nesting; names of lower-case letters, digits and
// `-`; a unit from the known set; finite numbers, none below zero, no larger than 1e18,
// with lo <= median <= hi; a confidence between 0 and 1; whole rounds; numeric
// parameters; texts without control or format characters or `{{`; a date that is a
// date. The first thing that breaks it refuses the whole file.
var CAP = 64 * 1024 * 1024;
var UNITS = ['ns', 'bytes', 'ops/s', '1'];
var NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
var DATE = /^[A-Za-z0-9 :.+-]{1,40}$/;
// Control characters, Unicode format characters (bidirectional overrides, zero-width
// characters) and the line and paragraph separators.
var HIDDEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/;
function number(x) {
  return typeof x === 'number' && isFinite(x) && x >= 0 && x <= 1e18;
}
function badText(s) {
  return typeof s !== 'string' || s.length > 2048 || HIDDEN.test(s) || s.indexOf('{{') >= 0;
}

// Before JSON.parse, which takes the last of two equal keys and nests as deep as it is
// told: walks the text once, outside strings, counting depth and the keys of each object.
function structure(text) {
  var stack = [];
  var i = 0;
  while (i < text.length) {
    var c = text[i];
    if (c === '"') {
      var end = i + 1;
      while (end < text.length && text[end] !== '"') { end += text[end] === '\\' ? 2 : 1; }
      var top = stack[stack.length - 1];
      if (top && top.keys && top.expectKey) {
        var key = text.slice(i + 1, end);
        if (top.keys.has(key)) { return 'it gives the key "' + key.slice(0, 40) + '" twice in one object'; }
        top.keys.add(key);
        top.expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(c === '{' ? { keys: new Set(), expectKey: true } : {});
      if (stack.length > 64) { return 'it nests deeper than 64 levels'; }
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && stack.length && stack[stack.length - 1].keys) {
      stack[stack.length - 1].expectKey = true;
    }
    i += 1;
  }
  return null;
}

function problem(doc) {
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.figures)) { return 'it has no list of figures'; }
  if (typeof doc.machine !== 'string' || typeof doc.generated_at !== 'string') {
    return 'it does not say which machine made it, or when';
  }
  if (badText(doc.machine)) {
    return 'its machine line holds control or format characters, or an mdBook directive';
  }
  if (!DATE.test(doc.generated_at)) { return 'its date (generated_at) is not a date'; }
  for (var i = 0; i < doc.figures.length; i += 1) {
    var f = doc.figures[i];
    if (!f || typeof f.name !== 'string' || !NAME.test(f.name)) {
      return 'figure ' + (i + 1) + ' has no valid name';
    }
    if (UNITS.indexOf(f.unit) < 0) {
      return 'the figure ' + f.name + ' has an unknown unit';
    }
    if (!number(f.median) || !number(f.lo) || !number(f.hi)) {
      return 'the figure ' + f.name + ' has a median or interval that is not a number of zero or more';
    }
    if (!(f.lo <= f.median && f.median <= f.hi)) {
      return 'the figure ' + f.name + ' has an interval that does not hold its median';
    }
    if (typeof f.confidence !== 'number' || !(f.confidence >= 0 && f.confidence <= 1)) {
      return 'the figure ' + f.name + ' has a confidence that is not between 0 and 1';
    }
    if (!Number.isInteger(f.rounds) || f.rounds < 0) {
      return 'the figure ' + f.name + ' does not say how many rounds it rests on';
    }
    if (!f.params || typeof f.params !== 'object' || Array.isArray(f.params)) {
      return 'the figure ' + f.name + ' has no parameters object';
    }
    var keys = Object.keys(f.params);
    for (var k = 0; k < keys.length; k += 1) {
      if (!NAME.test(keys[k].replace(/_/g, '-')) || typeof f.params[keys[k]] !== 'number' || !isFinite(f.params[keys[k]])) {
        return 'the figure ' + f.name + ' has a parameter that is not a named number';
      }
    }
    if (badText(f.machine || '')) {
      return 'the figure ' + f.name + ' has a machine text with control or format characters, or an mdBook directive';
    }
  }
  return null;
}

// ANCHOR: read
// Reads the chosen file here, in the browser, and refuses another format or version.
function compareFile(file, mine, out) {
  if (file.size > CAP) {
    out.textContent = 'Cannot compare ' + file.name + ': it holds more than the 64 MB a results file of this book may hold.';
    return;
  }
  var reader = new FileReader();
  reader.onload = function () {
    try {
      // Read as bytes: reading as text would drop a byte-order mark without a word.
      var bytes = new Uint8Array(reader.result);
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        throw new Error('it starts with a byte-order mark, which JSON does not allow: save it as UTF-8 without one');
      }
      var text;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch (notUtf8) {
        throw new Error('it is not UTF-8 text, so not JSON');
      }
      var shape = structure(text);
      if (shape) { throw new Error(shape); }
      var doc = JSON.parse(text);
      if (doc.format !== mine.format) {
        throw new Error(doc.results ? 'it was written by an older version of the book; publish it again'
          : 'it is not a results file of this book');
      }
      if (doc.version !== mine.version) {
        throw new Error('it has results format ' + doc.version + ', this page reads ' + mine.version);
      }
      var why = problem(doc);
      if (why) { throw new Error(why); }
      render(out, mine, doc, file.name);
    } catch (e) {
      out.textContent = 'Cannot compare ' + file.name + ': ' + e.message + '.';
    }
  };
  reader.onerror = function () { out.textContent = 'Cannot read ' + file.name + '.'; };
  reader.readAsArrayBuffer(file);
}
// ANCHOR_END: read

var input = document.getElementById('cow-compare-file');
var built = document.getElementById('cow-built-figures');
var out = document.getElementById('cow-compare-result');
if (!input || !built || !out) {
  return; // every page loads this script; only the compare page has these
}
var mine = JSON.parse(built.textContent);
if (!mine.rule || !mine.rule.words) {
  out.textContent = 'This page was built without the verdict rule; build the book again.';
  return;
}
input.addEventListener('change', function () {
  if (input.files && input.files[0]) { compareFile(input.files[0], mine, out); }
});
}());
