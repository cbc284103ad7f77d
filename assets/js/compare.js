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
// round by round), as `verdict_with` in the harness's stats.rs words it, with its
// threshold, least rounds and words taken from the page's data (`rule`, written by
// the book's one verdict type). No verdict from too few rounds. *About the same* when
// every value either interval allows is within the threshold of every value the other
// allows; a clear difference when the intervals do not overlap and the medians differ
// by more than the threshold; anything else is unresolved.
function relativeDifference(x, y) {
  var d = Math.abs(x - y);
  if (d === 0) { return 0; }
  var base = Math.min(Math.abs(x), Math.abs(y));
  return base === 0 ? Infinity : d / base;
}
// Rounds that drifted over their session count as the independent ones they are
// worth, as `independent_rounds` in stats.rs: n(1 − ρ)/(1 + ρ), at least two.
function worth(f) {
  if (typeof f.drift !== 'number') { return f.rounds; }
  var m = Math.floor(f.rounds * (1 - f.drift) / (1 + f.drift));
  return Math.min(f.rounds, Math.max(Math.min(2, f.rounds), m));
}
function difference(a, b, rule) {
  if (worth(a) < rule.min_rounds || worth(b) < rule.min_rounds) {
    return rule.words.unclear;
  }
  if (relativeDifference(a.lo, b.hi) <= rule.threshold
    && relativeDifference(a.hi, b.lo) <= rule.threshold) {
    return rule.words.same;
  }
  var apart = a.hi < b.lo || b.hi < a.lo;
  return apart && relativeDifference(a.median, b.median) > rule.threshold
    ? rule.words.clear : rule.words.unclear;
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
  var sameUnit = mine && theirs && mine.unit === theirs.unit;
  cell(row, sameUnit && mine.median > 0 ? ratio(theirs.median / mine.median) : '–');
  var verdict = 'only in one';
  if (mine && theirs) {
    // A size is no time: figures in other units are shown, not compared.
    verdict = !sameUnit ? 'not comparable: other units (' + mine.unit + ' / ' + theirs.unit + ')'
      : params(mine) !== params(theirs)
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
// `harness::validate`), applied here too, rule for rule (one list of fixtures,
// book-tests' `HOSTILE_COMPARE_FILES`, is refused by both): at most 64 MB, no
// byte-order mark, no key given twice in any object (a key's escaped spelling is the
// same key), at most 64 levels of nesting; whole numbers where the book writes whole
// numbers; names of lower-case letters, digits and `-`, parameter names of lower-case
// letters, digits and `_`; a unit from the known set; finite numbers, none below zero,
// no larger than 1e18, with lo <= median <= hi; a confidence between 0 and 1; numeric
// parameters; in every text of the file, records included, no lone surrogate, no
// control or format character and no `{{`, read after HTML character references
// (`&#x202E;`) are decoded; in a round's data and reading names none of
// `< > [ ] { } ` & * | \`; a date that is a date. The first thing that breaks it
// refuses the whole file.
var CAP = 64 * 1024 * 1024;
var UNITS = ['ns', 'bytes', 'ops/s', '1'];
var NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
var PARAM = /^[a-z0-9_]{1,64}$/;
var DATE = /^[A-Za-z0-9 :.+-]{1,40}$/;
// Control characters and the Unicode format characters `harness::safe::is_format`
// lists (bidirectional overrides, zero-width characters, tags, the line and paragraph
// separators), the same ranges.
var HIDDEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0001}\u{e0020}-\u{e007f}]/u;
var LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/;
var NOT_IN_DATA = /[<>\[\]{}`&*|\\]/;
// The most rounds each profile's budget runs of each experiment (`chapter/experiment`),
// from the page's data (`max_rounds`, written from the chapters' own budgets): a record
// of more is refused, as the command line refuses it. Set once the data is read.
var MAX_ROUNDS = {};
// HTML character references a page would show as a character, as
// `harness::validate::decode_references` reads them.
var NAMED = {
  lt: '<', LT: '<', gt: '>', GT: '>', amp: '&', AMP: '&', quot: '"', QUOT: '"', apos: "'",
  lbrace: '{', lcub: '{', rbrace: '}', rcub: '}', lsqb: '[', lbrack: '[', rsqb: ']', rbrack: ']',
  grave: '`', ast: '*', midast: '*', verbar: '|', vert: '|', VerticalLine: '|', bsol: '\\',
  lrm: '\u200e', rlm: '\u200f', zwj: '\u200d', zwnj: '\u200c', shy: '\u00ad',
  ZeroWidthSpace: '\u200b', NegativeThinSpace: '\u200b', NegativeMediumSpace: '\u200b',
  NegativeThickSpace: '\u200b', NegativeVeryThinSpace: '\u200b', NoBreak: '\u2060',
  ApplyFunction: '\u2061', af: '\u2061', InvisibleTimes: '\u2062', it: '\u2062',
  InvisibleComma: '\u2063', ic: '\u2063', NewLine: '\n', Tab: '\t',
};
function decodeReferences(s) {
  return s.replace(/&([^;]{0,40});/g, function (whole, body) {
    if (body[0] === '#') {
      var hex = body[1] === 'x' || body[1] === 'X';
      var digits = body.slice(hex ? 2 : 1);
      if (!(hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits)) { return whole; }
      var v = parseInt(digits, hex ? 16 : 10);
      // No character (a surrogate, beyond U+10FFFF, NUL): refused as a control one.
      if (v === 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) { return '\u007f'; }
      return String.fromCodePoint(v);
    }
    return Object.prototype.hasOwnProperty.call(NAMED, body) ? NAMED[body] : whole;
  });
}
function number(x) {
  return typeof x === 'number' && isFinite(x) && x >= 0 && x <= 1e18;
}
function badText(s) {
  if (typeof s !== 'string' || s.length > 2048) { return true; }
  var d = decodeReferences(s);
  return LONE_SURROGATE.test(s) || HIDDEN.test(d) || d.indexOf('{{') >= 0;
}
// Characters, not UTF-16 units, as the command line counts them.
function chars(s) {
  return Array.from(s).length;
}
// The first text anywhere in `v` (keys too) that breaks the text rules; in a round's
// data (`data` true) also one longer than 256 characters or that holds a character
// that could start markup, and a number larger in size than 1e18.
function badTexts(v, where, data, depth) {
  if (depth > 64) { return where + ' nests deeper than 64 levels'; }
  var check = function (s) {
    if (LONE_SURROGATE.test(s) || HIDDEN.test(decodeReferences(s)) || decodeReferences(s).indexOf('{{') >= 0) {
      return where + ' holds a lone surrogate, a control or format character, or an mdBook directive';
    }
    if (data && (NOT_IN_DATA.test(s) || chars(s) > 256)) {
      return where + ' holds a character that could start markup, or a text longer than 256 characters';
    }
    return null;
  };
  if (typeof v === 'string') { return check(v); }
  if (typeof v === 'number' && data && !(Math.abs(v) <= 1e18)) { return where + ' holds a number beyond any measured value'; }
  if (!v || typeof v !== 'object') { return null; }
  var keys = Object.keys(v);
  for (var i = 0; i < keys.length; i += 1) {
    var why = (!Array.isArray(v) && check(keys[i])) || badTexts(v[keys[i]], where, data, depth + 1);
    if (why) { return why; }
  }
  return null;
}
function recordProblem(r, i) {
  var where = 'record ' + (i + 1);
  if (!r || typeof r !== 'object' || !Array.isArray(r.rounds)) { return where + ' has no rounds'; }
  if (typeof r.chapter !== 'string' || !NAME.test(r.chapter) || typeof r.experiment !== 'string' || !NAME.test(r.experiment)) {
    return where + ' has no valid name';
  }
  // The sizes `harness::validate` allows (issue 35, items 3 and 10).
  var notes = Array.isArray(r.notes) ? r.notes : [];
  var details = Array.isArray(r.details) ? r.details : [];
  if (r.profile !== 'quick' && r.profile !== 'full') { return where + ' names no profile of this book'; }
  var budget = MAX_ROUNDS[r.chapter + '/' + r.experiment];
  if (budget && r.rounds.length > budget[r.profile]) {
    return where + ' holds ' + r.rounds.length + ' rounds; the ' + r.profile + ' profile runs at most ' +
      budget[r.profile] + ' of ' + r.chapter + '/' + r.experiment + ' (its budget)';
  }
  if (r.rounds.length > 100) { return where + ' holds more than 100 rounds'; }
  if (notes.length > 16 || details.length > 16) { return where + ' carries more than 16 notes or details'; }
  var long = function (s, max) { return typeof s === 'string' && chars(s) > max; };
  if (notes.some(function (n) { return !n || long(n.text, 512); }) ||
      details.some(function (d) { return !Array.isArray(d) || long(d[0], 64) || long(d[1], 256); }) ||
      long(r.isolation, 512)) {
    return where + ' has a note, a detail or an isolation text longer than the book writes';
  }
  var seen = new Set();
  var units = new Map();
  for (var n = 0; n < r.rounds.length; n += 1) {
    var one = r.rounds[n] || {};
    if (seen.has(one.index)) { return where + ' holds a round twice'; }
    seen.add(one.index);
    var readings = Array.isArray(one.readings) ? one.readings : [];
    if (readings.length > 256) { return where + ' has a round of more than 256 readings'; }
    for (var x = 0; x < readings.length; x += 1) {
      if (!readings[x] || UNITS.indexOf(readings[x].unit) < 0 || !number(readings[x].value)) {
        return where + ' has a reading that is not a number of zero or more in a known unit';
      }
      // A reading keeps its unit in every round (a size is no time).
      var key = String(readings[x].key);
      if (units.has(key) && units.get(key) !== readings[x].unit) {
        return where + ' has a reading whose unit changes from one round to another';
      }
      units.set(key, readings[x].unit);
    }
  }
  var rest = {};
  Object.keys(r).forEach(function (k) { if (k !== 'rounds') { rest[k] = r[k]; } });
  var why = badTexts(rest, where, false, 0);
  for (var j = 0; !why && j < r.rounds.length; j += 1) {
    var round = r.rounds[j] || {};
    why = badTexts(round.noise, where, false, 0) ||
      badTexts((round.readings || []).map(function (x) { return x && x.key; }), where + ': a reading\'s name', true, 0) ||
      badTexts(round.data, where + ': a round\'s data', true, 0);
  }
  return why;
}

// The keys whose numbers the book stores as whole numbers, near the top of a file.
var WHOLE = ['rounds', 'version', 'format', 'index', 'measured_unix'];

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
        // `"m\u0065dian"` is the key `median`: compared as JSON reads them.
        try { key = JSON.parse('"' + key + '"'); } catch (notAString) { /* JSON.parse says why */ }
        if (top.keys.has(key)) { return 'it gives the key "' + key.slice(0, 40) + '" twice in one object'; }
        top.keys.add(key);
        top.expectKey = false;
        top.last = key;
      }
      i = end + 1;
      continue;
    }
    // A count the book stores as a whole number (`"rounds": 7.0` is not one).
    if (c === '-' || (c >= '0' && c <= '9')) {
      var tokenEnd = i;
      while (tokenEnd < text.length && /[-+0-9.eE]/.test(text[tokenEnd])) { tokenEnd += 1; }
      var owner = stack[stack.length - 1];
      if (owner && owner.keys && WHOLE.indexOf(owner.last) >= 0 && stack.length <= 5 &&
          !/^-?[0-9]+$/.test(text.slice(i, tokenEnd))) {
        return 'its "' + owner.last + '" is ' + text.slice(i, tokenEnd).slice(0, 40) + ', not a whole number';
      }
      i = tokenEnd;
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
    if (typeof f.chapter !== 'string' || !NAME.test(f.chapter)) {
      return 'the figure ' + f.name + ' has no valid name for its chapter';
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
    if (f.drift !== undefined && (typeof f.drift !== 'number' || !(f.drift > 0 && f.drift < 1))) {
      return 'the figure ' + f.name + ' has a drift that is not between 0 and 1';
    }
    if (!f.params || typeof f.params !== 'object' || Array.isArray(f.params)) {
      return 'the figure ' + f.name + ' has no parameters object';
    }
    var keys = Object.keys(f.params);
    for (var k = 0; k < keys.length; k += 1) {
      if (!PARAM.test(keys[k]) || typeof f.params[keys[k]] !== 'number' || !isFinite(f.params[keys[k]])) {
        return 'the figure ' + f.name + ' has a parameter that is not a named number';
      }
    }
    if (badText(f.machine || '')) {
      return 'the figure ' + f.name + ' has a machine text with control or format characters, or an mdBook directive';
    }
  }
  if (doc.records !== undefined && !Array.isArray(doc.records)) { return 'its records are not a list'; }
  var records = doc.records || [];
  for (var r = 0; r < records.length; r += 1) {
    var why = recordProblem(records[r], r);
    if (why) { return why; }
  }
  return badTexts(doc, 'a text of the file', false, 0);
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
MAX_ROUNDS = mine.max_rounds || {};
if (!mine.rule || !mine.rule.words) {
  out.textContent = 'This page was built without the verdict rule; build the book again.';
  return;
}
input.addEventListener('change', function () {
  if (input.files && input.files[0]) { compareFile(input.files[0], mine, out); }
});
}());
